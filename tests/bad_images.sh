#!/usr/bin/env bash
# bad_images.sh - ckpt against hostile images.
# usage: tests/bad_images.sh CKPT HOLDER WORKDIR [HOLDER32|IMAGE32]
#
# Checkpoints HOLDER (tests/aux/holder), checks the image restarts once, then
# feeds ckpt truncated, bit-flipped and forged images (tests/forge.py makes
# the forged ones with every checksum valid, so they reach the semantic
# checks).  For every bad image:
#   - `ckpt restart BAD` exits 125 and `ckpt info BAD` exits 1;
#   - each prints exactly one line on stderr, starting "ckpt: ";
#   - no sanitizer report;
#   - no process with the saved pid is left.
# HOLDER32, the holder built 32-bit, adds forged images of a 32-bit process;
# on a kernel that cannot run one, IMAGE32 (a file NAME.img or NAME.img.gz,
# tests/images/holder32.img.gz) stands in for its image: every 32-bit case
# runs on it but the one comparing it with this kernel's 32-bit vdso.
# BI_SHARD=K/N (1 <= K <= N) runs only every Nth case, from the Kth: the
# suite runs N shards side by side.
# Prints one line per failing case, then "bad images: N cases ok, M failed";
# exits non-zero if any case failed.  Details of every case are in
# WORKDIR/cases.log, the images and messages of failed ones in WORKDIR/failed/.
set -u

if [ $# != 3 ] && [ $# != 4 ]; then
	echo "usage: $0 CKPT HOLDER WORKDIR [HOLDER32|IMAGE32]" >&2
	exit 2
fi
SHARD=${BI_SHARD:-1/1}
SHARD_K=${SHARD%/*}
SHARD_N=${SHARD#*/}
if ! [[ $SHARD_K =~ ^[0-9]+$ && $SHARD_N =~ ^[0-9]+$ ]] || [ "$SHARD_K" -lt 1 ] ||
		[ "$SHARD_K" -gt "$SHARD_N" ]; then
	echo "$0: BI_SHARD=$SHARD: want K/N, 1 <= K <= N" >&2
	exit 2
fi
CASE=0
CKPT=$1
HOLDER=$2
W=$3
HOLDER32=${4:-}	# the holder built 32-bit: forged 32-bit images too
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=/usr/bin/python3
[ -x $PYTHON ] || PYTHON=python3
FORGE=("$PYTHON" "$HERE/forge.py")
CASE_TIMEOUT=10
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=0:exitcode=99}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1:exitcode=99}"
export ASAN_OPTIONS UBSAN_OPTIONS

# A descriptor inherited from our caller would be in the target's fd table,
# and ckpt refuses unknown kinds of files.
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

mkdir -p "$W" "$W/failed"
chmod 755 "$W"
GOOD=$W/good.img
BAD=$W/bad.img
LOG=$W/cases.log
: > "$LOG"
OK=0
FAILED=0
HPID=
PID=

# (the helpers of a case use bash builtins, not programs: about 35 forks
# a case took half the time of the 750 cases)
alive() {	# PID: a process (not a zombie) has that pid
	local st
	{ IFS= read -r st < "/proc/$1/stat"; } 2> /dev/null || return 1
	st=${st##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

slurp() {	# FILE VAR: VAR is the file's text (up to a NUL); 1 if it has a NUL
	IFS= read -r -d '' "$2" < "$1" && return 1
	return 0
}

# Until PID is no longer a live process (a zombie counts as gone), at most
# about SECONDS.
wait_dead() {	# PID SECONDS
	local i
	for ((i = 0; i < $2 * 100; i++)); do
		alive "$1" || return 0
		sleep 0.01
	done
	return 1
}

# Until /proc/PID is gone altogether (init reaps only every second or two).
wait_reaped() {	# PID SECONDS
	local i
	for ((i = 0; i < $2 * 100; i++)); do
		[ -e "/proc/$1" ] || return 0
		sleep 0.01
	done
	return 1
}

# PID is the image's own program (under load, or for a stored image, the
# pid may be someone else's)
ours() {
	local comm
	alive "$PID" && { IFS= read -r comm < "/proc/$PID/comm"; } 2> /dev/null &&
		[[ $comm == holder* ]]
}

cleanup() {
	[ -n "$HPID" ] && kill -9 "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
	[ -n "$PID" ] && ours && kill -9 "$PID" 2>/dev/null && wait_dead "$PID" 5
	return 0
}
trap cleanup EXIT

fatal() {
	echo "bad images: setup failed: $*"
	echo "bad images: 0 cases ok, 1 failed"
	exit 1
}

# ---- the good image -------------------------------------------------------

# The image of HOLDER, checkpointed with --kill; it must restart.  Sets PID.
# Starts HOLDER, sets HPID; false if it did not say READY within 30 s
# (what it was doing then is said).
start_holder() {	# HOLDER
	local i
	# (the last holder's READY gone first: the new one's shell truncates
	# the file only once it runs, and a READY read before that took the
	# shell, not yet the holder, for it: a 32-bit image without IA32)
	rm -f "$W/go" "$W/out"
	"$1" plain "$W/go" > "$W/out" 2>&1 < /dev/null &
	HPID=$!
	# a deadline in seconds, not a count of tries: under the full suite's
	# load an ASan holder took longer than 1000 tries of 10 ms to start
	for ((i = SECONDS + 30; SECONDS < i; )); do
		grep -q READY "$W/out" 2>/dev/null && return 0
		sleep 0.01
	done
	grep -q READY "$W/out" && return 0
	echo "bad images: holder $HPID not ready after 30 s: state $(awk '{ print $3 }' /proc/$HPID/stat 2>/dev/null), wchan $(cat /proc/$HPID/wchan 2>/dev/null), out '$(head -c 100 "$W/out")'"
	kill -9 $HPID 2>/dev/null
	wait $HPID 2>/dev/null
	HPID=
	return 1
}

good_image() {	# HOLDER IMAGE [CHECKPOINT-OPTION]
	local i rpid rc
	# (once, at the start of a full run, two holders of three hung a
	# minute before READY: a second one is started)
	start_holder "$1" || start_holder "$1" ||
		fatal "holder did not get ready: $(head -c 200 "$W/out")"
	exec 3>&2 2>/dev/null	# not bash's "Killed" notice of the holder
	if ! timeout -k 2 $CASE_TIMEOUT "$CKPT" checkpoint --kill ${3:-} -o "$2" "$HPID" 2> "$W/checkpoint.err"; then
		exec 2>&3 3>&-
		fatal "checkpoint of pid $HPID failed: $(head -3 "$W/checkpoint.err" | tr '\n' ' ')"
	fi
	wait "$HPID"
	exec 2>&3 3>&-
	PID=$HPID
	HPID=
	wait_dead "$PID" 3 || fatal "pid $PID still there after checkpoint --kill"
	"${FORGE[@]}" copy "$2" "$W/copy.img" && cmp -s "$2" "$W/copy.img" ||
		fatal "forge.py does not reproduce the image byte for byte"

	# It restarts (so the bad cases below fail for their own reason).
	rpid=$(timeout -k 2 20 "$CKPT" restart --detach "$2" 2> "$W/detach.err")
	rc=$?
	[ $rc = 0 ] && [ "$rpid" = "$PID" ] ||
		fatal "restart --detach of the good image: exit $rc, printed '$rpid': $(head -3 "$W/detach.err" | tr '\n' ' ')"
	touch "$W/go"	# the holder checks its memory, says PASS and exits
	for ((i = 0; i < 300; i++)); do
		grep -q '^PASS' "$W/out" && break
		sleep 0.01
	done
	if ! grep -q '^PASS' "$W/out"; then
		echo "FAIL good image: the restored holder did not PASS: $(tail -1 "$W/out")"
		FAILED=$((FAILED + 1))
	fi
	kill -9 "$PID" 2>/dev/null
	wait_dead "$PID" 5 || fatal "restored pid $PID does not go away"
	wait_reaped "$PID" 5 || echo "note: pid $PID not reaped by init after 5 s" >> "$LOG"
}
good_image "$HOLDER" "$GOOD"
# GOFILE stays: a bad image that is wrongly restored ends at once instead
# of looping until the timeout.

# ---- the check of one bad image ------------------------------------------

one_line() {	# FILE: exactly one line, starting "ckpt: ", newline-terminated
	local t
	slurp "$1" t && [[ $t == 'ckpt: '* && $t == *$'\n' && ${t%$'\n'} != *$'\n'* ]]
}

quote() {	# FILE: its first lines, on one line, shortened
	local t out= i
	slurp "$1" t
	t=${t:0:300}
	for ((i = 0; i < 3 && ${#t}; i++)); do
		out+=${out:+|}${t%%$'\n'*}
		[[ $t == *$'\n'* ]] && t=${t#*$'\n'} || t=
	done
	printf '%s' "$out"
}

sanitized() {	# FILE: a sanitizer's report in it
	local t
	slurp "$1" t
	[[ $t == *Sanitizer* || $t == *'runtime error'* ]]
}

# check NAME IMAGE [RESTART-MESSAGE-PATTERN]
# A pattern "elsewhere:PAT" marks an image that is sound but was made on
# another kind of machine: restart refuses it here, info shows it.
# mine: whether the next case is this shard's (forged ones are counted
# when forged, the others when checked)
mine() {
	CASE=$((CASE + 1))
	[ $(((CASE - 1) % SHARD_N + 1)) = "$SHARD_K" ]
}

check() {
	local name=$1 img=$2 pat=${3:-} rc irc why=() want_irc=1
	[ -n "${IN_BATCH:-}" ] || mine || return 0
	if [[ $pat == elsewhere:* ]]; then
		pat=${pat#elsewhere:}
		want_irc=0
	fi
	timeout -k 2 $CASE_TIMEOUT "$CKPT" restart "$img" > "$W/r.out" 2> "$W/r.err" < /dev/null
	rc=$?
	timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$img" > /dev/null 2> "$W/i.err" < /dev/null
	irc=$?
	# (under load the pid may be reused by someone else's process: only
	# the image's own program counts)
	if ours; then
		why+=("pid $PID exists after restart (restored!)")
		kill -9 "$PID" 2>/dev/null
		wait_dead "$PID" 5 || why+=("pid $PID cannot be killed")
		wait_reaped "$PID" 5
	fi
	case $rc in
	125) ;;
	124|137) why+=("restart hung (killed after ${CASE_TIMEOUT}s)") ;;
	*) why+=("restart exit $rc, want 125") ;;
	esac
	case $irc in
	$want_irc) ;;
	124|137) why+=("info hung (killed after ${CASE_TIMEOUT}s)") ;;
	*) why+=("info exit $irc, want $want_irc") ;;
	esac
	sanitized "$W/r.err" && why+=("restart: sanitizer report")
	sanitized "$W/i.err" && why+=("info: sanitizer report")
	one_line "$W/r.err" || why+=("restart stderr is $(wc -l < "$W/r.err") lines, want one 'ckpt: ' line")
	if [ $want_irc = 1 ]; then
		one_line "$W/i.err" || why+=("info stderr is $(wc -l < "$W/i.err") lines, want one 'ckpt: ' line")
	elif [ -s "$W/i.err" ]; then
		why+=("info complains of an image from elsewhere")
	fi
	if [ -n "$pat" ] && ! grep -q "$pat" "$W/r.err"; then
		why+=("restart message lacks '$pat'")
	fi
	{
		printf '%-32s restart=%s info=%s\n' "$name" $rc $irc
		printf '    restart: %s\n    info:    %s\n' "$(quote "$W/r.err")" "$(quote "$W/i.err")"
	} >> "$LOG"
	if [ ${#why[@]} = 0 ]; then
		OK=$((OK + 1))
		return 0
	fi
	FAILED=$((FAILED + 1))
	local msg
	msg=$(printf '%s; ' "${why[@]}")
	echo "FAIL $name: ${msg%; } -- restart: $(quote "$W/r.err") -- info: $(quote "$W/i.err")"
	local keep
	keep=$W/failed/$(echo "$name" | tr -c 'A-Za-z0-9_.#@+\n-' '_')
	cp "$img" "$keep.img" 2>/dev/null
	cp "$W/r.err" "$keep.restart.err"
	cp "$W/i.err" "$keep.info.err"
	return 1
}

# An image built for the tests themselves must be one info accepts: else
# the forged cases would not show what they claim to.
control() {	# NAME IMAGE
	if timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$2" > /dev/null 2> "$W/i.err"; then
		OK=$((OK + 1))
		echo "$1: ok" >> "$LOG"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL $1: info rejects a well-formed forged image: $(quote "$W/i.err")"
	fi
}

# ---- 1. truncation ---------------------------------------------------------

SIZE=$(stat -c %s "$GOOD")
mapfile -t RECS < <("${FORGE[@]}" list "$GOOD")	# index offset type len crc
[ ${#RECS[@]} -gt 3 ] || fatal "forge.py list found ${#RECS[@]} records"
timeout -k 2 $CASE_TIMEOUT "$CKPT" info --json "$GOOD" > "$W/good.json" 2> "$W/info.err" ||
	fatal "info of the good image: $(quote "$W/info.err")"
declare -A TRUNC=()
for off in $(grep -o '"offset": [0-9]*' "$W/good.json" | awk '{print $2}'); do
	TRUNC[$off]="record boundary"
done
read -r _ toff _ <<< "${RECS[-1]}"	# the tail: info does not list it
TRUNC[$toff]="tail boundary"
[ ${#TRUNC[@]} = ${#RECS[@]} ] ||
	fatal "info --json lists $((${#TRUNC[@]} - 1)) records, forge.py ${#RECS[@]}"
read -r _ off1 _ len1 _ <<< "${RECS[1]}"
BIG=		# the largest PAGES record: index offset len
for r in "${RECS[@]}"; do
	read -r i off type len _ <<< "$r"
	[ "$type" = PAGES ] && { [ -z "$BIG" ] || [ "$len" -gt "${BIG##* }" ]; } &&
		BIG="$i $off $len"
done
[ -n "$BIG" ] || fatal "the image has no PAGES record"
read -r big_i big_off big_len <<< "$BIG"
# its page data starts after the head, runs and pad: less than a page in
big_data=$((big_off + 24 + big_len % 4096))
TRUNC[0]="empty file"
TRUNC[1]="1 byte"
TRUNC[23]="23 bytes"
TRUNC[$((off1 + 12))]="middle of a header"
TRUNC[$((off1 + 24 + len1 / 2))]="middle of a payload"
TRUNC[$((big_data + 4096 + 100))]="inside page data"
TRUNC[$((SIZE - 1))]="one byte short"
for off in $(printf '%s\n' "${!TRUNC[@]}" | sort -n); do
	head -c "$off" "$GOOD" > "$BAD"
	check "truncated@$off (${TRUNC[$off]})" "$BAD"
done

# ---- 2. one flipped byte ---------------------------------------------------

cp "$GOOD" "$BAD"
flip_at() {	# OFFSET NAME: flip all bits of one byte, check, flip back
	local b
	mine || return 0	# (another shard's: none of the forks below)
	b=$(od -An -tu1 -j "$1" -N1 "$GOOD" | tr -d ' ')
	printf "$(printf '\\x%02x' $((b ^ 0xff)))" |
		dd of="$BAD" bs=1 seek="$1" conv=notrunc status=none
	IN_BATCH=1 check "flip@$1 ($2)" "$BAD"
	printf "$(printf '\\x%02x' $b)" |
		dd of="$BAD" bs=1 seek="$1" conv=notrunc status=none
}
for r in "${RECS[@]}"; do
	read -r i off type len _ <<< "$r"
	flip_at $((off + (i * 5) % 24)) "$type#$i header byte $(((i * 5) % 24))"
	declare -A seen=()
	for p in 0 $((len / 2)) $((len - 1)); do
		[ "$len" -gt 0 ] && [ -z "${seen[$p]:-}" ] || continue
		seen[$p]=1
		flip_at $((off + 24 + p)) "$type#$i payload byte $p"
	done
	unset seen
done
flip_at $((big_data + 2 * 4096 + 7)) "page data"
flip_at $((big_data - 1)) "PAGES byte before its data"
read -r i off type len _ <<< "${RECS[2]}"
flip_at $((off + 24 + len + (8 - len % 8) % 8)) "$type#$i trailer crc"
flip_at $((off + 24 + len + (8 - len % 8) % 8 + 5)) "$type#$i trailer reserved"
for r in "${RECS[@]}"; do	# the first record with padding
	read -r i off type len _ <<< "$r"
	if [ $((len % 8)) != 0 ]; then
		flip_at $((off + 24 + len)) "$type#$i padding"
		break
	fi
done
read -r i off type len _ <<< "${RECS[-1]}"
flip_at $((off + 24 + len)) "TAIL trailer crc"

# ---- 3. forged, with valid checksums --------------------------------------
# All are made by one `forge.py batch` (the image is parsed once), then
# checked one by one.

FNAME=()	# case name
FOUT=()		# the image forge.py writes
FPAT=()		# a pattern the restart message must hold, or "control"
mkdir -p "$W/forged"
# forged NAME [--expect PATTERN | --control] COMMAND [OPTIONS]: see forge.py
# A case's payload is hex that helpers build in command substitutions,
# each a fork (5 ms where page tables are shadowed), and every shard
# would build all of them: `forged` and the wrappers below are aliases
# that ask mine() first, so that the words of another shard's case are
# never expanded.  Inside a wrapper, forged_now.
forged_now() {
	local name=$1 pat= n=${#FNAME[@]} cmd
	shift
	case $1 in
	--expect) pat=$2; shift 2 ;;
	--control) pat=control; shift ;;
	esac
	cmd=$1
	shift
	FNAME+=("$name")
	FOUT+=("$W/forged/$n.img")
	FPAT+=("$pat")
	printf '%q ' "$cmd" "$W/forged/$n.img" "$@" >> "$W/forge.batch"
	echo >> "$W/forge.batch"
}
shopt -s expand_aliases
alias forged='mine && forged_now'
le() {	# BYTES VALUE: little-endian hex
	local h i out=
	h=$(printf "%0$(($1 * 2))x" "$2")
	for ((i = ${#h} - 2; i >= 0; i -= 2)); do
		out+=${h:i:2}
	done
	printf %s "$out"
}
zeros() { printf "%0$(($1 * 2))d" 0; }
siginfo() {	# SIGNO: a SIGPENDING entry (the thread's own queue) for it
	printf '%s' "$(zeros 8)$(le 4 "$1")$(zeros 124)"
}
: > "$W/forge.batch"

# controls: forge.py's output is accepted where nothing is wrong, so the
# cases below fail for what they change
forged "control: copy"                     --control copy
forged "control: PAGES moved (drop VMA#0)" --control drop -r 'VMA#0'
forged "control: SIGPENDING signal 10"     --control insert --at after:THREAD \
	--type SIGPENDING --payload "$(siginfo 10)"

# HEAD
forged "HEAD bad magic"            edit -r HEAD --set magic=0x00474d4954504b44
forged "HEAD major version 2"      edit -r HEAD --set major=2
forged "HEAD arch 3"               --expect "elsewhere:architecture 3" edit -r HEAD --set arch=3
# another port's image, refused by name before any of its records is read
forged "HEAD arch 2 (s390x)"       --expect "elsewhere:architecture 2 (s390x), this is x86-64" edit -r HEAD --set arch=2
forged "HEAD arch 3 (ppc64le)"     --expect "elsewhere:architecture 3 (ppc64le), this is x86-64" edit -r HEAD --set arch=3
forged "HEAD arch 9 (unknown)"     --expect "elsewhere:architecture 9 (unknown), this is x86-64" edit -r HEAD --set arch=9
forged "HEAD page_size 8192"       --expect "elsewhere:page size 8192" edit -r HEAD --set page_size=8192
forged "HEAD xfeatures bit 62"     --expect "elsewhere:CPU state components" edit -r HEAD --or xfeatures=0x4000000000000000
forged "HEAD xstate_size +64"      edit -r HEAD --add xstate_size=64
forged "HEAD nr_tasks 0"           edit -r HEAD --set nr_tasks=0
forged "HEAD nr_tasks 1000"        edit -r HEAD --set nr_tasks=1000
forged "HEAD root_pid 0"           edit -r HEAD --set root_pid=0
forged "HEAD root_pid 1"           edit -r HEAD --set root_pid=1
forged "HEAD kernel unterminated"  edit -r HEAD --offset kernel --bytes "$(printf '41%.0s' {1..65})"
forged "HEAD not first"            move -r HEAD --at 1
forged "second HEAD"               dup -r HEAD --at 2
# TASK
forged "TASK pid 0"                edit -r TASK --set pid=0
forged "TASK pid 1"                edit -r TASK --set pid=1
forged "TASK nr_threads 5"         edit -r TASK --set nr_threads=5
forged "TASK root shares memory"   edit -r TASK --set flags=0x20
forged "TASK root shares handlers" edit -r TASK --set flags=0x60
forged "TASK unknown flag 0x80"    edit -r TASK --set flags=0x80
forged "TASK comm unterminated"    edit -r TASK --offset comm --bytes "$(printf '41%.0s' {1..16})"
forged "TASK session leader in another group" --expect "bad session" \
	edit -r TASK --set sid=$PID --set pgid=$((PID + 1))
forged "two TASK records"          dup -r TASK
forged "THREAD twice"              --expect "more THREAD records" dup -r THREAD
# pids the kernel cannot give: 2^31 would be a negative pid_t
forged "TASK pid 2^31"             --expect "bad pid" edit -r TASK --set pid=0x80000000
forged "TASK sid 2^31-1"           --expect "bad pid" edit -r TASK --set sid=0x7fffffff
forged "TASK pgid past PID_MAX_LIMIT" --expect "bad pid" edit -r TASK --set pgid=0x400001
forged "TASK ppid 2^31"            --expect "bad pid" edit -r TASK --set ppid=0x80000000
forged "THREAD tid 2^31"           --expect "bad tid" edit -r THREAD --set tid=0x80000000
# a count that claims 65,536 threads costs nothing until they come
forged "TASK nr_threads 65536, one THREAD" --expect "TASK says 65536 threads" \
	edit -r TASK --set nr_threads=65536
forged "THREAD tid +1"             edit -r THREAD --add tid=1
forged "REGS before any THREAD"    move -r REGS --at after:TASK
# VMA
forged "VMA start > end"           edit -r 'VMA#0' --add start=0x2000
forged "VMA unaligned start"       edit -r 'VMA#0' --add start=0x10
forged "VMA end beyond user space" edit -r 'VMA#-1' --set end=0x800000000000
forged "VMA kind 9"                edit -r 'VMA#0' --set kind=9
forged "VMA unknown prot bit"      edit -r 'VMA#0' --or prot=0x10
forged "VMA path_len past payload" edit -r 'VMA#0' --add path_len=100
forged "VMA path unterminated"     edit -r 'VMA#0' --offset -1 --bytes 41
forged "VMA overlap (duplicate)"   dup -r 'VMA#0'
forged "VMAs out of order"         move -r 'VMA#0' --at after:'VMA#1'
# PAGES (of the largest area)
forged "PAGES nr_runs 0xffffffff"  edit -r "$big_i" --set nr_runs=0xffffffff
forged "PAGES run past its VMA"    edit -r "$big_i" --add run0.addr=0x10000000
forged "PAGES run before its VMA"  edit -r "$big_i" --add run0.addr=-0x1000
forged "PAGES npages +1"           edit -r "$big_i" --add npages=1
forged "PAGES pad_len 5000"        edit -r "$big_i" --set pad_len=5000
# A new area at 128 KiB whose one page is put at 1 MiB, outside it, where
# restart keeps its trampoline (a syscall instruction, then int3): the page
# brings the same two instructions, so the write goes unnoticed.  The
# control has the page where it belongs.
NEWVMA="$(le 8 0x20000)$(le 8 0x21000)$(zeros 8)$(le 4 3)$(le 4 2)$(le 4 1)$(zeros 20)$(le 4 1)$(zeros 5)"
newpages() {	# RUN-ADDRESS
	printf '%s' "$(le 8 0x20000)$(le 8 1)$(le 4 1)$(zeros 4)$(le 8 "$1")$(le 8 1)0f05$(printf 'cc%.0s' {1..4094})"
}
forged "control: new area at 128 KiB" --control insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES --payload "$(newpages 0x20000)"
forged "PAGES run beyond its VMA, onto 1 MiB" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES --payload "$(newpages 0x100000)"
pagesref() {	# NPAGES NR_RUNS RESERVED RUN-ADDRESS: a PAGES_REF of one run
	printf '%s' "$(le 8 0x20000)$(le 8 "$1")$(le 4 "$2")$(le 4 "$3")$(le 8 "$4")$(le 8 1)"
}
forged "PAGES_REF in a process without a parent" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_REF --payload "$(pagesref 1 1 0 0x20000)"
forged "PAGES_REF run outside its VMA" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_REF --payload "$(pagesref 1 1 0 0x100000)"
forged "PAGES_REF nr_runs past its end" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_REF --payload "$(pagesref 1 9 0 0x20000)"
forged "PAGES_REF reserved set" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_REF --payload "$(pagesref 1 1 7 0x20000)"
forged "PAGES_REF npages wrong" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_REF --payload "$(pagesref 2 1 0 0x20000)"
# incremental images' records in a whole image (tests/cases/incr.sh has
# them in a chain): PAGES_PARENT has PAGES_REF's shape
forged "PAGES_PARENT in a whole image" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_PARENT --payload "$(pagesref 1 1 0 0x20000)"
forged "PAGES_AT outside a chain" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type PAGES_AT \
	--payload "$(le 8 0x20000)$(le 8 1)$(le 4 1)$(zeros 4)$(le 8 0x20000)$(le 8 1)$(zeros 8)$(le 4 1)$(zeros 4)"
forged "PARENT in a whole image" insert --at before:MM --type PARENT \
	--payload "$(le 8 4096)$(zeros 16)$(le 4 0)$(le 4 6)" --text "a.img"
forged "HEAD says incremental, no PARENT" edit -r HEAD --or flags=0x40
forged "control: MM_TRACK after MM" --control insert --at after:MM --type MM_TRACK \
	--payload "$(le 4 4095)$(zeros 4)$(le 8 77)"
forged "MM_TRACK before MM" insert --at before:MM --type MM_TRACK \
	--payload "$(le 4 4095)$(zeros 4)$(le 8 77)"
forged "MM_TRACK reserved set" insert --at after:MM --type MM_TRACK \
	--payload "$(le 4 4095)$(le 4 1)$(le 8 77)"
forged "MM_TRACK fd past any limit" insert --at after:MM --type MM_TRACK \
	--payload "$(le 4 0x7fffffff)$(zeros 4)$(le 8 77)"
# VMA_GUARDS: the same shape as PAGES_REF
forged "control: a guard page in the new area" --control insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type VMA_GUARDS --payload "$(pagesref 1 1 0 0x20000)"
forged "VMA_GUARDS run outside its VMA" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type VMA_GUARDS --payload "$(pagesref 1 1 0 0x100000)"
forged "VMA_GUARDS reserved set" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type VMA_GUARDS --payload "$(pagesref 1 1 7 0x20000)"
forged "VMA_GUARDS npages wrong" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type VMA_GUARDS --payload "$(pagesref 2 1 0 0x20000)"
forged "VMA_GUARDS twice" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type VMA_GUARDS --payload "$(pagesref 1 1 0 0x20000)" \
	--type VMA_GUARDS --payload "$(pagesref 1 1 0 0x20000)"
# AIO: a ring of 2 pages (255 events) at 128 KiB
aio() {	# LEN NR HEAD TAIL DATA-LEN
	printf '%s' "$(le 8 0x20000)$(le 8 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "$5")$(zeros 8160)"
}
forged "AIO nr not the ring's" --expect "bad ring" insert --at before:VMA --type AIO --payload "$(aio 8192 254 0 0 8160)"
forged "AIO head past nr" --expect "bad ring" insert --at before:VMA --type AIO --payload "$(aio 8192 255 255 0 8160)"
forged "AIO tail past nr" --expect "bad ring" insert --at before:VMA --type AIO --payload "$(aio 8192 255 0 300 8160)"
forged "AIO data_len wrong" --expect "bad ring" insert --at before:VMA --type AIO --payload "$(aio 8192 255 0 0 8000)"
forged "AIO len not whole pages" --expect "bad ring" insert --at before:VMA --type AIO --payload "$(aio 8000 255 0 0 8160)"
forged "AIO ring over an area" --expect "overlaps" insert --at before:VMA \
	--type VMA --payload "$NEWVMA" --type AIO --payload "$(aio 8192 255 0 0 8160)"
# REGS
forged "REGS cs 0x10"              edit -r REGS --set cs=0x10
forged "REGS ss 0x18"              edit -r REGS --set ss=0x18
forged "REGS eflags IOPL 3"        edit -r REGS --or eflags=0x3000
forged "REGS eflags VM"            edit -r REGS --or eflags=0x20000
forged "REGS rip 0x800000000000"   edit -r REGS --set rip=0x800000000000
forged "REGS fs_base kernel"       edit -r REGS --set fs_base=0xffff800000000000
# the seed's checks: user or TLS selectors only, IF and bit 1 always set
forged "REGS gs 0x43 (GDT entry 8)" edit -r REGS --set gs=0x43
forged "REGS ds 0x7 (an LDT one)"  edit -r REGS --set ds=0x7
forged "REGS fs 0x60 (TLS, RPL 0)" edit -r REGS --set fs=0x60
forged "REGS cs 0x23 (32-bit)"     edit -r REGS --set cs=0x23
forged "REGS eflags IF clear"      edit -r REGS --add eflags=-0x200
# XSTATE
forged "XSTATE xcomp_bv nonzero"   edit -r XSTATE --set xcomp_bv=0x8000000000000001
forged "XSTATE header reserved"    edit -r XSTATE --set hdr_rsv2=1
forged "XSTATE xstate_bv bit 62"   edit -r XSTATE --or xstate_bv=0x4000000000000000
# signals, limits, timers, credentials
forged "SIGHAND flag 0x200"        edit -r SIGHAND --or sig10.flags=0x200
forged "SIGHAND flag bit 40"       edit -r SIGHAND --or sig10.flags=0x10000000000
forged "SIGPENDING signo 0"        insert --at after:THREAD --type SIGPENDING --payload "$(siginfo 0)"
forged "SIGPENDING signo 65"       insert --at after:THREAD --type SIGPENDING --payload "$(siginfo 65)"
forged "RLIMITS soft > hard"       edit -r RLIMITS --set lim0.cur=10 --set lim0.max=5
forged "ITIMERS negative value"    edit -r ITIMERS --set t0.value_ns=-1
forged "CREDS nr_groups 1e6"       edit -r CREDS --set nr_groups=1000000
forged "PROCATTR oom_score_adj 1001" edit -r PROCATTR --set oom_score_adj=1001
forged "PROCATTR oom_score_adj -1001" edit -r PROCATTR --set oom_score_adj=-1001
forged "PROCATTR dumpable 3"       edit -r PROCATTR --set dumpable=3
forged "PROCATTR thp_disable 2"    edit -r PROCATTR --set thp_disable=2
forged "PROCATTR membarrier 0x8"   edit -r PROCATTR --set membarrier=8
forged "PROCATTR reserved 1"       edit -r PROCATTR --set reserved=1
forged "PROCATTR twice"            insert --at after:PROCATTR --type PROCATTR --payload "$(zeros 24)"
forged "THREAD_ATTR pdeathsig 65"  edit -r THREAD_ATTR --set pdeathsig=65
forged "THREAD_ATTR policy 4"      edit -r THREAD_ATTR --set policy=4
forged "THREAD_ATTR flags 2"       edit -r THREAD_ATTR --set flags=2
forged "THREAD_ATTR nice 20"       edit -r THREAD_ATTR --set nice=20
forged "THREAD_ATTR nice -21"      edit -r THREAD_ATTR --set nice=-21
forged "THREAD_ATTR FIFO priority 0" edit -r THREAD_ATTR --set policy=1 --set priority=0
forged "THREAD_ATTR OTHER priority 5" edit -r THREAD_ATTR --set priority=5
forged "THREAD_ATTR deadline runtime 0" edit -r THREAD_ATTR --set policy=6 --set deadline=1000000
forged "THREAD_ATTR OTHER with a period" edit -r THREAD_ATTR --set period=1000000
forged "THREAD_ATTR robust_len 16" edit -r THREAD_ATTR --set robust_len=16
forged "THREAD_MORE ioprio class 4" edit -r THREAD_MORE --set ioprio=0x8000
forged "THREAD_MORE ioprio 1<<16"  edit -r THREAD_MORE --set ioprio=0x10000
forged "THREAD_MORE reserved 1"    edit -r THREAD_MORE --set reserved=1
forged "PROC_MORE coredump_filter 0x200" edit -r PROC_MORE --set coredump_filter=0x200
forged "PROC_MORE mdwe 4"          edit -r PROC_MORE --set mdwe=4
forged "PROC_MORE reserved 1"      edit -r PROC_MORE --set reserved=1
# (a thread that may run on every CPU has no THREAD_CPUS: one is put in)
forged "control: THREAD_CPUS CPU 0" --control insert --at after:THREAD_ATTR \
	--type THREAD_CPUS --payload "$(le 8 1)"
forged "THREAD_CPUS no CPU"        insert --at after:THREAD_ATTR --type THREAD_CPUS \
	--payload "$(zeros 8)"
forged "THREAD_CPUS 4 bytes"       insert --at after:THREAD_ATTR --type THREAD_CPUS \
	--payload "$(le 4 1)"
forged "THREAD_CPUS 8200 bytes"    insert --at after:THREAD_ATTR --type THREAD_CPUS \
	--payload "$(le 8 1)$(zeros 8192)"
forged "THREAD_CPUS twice"         insert --at after:THREAD_ATTR --type THREAD_CPUS \
	--payload "$(le 8 1)" --type THREAD_CPUS --payload "$(le 8 1)"
forged "THREAD_ATTR before THREAD" insert --at after:TASK --type THREAD_ATTR --payload "$(zeros 56)$(le 8 24)"
forged "THREAD_ATTR twice"         insert --at after:THREAD_ATTR --type THREAD_ATTR --payload "$(zeros 56)$(le 8 24)"
# seccomp (inserted after the THREAD: the holder has none).  A filter
# record: ID PARENT FLAGS NR-INSNS PROGRAM-HEX; an instruction: CODE K.
insn() { printf '%s' "$(le 2 "$1")0000$(le 4 "$2")"; }
ALLOW=$(insn 6 0x7fff0000)	# BPF_RET|BPF_K SECCOMP_RET_ALLOW
scf() { printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$5"; }
scm() { printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "${4:-0}")"; }	# MODE FILTER NNP [RESERVED]
sc_case() {	# NAME [--control] FILTER-PAYLOAD SECCOMP-PAYLOAD
	local name=$1 ctl=
	shift
	[ "$1" = --control ] && { ctl=--control; shift; }
	forged_now "$name" $ctl insert --at after:THREAD --type SECCOMP_FILTER --payload "$1" \
		--type SECCOMP --payload "$2"
}
alias sc_case='mine && sc_case'
sc_case "control: SECCOMP filter"   --control "$(scf 1 0 2 1 "$ALLOW")" "$(scm 2 1 1)"
sc_case "control: SECCOMP strict"   --control "$(scf 1 0 0 1 "$ALLOW")" "$(scm 1 0 0)"
sc_case "SECCOMP_FILTER 0 insns"    "$(scf 1 0 0 0 "")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER 4097 insns" "$(scf 1 0 0 4097 "$ALLOW")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER length"     "$(scf 1 0 0 1 "$ALLOW$ALLOW")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER id 2 first" "$(scf 2 0 0 1 "$ALLOW")" "$(scm 2 2 0)"
sc_case "SECCOMP_FILTER parent 1 of 1" "$(scf 1 1 0 1 "$ALLOW")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER flag NEW_LISTENER" "$(scf 1 0 8 1 "$ALLOW")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER ret USER_NOTIF" "$(scf 1 0 0 1 "$(insn 6 0x7fc00000)")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER ret TRACE"  "$(scf 1 0 0 1 "$(insn 6 0x7ff00000)")" "$(scm 2 1 0)"
sc_case "SECCOMP_FILTER ret A"      "$(scf 1 0 0 1 "$(insn 0x16 0)")" "$(scm 2 1 0)"
sc_case "SECCOMP mode 3"            "$(scf 1 0 0 1 "$ALLOW")" "$(scm 3 1 0)"
sc_case "SECCOMP mode 0, nothing"   "$(scf 1 0 0 1 "$ALLOW")" "$(scm 0 0 0)"
sc_case "SECCOMP filter of none"    "$(scf 1 0 0 1 "$ALLOW")" "$(scm 2 7 0)"
sc_case "SECCOMP filter mode, no filter" "$(scf 1 0 0 1 "$ALLOW")" "$(scm 2 0 0)"
sc_case "SECCOMP strict with a filter" "$(scf 1 0 0 1 "$ALLOW")" "$(scm 1 1 0)"
sc_case "SECCOMP no_new_privs 2"    "$(scf 1 0 0 1 "$ALLOW")" "$(scm 2 1 2)"
sc_case "SECCOMP reserved 1"        "$(scf 1 0 0 1 "$ALLOW")" "$(scm 2 1 0 1)"
forged "SECCOMP twice" insert --at after:THREAD --type SECCOMP_FILTER --payload "$(scf 1 0 0 1 "$ALLOW")" \
	--type SECCOMP --payload "$(scm 2 1 0)" --type SECCOMP --payload "$(scm 2 1 0)"
forged "SECCOMP before any THREAD" insert --at before:THREAD --type SECCOMP_FILTER \
	--payload "$(scf 1 0 0 1 "$ALLOW")" --type SECCOMP --payload "$(scm 2 1 0)"
forged "SECCOMP_FILTER only 8 bytes" insert --at after:THREAD --type SECCOMP_FILTER \
	--payload "$(le 4 1)$(le 4 0)"
# nine filters of 4096 instructions: more than the kernel's 32768 a chain
BIGPROG=$(for ((i = 0; i < 4096; i++)); do printf '%s' "$ALLOW"; done)
BIGCHAIN=()
for ((i = 1; i <= 9; i++)); do
	BIGCHAIN+=(--type SECCOMP_FILTER --payload "$(scf $i $((i - 1)) 0 4096 "$BIGPROG")")
done
forged "SECCOMP_FILTER chain too long" insert --at after:THREAD "${BIGCHAIN[@]}" \
	--type SECCOMP --payload "$(scm 2 9 0)"
# files
forged "FILE kind 99"              edit -r FILE --set kind=99
forged "FILE extra_len past end"    edit -r FILE --set extra_len=64
forged "FILE extra_len huge"        edit -r FILE --set extra_len=0xfffffff0
# state past one record's room follows in FILE_MORE records, and only
# there: a FILE of 16 MiB of eventfd state (id 999, path "x") after the last
bigfile() {	# IN-RECORD-BYTES
	printf '%s' "$(le 4 999)$(le 4 9)$(zeros 40)$(le 4 2)$(le 4 0x1000000)7800"
	[ "$1" = 0 ] || zeros "$1"
}
forged "FILE_MORE after a whole FILE" --expect "bad FILE_MORE" insert --at after:FILE --type FILE_MORE --payload 00
forged "FILE of 16 MiB, 16 bytes of it" --expect "16 of its 16777216 bytes" \
	insert --at after:'FILE#-1' --type FILE --payload "$(bigfile 0)" --type FILE_MORE --payload "$(zeros 16)"
forged "FILE of 16 MiB, no FILE_MORE" --expect "0 of its 16777216 bytes" \
	insert --at after:'FILE#-1' --type FILE --payload "$(bigfile 0)"
forged "FILE_MORE empty" --expect "bad FILE_MORE" \
	insert --at after:'FILE#-1' --type FILE --payload "$(bigfile 0)" --type FILE_MORE
forged "FILE of 16 MiB with 16 bytes in the record" --expect "bad FILE record" \
	insert --at after:'FILE#-1' --type FILE --payload "$(bigfile 16)"
# terminals: a TTY record (its fields in order, see ttyrec) before the
# first FILE, and a FILE made a tty description of it (8 extra bytes)
ttyrec() {	# ID KIND FLAGS SID FG_PGRP LFLAG ISPEED LINE RESERVED
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(zeros 4)$(le 4 "$3")$(le 4 "$4")$(le 4 "$5")$(zeros 12)$(le 4 "$6")$(le 4 "$7")$(zeros 4)$(zeros 32)$(le 1 "$8")$(zeros 11)$(le 4 "$9")"
}
forged "control: an unused pty"    --control insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 3 0 0 0x8a3b 15 0 0)"
forged "TTY kind 6"                insert --at before:FILE --type TTY --payload "$(ttyrec 99 6 0 0 0 0 0 0 0)"
forged "TTY console, no session"   insert --at before:FILE --type TTY --payload "$(ttyrec 99 5 0 0 0 0 0 0 0)"
forged "TTY console in packet mode" insert --at before:FILE --type TTY --payload "$(ttyrec 99 5 1 4000000 0 0 0 0 0)"
forged "TTY console, session of no process" insert --at before:FILE --type TTY --payload "$(ttyrec 99 5 0 4000000 0 0 0 0 0)"
forged "TTY terminal by path, no session" insert --at before:FILE --type TTY --payload "$(ttyrec 99 4 0 0 0 0 0 0 0)"
# since slave owners: 16 more bytes (slave_uid, slave_gid, slave_mode, reserved2)
forged "control: a pty with its slave's owner" --control insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 4 0 0 0 0 0 0)$(le 4 13333)$(le 4 44444)$(le 4 0620)$(zeros 4)"
forged "TTY slave mode 010000"     insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 4 0 0 0 0 0 0)$(zeros 8)$(le 4 0x1000)$(zeros 4)"
forged "TTY slave owner, no flag"  insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 0 0)$(le 4 5)$(zeros 12)"
forged "TTY reserved2 1"           insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 4 0 0 0 0 0 0)$(zeros 12)$(le 4 1)"
forged "TTY 100 bytes"             insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 0 0)$(zeros 4)"
forged "TTY hung up with flags"    insert --at before:FILE --type TTY --payload "$(ttyrec 99 3 1 0 0 0 0 0 0)"
forged "TTY id 0"                  insert --at before:FILE --type TTY --payload "$(ttyrec 0 1 0 0 0 0 0 0 0)"
forged "TTY flags 0x4"             insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 4 0 0 0 0 0 0)"
forged "TTY reserved 1"            insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 0 1)"
forged "TTY line discipline 2"     insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 2 0)"
forged "TTY lflag 0x20000"         insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0x20000 0 0 0)"
forged "TTY ispeed 0x2000"         insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0x2000 0 0)"
forged "TTY foreground, no session" insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 7 0 0 0 0)"
forged "TTY session of no process" insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 4000000 0 0 0 0 0)"
forged "TTY job with flags"        insert --at before:FILE --type TTY --payload "$(ttyrec 99 2 1 0 0 0 0 0 0)"
forged "TTY twice"                 insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 0 0)" --type TTY --payload "$(ttyrec 99 1 0 0 0 0 0 0 0)"
forged "TTY job, no --shell-job" --expect "elsewhere:shell-job" insert --at before:FILE --type TTY --payload "$(ttyrec 99 2 0 0 0 0 0 0 0)"
# bytes queued in a pty: TTY_DATA records after the TTY (see tdata)
tdata() {	# ID DIR LEN PARTIAL BYTES
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")"
	[ "$5" = 0 ] || zeros "$5"
}
RAWPTY="--type TTY --payload $(ttyrec 99 1 0 0 0 0 15 0 0)"
forged "control: a pty with queued bytes" --control insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 3 0 3)" --type TTY_DATA --payload "$(tdata 99 2 2 0 2)"
forged "TTY_DATA of another TTY"    insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 98 1 3 0 3)"
forged "TTY_DATA with no TTY"       insert --at before:FILE --type TTY_DATA --payload "$(tdata 99 1 3 0 3)"
forged "TTY_DATA short"             insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(le 4 99)$(le 4 1)"
forged "TTY_DATA dir 0"             insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 0 3 0 3)"
forged "TTY_DATA dir 3"             insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 3 3 0 3)"
forged "TTY_DATA len 0"             insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 0 0 0)"
forged "TTY_DATA len past its end"  insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 4 0 3)"
forged "TTY_DATA len short of end"  insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 2 0 3)"
forged "TTY_DATA len 2^32-1"        insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 0xffffffff 0 3)"
CANONPTY="--type TTY --payload $(ttyrec 99 1 0 0 0 2 15 0 0)"
tinput() {	# LEN PARTIAL HEX: an input TTY_DATA of TTY 99 with these bytes
	printf '%s%s' "$(le 4 99)$(le 4 2)$(le 4 "$1")$(le 4 "$2")" "$3"
}
forged "control: a canonical pty with a line being typed" --control insert --at before:FILE $CANONPTY --type TTY_DATA --payload "$(tinput 3 1 610a62)"
forged "TTY_DATA lines not ended"   insert --at before:FILE $CANONPTY --type TTY_DATA --payload "$(tinput 3 1 616262)"
forged "TTY_DATA newline being typed" insert --at before:FILE $CANONPTY --type TTY_DATA --payload "$(tinput 3 2 610a0a)"
forged "TTY_DATA partial output"    insert --at before:FILE $CANONPTY --type TTY_DATA --payload "$(tdata 99 1 3 1 3)"
forged "TTY_DATA partial > len"     insert --at before:FILE $CANONPTY --type TTY_DATA --payload "$(tdata 99 2 3 4 3)"
forged "TTY_DATA partial, raw pty"  insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 2 3 1 3)"
forged "TTY_DATA input of 4096"     insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 2 4096 0 4096)"
forged "TTY_DATA output of 68 KiB+1" insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 69633 0 69633)"
forged "TTY_DATA input, packet mode" insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 1 0 0 0 15 0 0)" --type TTY_DATA --payload "$(tdata 99 2 3 0 3)"
forged "TTY_DATA twice one way"     insert --at before:FILE $RAWPTY --type TTY_DATA --payload "$(tdata 99 1 3 0 3)" --type TTY_DATA --payload "$(tdata 99 1 3 0 3)"
forged "TTY_DATA output, packet mode" insert --at before:FILE --type TTY --payload "$(ttyrec 99 1 1 0 0 0 15 0 0)" --type TTY_DATA --payload "$(tdata 99 1 3 0 3)"
forged "TTY_DATA of the job's tty"  insert --at before:FILE --type TTY --payload "$(ttyrec 99 2 0 0 0 0 0 0 0)" --type TTY_DATA --payload "$(tdata 99 1 3 0 3)"
for r in "${RECS[@]}"; do	# the first FILE
	read -r _ _ type flen _ <<< "$r"
	[ "$type" = FILE ] && break
done
forged "FILE tty without its extra" edit -r FILE --set kind=14
forged "FILE tty of no TTY"        edit -r FILE --set kind=14 --set extra_len=8 --resize $((flen + 8))
forged "FD of a missing file id"   edit -r FD --set file_id=99
# epoll and inotify state (a FILE of that kind, no fd: loaded and checked
# all the same).  hex of a string and its NUL:
strhex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; printf 00; }
kindfile() {	# ID KIND PATH EXTRA-HEX: a FILE payload
	local p; p=$(strhex "$3")
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 2)$(zeros 36)$(le 4 $((${#p} / 2)))$(le 4 $((${#4} / 2)))$p$4"
}
epfile() {	# EXTRA-HEX
	kindfile 1000 13 'anon_inode:[eventpoll]' "$1"
}
epreg() {	# FILE-ID TFD EVENTS [RESERVED]: one registration
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "${4:-0}")$(le 8 0x1234)"
}
infile() {	# EXTRA-HEX
	kindfile 1000 12 'anon_inode:inotify' "$1"
}
inwatch() {	# WD MASK PATH [PATH_LEN]: one watch
	local p; p=$(strhex "$3")
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 8 2)$(le 4 0)$(le 4 "${4:-$((${#p} / 2))}")$p"
}
epcase() { forged_now "$1" --expect epoll insert --at after:'FILE#-1' --type FILE --payload "$(epfile "$2")"; }
alias epcase='mine && epcase'
incase() { forged_now "$1" --expect inotify insert --at after:'FILE#-1' --type FILE --payload "$(infile "$2")"; }
alias incase='mine && incase'
forged "control: an epoll" --control insert --at after:'FILE#-1' --type FILE \
	--payload "$(epfile "$(le 4 2)$(zeros 4)$(epreg 1 0 1)$(epreg 1 7 0x80000005)")"
forged "control: an inotify" --control insert --at after:'FILE#-1' --type FILE \
	--payload "$(infile "$(le 4 2)$(zeros 4)$(inwatch 1 4 /)$(inwatch 9 0x400 /tmp)")"
epcase "epoll state 4 bytes"            "$(le 4 0)"
epcase "epoll count 2^28"               "$(le 4 0x10000000)$(zeros 4)$(epreg 1 0 1)"
epcase "epoll count 2, one there"       "$(le 4 2)$(zeros 4)$(epreg 1 0 1)"
epcase "epoll header reserved"          "$(le 4 1)$(le 4 1)$(epreg 1 0 1)"
epcase "epoll target id missing"        "$(le 4 1)$(zeros 4)$(epreg 999 0 1)"
epcase "epoll target itself"            "$(le 4 1)$(zeros 4)$(epreg 1000 0 1)"
epcase "epoll target id 0"              "$(le 4 1)$(zeros 4)$(epreg 0 0 1)"
epcase "epoll tfd 2^30"                 "$(le 4 1)$(zeros 4)$(epreg 1 0x40000000 1)"
epcase "epoll events bit 20"            "$(le 4 1)$(zeros 4)$(epreg 1 0 0x100001)"
epcase "epoll registration reserved"    "$(le 4 1)$(zeros 4)$(epreg 1 0 1 7)"
incase "inotify state 4 bytes"          "$(le 4 0)"
incase "inotify count 2^32-1"           "$(le 4 0xffffffff)$(zeros 4)$(inwatch 1 4 /)"
incase "inotify count 2, one there"     "$(le 4 2)$(zeros 4)$(inwatch 1 4 /)"
incase "inotify wd 0"                   "$(le 4 1)$(zeros 4)$(inwatch 0 4 /)"
incase "inotify wd -5"                  "$(le 4 1)$(zeros 4)$(inwatch 0xfffffffb 4 /)"
incase "inotify wd 2^30"                "$(le 4 1)$(zeros 4)$(inwatch 0x40000000 4 /)"
incase "inotify wds decreasing"         "$(le 4 2)$(zeros 4)$(inwatch 5 4 /)$(inwatch 3 4 /tmp)"
incase "inotify wd repeated"            "$(le 4 2)$(zeros 4)$(inwatch 5 4 /)$(inwatch 5 4 /tmp)"
incase "inotify mask 0"                 "$(le 4 1)$(zeros 4)$(inwatch 1 0 /)"
incase "inotify mask IN_MASK_CREATE"    "$(le 4 1)$(zeros 4)$(inwatch 1 0x10000004 /)"
incase "inotify path_len past end"      "$(le 4 1)$(zeros 4)$(inwatch 1 4 / 100)"
incase "inotify path_len 2^32-1"        "$(le 4 1)$(zeros 4)$(inwatch 1 4 / 0xffffffff)"
incase "inotify path relative"          "$(le 4 1)$(zeros 4)$(inwatch 1 4 etc)"
incase "inotify path NUL inside"        "$(le 4 1)$(zeros 4)$(inwatch 1 4 /e 5)7400"
incase "inotify bytes after watches"    "$(le 4 1)$(zeros 4)$(inwatch 1 4 /)0000"
# pidfds, fanotify groups and namespace fds, likewise
kfile() {	# ID KIND FLAGS PATH EXTRA-HEX: a FILE payload
	local p; p=$(strhex "$4")
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(zeros 36)$(le 4 $((${#p} / 2)))$(le 4 $((${#5} / 2)))$p$5"
}
pdcase() {	# NAME PID DEAD_WITH [FLAGS]
	forged_now "$1" --expect pidfd insert --at after:'FILE#-1' --type FILE \
		--payload "$(kfile 1000 17 "${4:-2}" 'anon_inode:[pidfd]' "$(le 4 "$2")$(le 4 "$3")")"
}
alias pdcase='mine && pdcase'
fafile() {	# EXTRA-HEX [FLAGS]
	kfile 1000 18 "${2:-2}" 'anon_inode:[fanotify]' "$1"
}
famark() {	# TYPE MFLAGS MASK IGNORED PATH [PATH_LEN [RESERVED]]: one mark
	local p; p=$(strhex "$5")
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "${6:-$((${#p} / 2))}")$(le 4 "${7:-0}")$p"
}
facase() { forged_now "$1" --expect fanotify insert --at after:'FILE#-1' --type FILE --payload "$(fafile "$2" "${3:-2}")"; }
alias facase='mine && facase'
nscase() {	# NAME PID NAME-HEX [FLAGS [RESERVED]]
	forged_now "$1" --expect namespace insert --at after:'FILE#-1' --type FILE \
		--payload "$(kfile 1000 19 "${4:-0}" 'net:[1]' "$(le 4 "$2")$(le 4 "${5:-0}")$3")"
}
alias nscase='mine && nscase'
NSNET=$(strhex net)$(zeros 20)
forged "control: a dead pidfd" --control insert --at after:'FILE#-1' --type FILE \
	--payload "$(kfile 1000 17 2 'anon_inode:[pidfd]' "$(le 4 0xffffffff)$(le 4 0)")"
pdcase "pidfd pid 0"                    0 0
pdcase "pidfd pid -2"                   0xfffffffe 0
pdcase "pidfd pid 2^23"                 0x800000 0
pdcase "pidfd live, dead_with set"      5 1
pdcase "pidfd dead with a later FILE"   0xffffffff 2000
pdcase "pidfd dead with itself"         0xffffffff 1000
pdcase "pidfd dead with no pidfd"       0xffffffff 1
pdcase "pidfd flags O_RDONLY"           0xffffffff 0 0
pdcase "pidfd flags O_APPEND"           0xffffffff 0 0x402
forged "pidfd state 4 bytes" --expect pidfd insert --at after:'FILE#-1' --type FILE \
	--payload "$(kfile 1000 17 2 'anon_inode:[pidfd]' "$(le 4 0xffffffff)")"
forged "control: a fanotify group" --control insert --at after:'FILE#-1' --type FILE \
	--payload "$(fafile "$(le 4 2)$(le 4 0x8000)$(le 4 2)$(zeros 4)$(famark 2 0 8 0 /)$(famark 1 0x40 0x20 1 /tmp)")"
facase "fanotify state 8 bytes"         "$(le 4 0)$(le 4 0)"
facase "fanotify reserved"              "$(le 4 0)$(le 4 0)$(le 4 0)$(le 4 1)"
facase "fanotify count 2, one there"    "$(le 4 0)$(le 4 0)$(le 4 2)$(zeros 4)$(famark 2 0 8 0 /)"
facase "fanotify count 2^20"            "$(le 4 0)$(le 4 0)$(le 4 0x100000)$(zeros 4)$(famark 2 0 8 0 /)"
facase "fanotify init flags 2^16"       "$(le 4 0x10000)$(le 4 0)$(le 4 0)$(zeros 4)"
facase "fanotify event flags O_CREAT"   "$(le 4 0)$(le 4 0100)$(le 4 0)$(zeros 4)"
facase "fanotify file flags O_APPEND"   "$(le 4 0)$(le 4 0)$(le 4 0)$(zeros 4)" 0x402
facase "fanotify mark type 0"           "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 0 0 8 0 /)"
facase "fanotify mark type 4"           "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 4 0 8 0 /)"
facase "fanotify mark flags 0x1"        "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 1 8 0 /)"
facase "fanotify mark masks 0"          "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 0 0 /)"
facase "fanotify mark reserved"         "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 / 2 1)"
facase "fanotify path_len past end"     "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 / 100)"
facase "fanotify path_len 2^32-1"       "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 / 0xffffffff)"
facase "fanotify path relative"         "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 etc)"
facase "fanotify path NUL inside"       "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 /e 5)7400"
facase "fanotify bytes after marks"     "$(le 4 0)$(le 4 0)$(le 4 1)$(zeros 4)$(famark 2 0 8 0 /)0000"
forged "control: a namespace fd" --control insert --at after:'FILE#-1' --type FILE \
	--payload "$(kfile 1000 19 0 'net:[1]' "$(le 4 0)$(le 4 0)$NSNET")"
nscase "namespace fd pid -1"            0xffffffff "$NSNET"
nscase "namespace fd pid 2^23"          0x800000 "$NSNET"
nscase "namespace fd reserved"          0 "$NSNET" 0 1
nscase "namespace fd name bogus"        0 "$(strhex bogus)$(zeros 18)"
nscase "namespace fd name unended"      0 "$(printf '61%.0s' $(seq 24))"
nscase "namespace fd name short"        0 "$(strhex net)"
nscase "namespace fd flags O_RDWR"      0 "$NSNET" 2
forged "FD number repeated"        edit -r 'FD#-1' --set fd=0
forged "FD numbers out of order"   move -r FD --at after:'FD#-1'
# files with no name: a FILE_OBJ (memfd 77, 10 bytes, 0600, named "x")
# and its FILE_DATA (one run: 5 bytes at 0), inserted before the FILEs
fobj() {	# ID KIND SIZE MODE SEALS NAME-HEX [RESERVED]
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 8 "$3")$(le 4 "$4")$(zeros 8)$(le 4 "$5")$(le 4 $((${#6} / 2)))$(le 4 "${7:-0}")$6"
}
fdata() {	# ID BYTES OFF LEN [DATA-HEX]
	printf '%s' "$(le 8 "$1")$(le 8 "$2")$(le 4 1)$(zeros 4)$(le 8 "$3")$(le 8 "$4")${5:-68656c6c6f}"
}
OBJ=$(fobj 77 8 10 0x8180 0 7800)
forged "control: FILE_OBJ, FILE_DATA" --control insert --at before:FILE \
	--type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 5 0 5)"
forged "control: FILE_OBJ deleted, no data" --control insert --at before:FILE \
	--type FILE_OBJ --payload "$(fobj 77 7 10 0x8180 0 2f746d702f7800)"
forged "FILE_OBJ kind 1 (reg)" --expect "bad kind" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 1 10 0x8180 0 7800)"
forged "FILE_OBJ kind 99" --expect "bad kind" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 99 10 0x8180 0 7800)"
forged "FILE_OBJ id 0" --expect "bad or repeated id" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 0 8 10 0x8180 0 7800)"
forged "FILE_OBJ id twice" --expect "bad or repeated id" insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_OBJ --payload "$OBJ"
forged "FILE_OBJ mode directory" --expect "bad mode" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x41c0 0 7800)"
forged "FILE_OBJ mode bit 0x10000" --expect "bad mode" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x18180 0 7800)"
forged "FILE_OBJ unknown seal 0x40" --expect "bad seals" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x8180 0x40 7800)"
forged "FILE_OBJ seals on a deleted file" --expect "bad seals" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 7 10 0x8180 8 2f7800)"
forged "FILE_OBJ deleted, relative path" --expect "bad name" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 7 10 0x8180 0 7800)"
forged "FILE_OBJ size 2^60" --expect "bad mode or size" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 0x1000000000000000 0x8180 0 7800)"
forged "FILE_OBJ shmem flag on a memfd" --expect "bad flags" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x8180 0 7800 1)"
forged "FILE_OBJ flags 2" --expect "bad flags" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 7 10 0x8180 0 2f746d702f7800 2)"
forged "control: FILE_OBJ shared memory" --control insert --at before:FILE \
	--type FILE_OBJ --payload "$(fobj 77 7 10 0x81ff 0 2f6465762f7a65726f00 1)"
forged "FILE_OBJ name unterminated" --expect "bad name" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x8180 0 7878)"
forged "FILE_OBJ memfd name 250 bytes" --expect "bad name" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x8180 0 "$(printf '78%.0s' {1..250})00")"
forged "FILE_OBJ payload 39 bytes" insert --at before:FILE --type FILE_OBJ --payload "$(fobj 77 8 10 0x8180 0 7800 | head -c 78)"
forged "FILE_DATA past the size" --expect "outside the file" insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 5 8 5)"
forged "FILE_DATA run length 0"    insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 0 0 0 '')"
forged "FILE_DATA run wraps" --expect "outside the file" insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 5 0xfffffffffffffffe 5)"
forged "FILE_DATA bytes 6"         insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 6 0 5)"
forged "FILE_DATA one byte short"  insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 5 0 5 68656c6c)"
forged "FILE_DATA of another id"   insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 78 5 0 5)"
forged "FILE_DATA without FILE_OBJ" insert --at before:FILE --type FILE_DATA --payload "$(fdata 77 5 0 5)"
forged "FILE_DATA twice"           insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(fdata 77 5 0 5)" --type FILE_DATA --payload "$(fdata 77 5 0 5)"
forged "FILE_DATA nr_runs 2^32-1"  insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(le 8 77)$(le 8 5)$(le 4 0xffffffff)$(zeros 4)$(zeros 16)68656c6c6f"
forged "FILE_DATA pad_len 5000"    insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(le 8 77)$(le 8 5)$(le 4 1)$(le 4 5000)$(zeros 16)68656c6c6f"
forged "FILE_DATA 23 bytes"        insert --at before:FILE --type FILE_OBJ --payload "$OBJ" --type FILE_DATA --payload "$(zeros 23)"
forged "FILE memfd of no FILE_OBJ" --expect "no FILE_OBJ 77" edit -r FILE --set kind=8 --set rdev=77
forged "VMA noname of no FILE_OBJ" edit -r 'VMA#0' --set kind=5 --set reserved=77
# SysV shared memory: a SYSV_SHM (segment 77, shmid 31000, 4096 bytes,
# marked for deletion) and its SYSV_DATA, and an area attaching it at
# 192 KiB, inserted before the first VMA
sysvshm() {	# ID SHMID SIZE MODE FLAGS [RESERVED]
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(zeros 4)$(le 4 "$4")$(le 8 "$3")$(zeros 16)$(le 4 "$5")$(le 4 "${6:-0}")"
}
sysvvma() {	# START END PGOFF FLAGS SHM-ID [PATH-HEX]
	local path=${6:-2f5359535630303030303030303000}
	printf '%s' "$(le 8 "$1")$(le 8 "$2")$(le 8 "$3")$(le 4 3)$(le 4 "$4")$(le 4 6)$(le 4 0x100)$(zeros 16)$(le 4 $((${#path} / 2)))$(le 4 "$5")$path"
}
SHM=$(sysvshm 77 31000 4096 0600 1)
SVMA=$(sysvvma 0x30000 0x31000 0 1 77)
forged "control: SYSV_SHM, SYSV_DATA, area" --control insert --at before:VMA \
	--type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 5 0 5)" --type VMA --payload "$SVMA"
forged "SYSV_SHM id 0" --expect "bad id"             insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 0 31000 4096 0600 1)"
forged "SYSV_SHM reserved 1" --expect "bad id"       insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 31000 4096 0600 1 1)"
forged "SYSV_SHM twice" --expect "saved twice"       insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_SHM --payload "$SHM"
forged "SYSV_SHM shmid twice" --expect "saved twice" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_SHM --payload "$(sysvshm 78 31000 4096 0600 1)"
forged "SYSV_SHM shmid -1" --expect "bad shmid"      insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 0xffffffff 4096 0600 1)"
forged "SYSV_SHM size 0" --expect "bad size"         insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 31000 0 0600 1)"
forged "SYSV_SHM size 2^60" --expect "bad size"      insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 31000 0x1000000000000000 0600 1)"
forged "SYSV_SHM mode 01600" --expect "bad mode"     insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 31000 4096 01600 1)"
forged "SYSV_SHM flags 4" --expect "bad flags"       insert --at before:VMA --type SYSV_SHM --payload "$(sysvshm 77 31000 4096 0600 4)"
forged "SYSV_SHM 47 bytes" --expect "need at least"  insert --at before:VMA --type SYSV_SHM --payload "${SHM:0:94}"
forged "SYSV_SHM 52 bytes" --expect "bad length"     insert --at before:VMA --type SYSV_SHM --payload "${SHM}00000000"
forged "SYSV_DATA past the size" --expect "outside the segment" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 5 4092 5)"
forged "SYSV_DATA run wraps" --expect "outside the segment" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 5 0xfffffffffffffffe 5)"
forged "SYSV_DATA run length 0"    insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 0 0 0 '')"
forged "SYSV_DATA bytes 6" --expect "sizes do not add up" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 6 0 5)"
forged "SYSV_DATA one byte short"  insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 5 0 5 68656c6c)"
forged "SYSV_DATA of another id" --expect "does not follow" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 78 5 0 5)"
forged "SYSV_DATA without SYSV_SHM" --expect "does not follow" insert --at before:VMA --type SYSV_DATA --payload "$(fdata 77 5 0 5)"
forged "SYSV_DATA twice" --expect "does not follow" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(fdata 77 5 0 5)" --type SYSV_DATA --payload "$(fdata 77 5 0 5)"
forged "SYSV_DATA pad_len 5000" --expect "bad header" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(le 8 77)$(le 8 5)$(le 4 1)$(le 4 5000)$(zeros 16)68656c6c6f"
forged "SYSV_DATA nr_runs 2^32-1"  insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(le 8 77)$(le 8 5)$(le 4 0xffffffff)$(zeros 4)$(zeros 16)68656c6c6f"
forged "SYSV_DATA 23 bytes"        insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type SYSV_DATA --payload "$(zeros 23)"
forged "VMA sysv of no SYSV_SHM" --expect "bad area" edit -r 'VMA#0' --set kind=6 --set reserved=77
forged "VMA sysv past its segment" --expect "bad area" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$(sysvvma 0x30000 0x32000 0 1 77)"
forged "VMA sysv offset past its segment" --expect "bad area" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$(sysvvma 0x30000 0x31000 0x1000 1 77)"
forged "VMA sysv offset 2^64-4096" --expect "bad area" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$(sysvvma 0x30000 0x31000 0xfffffffffffff000 1 77)"
forged "VMA sysv private" --expect "bad area" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$(sysvvma 0x30000 0x31000 0 2 77)"
forged "VMA sysv named /tmp/x" --expect "bad path" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$(sysvvma 0x30000 0x31000 0 1 77 2f746d702f7800)"
forged "PAGES of a sysv area" --expect "does not follow its VMA" insert --at before:VMA --type SYSV_SHM --payload "$SHM" --type VMA --payload "$SVMA" --type PAGES --payload "$(le 8 0x30000)$(le 8 1)$(le 4 1)$(zeros 4)$(le 8 0x30000)$(le 8 1)$(zeros 4096)"
# sockets (FILE_INET): a FILE of kind inet put after the last FILE
inet() { "$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import forge; print(forge.inet_file(sys.argv[2:]))' "$HERE" "$@"; }
inet_case() {	# NAME ARGS...
	local name=$1
	shift
	forged_now "inet $name" --expect "bad inet socket" insert --at after:'FILE#-1' --type FILE --payload "$(inet "$@")"
}
alias inet_case='mine && inet_case'
forged "control: inet connection"   --control insert --at after:'FILE#-1' --type FILE --payload "$(inet)"
forged "control: inet listener"     --control insert --at after:'FILE#-1' --type FILE --payload "$(inet listen)"
forged "control: inet UDP v6"       --control insert --at after:'FILE#-1' --type FILE --payload "$(inet udp6)"
inet_case "family 1"                family=1
inet_case "family 99"               family=99
inet_case "protocol SCTP"           protocol=132
inet_case "protocol raw"            protocol=255
inet_case "state SYN_SENT, queues"  state=2
forged "control: inet SYN_SENT"     --control insert --at after:'FILE#-1' --type FILE --payload "$(inet syn)"
inet_case "SYN_SENT, no peer port"  syn rport=0
inet_case "SYN_SENT, no own port"   syn lport=0
inet_case "SYN_SENT with a sequence" syn snd_seq=1
inet_case "state TIME_WAIT"         state=6
inet_case "state 99"                state=99
inet_case "UDP established, unbound" udp6 state=1 lport=0 rport=1
inet_case "UDP in FIN_WAIT1"        udp6 state=4 rport=1
inet_case "listener with a peer"    listen rport=80
inet_case "listener on port 0"      listen lport=0
inet_case "listener backlog 1e6"    listen backlog=1000000
inet_case "backlog on a connection" backlog=5
inet_case "TCP with a shutdown"      shutdown=1
inet_case "UDP shutdown 4"          udp4 shutdown=4
inet_case "type 1 for UDP"          udp4 type=1
inet_case "type 4"                  udp4 type=4
inet_case "UDP-Lite stream"         type=1 protocol=136
inet_case "ping on IPv6 as ICMP"    udp6 type=2 protocol=1
inet_case "raw protocol 263"        udp4 type=3 protocol=263
inet_case "raw listening"           udp4 type=3 protocol=1 state=10
forged "control: inet raw"          --control insert --at after:'FILE#-1' --type FILE --payload "$(inet udp4 type=3 protocol=1)"
forged "control: inet UDP-Lite"     --control insert --at after:'FILE#-1' --type FILE --payload "$(inet udp4 type=2 protocol=136)"
# TCP CLOSE: shutdown (the field once reserved) 1..3, bytes only if 3
# and unbound (a connection that ended)
forged "control: inet closed, bytes" --control insert --at after:'FILE#-1' --type FILE --payload "$(inet listen state=7 backlog=0 shutdown=3 lport=0 rcv_len=2)"
inet_case "closed, shutdown 4"      listen state=7 backlog=0 shutdown=4
inet_case "listener shut down"      listen shutdown=3
inet_case "closed bound, bytes"     listen state=7 backlog=0 shutdown=3 rcv_len=2
inet_case "closed shut RD, bytes"   listen state=7 backlog=0 shutdown=1 lport=0 rcv_len=2
inet_case "reserved2 1"             reserved2=1
inet_case "conn_flags 2"            reserved2=2 rcv_len=0
inet_case "reconnect in FIN_WAIT1"  reserved2=1 rcv_len=0 state=4
inet_case "IPv4 address, 5th byte"  laddr=7f00000101
inet_case "IPv4 with a scope id"    scope_id=1
inet_case "SO_REUSEADDR 2"          opt.reuseaddr=2
inet_case "SO_RCVBUF -1"            opt.rcvbuf=-1
inet_case "SO_LINGER -2"            opt.linger=-2
inet_case "IPV6_V6ONLY on IPv4"     opt.v6only=1
inet_case "TCP_KEEPCNT 0"           opt.keepcnt=0
inet_case "TCP_NODELAY on UDP"      udp6 opt.nodelay=1
inet_case "option slot 15"          opt.slot15=1
inet_case "SO_RCVTIMEO -1"          rcvtimeo_us=-1
inet_case "SO_SNDTIMEO 1000 years"  sndtimeo_us=31536000000000000
inet_case "mss 0"                   mss=0
inet_case "mss 65536"               mss=65536
inet_case "wscale 15"               snd_wscale=15
inet_case "wscale without option"   tcpi_opts=3
inet_case "tcpi_opts ECN"           tcpi_opts=15
inet_case "unsent > queued"         unsent_len=4
inet_case "queue bytes missing"     data=4
inet_case "queue bytes extra"       data=6
inet_case "snd_len 2^32-1"          snd_len=0xffffffff data=5
inet_case "rcv_len 2^31"            rcv_len=0x80000000 data=5
inet_case "queues on a listener"    listen snd_len=1 data=1
inet_case "seq on a listener"       listen snd_seq=1
forged "inet extra shorter than inet" --expect "bad FILE record" insert --at after:'FILE#-1' --type FILE --payload "$(inet file.extra_len=100)"
inet_case "path not a socket"       path=/etc/passwd
# a UDP socket's datagrams: rec_dgram {len, port, reserved, addr[16]}, data
dg() {	# LEN PORT RESERVED ADDRHEX DATAHEX
	local pad=
	[ ${#4} -lt 32 ] && pad=$(zeros $((16 - ${#4} / 2)))
	printf '%s' "$(le 4 "$1")$(le 2 "$2")$(le 2 "$3")$4$pad$5"
}
forged "control: inet UDP datagrams" --control insert --at after:'FILE#-1' --type FILE --payload "$(inet udp4 queue="$(dg 3 7 0 7f000001 616263)$(dg 0 8 0 7f000001 '')")"
inet_case "datagram past the end"   udp4 queue="$(dg 4 7 0 7f000001 616263)"
inet_case "datagram len 65536"      udp4 queue="$(dg 65536 7 0 7f000001 616263)"
inet_case "datagram reserved"       udp4 queue="$(dg 3 7 1 7f000001 616263)"
inet_case "datagram header cut"     udp4 queue="$(dg 3 7 0 7f000001 616263)00000000"
inet_case "datagram v6 from on v4"  udp4 queue="$(dg 3 7 0 00000000000000000000000000000001 616263)"
inet_case "datagrams, not bound"    udp4 lport=0 queue="$(dg 3 7 0 7f000001 616263)"
# the options after the queues: rec_sockopt {level, name, len}, value
so() {	# LEVEL NAME LEN VALUEHEX
	printf '%s' "$(le 2 "$1")$(le 2 "$2")$(le 4 "$3")$4"
}
forged "control: inet options"      --control insert --at after:'FILE#-1' --type FILE --payload "$(inet udp4 queue="$(dg 3 7 0 7f000001 616263)" opts="$(so 1 12 4 05000000)$(so 0 1 4 10000000)$(so 1 26 8 0600000000000000)$(so 1 25 3 6c6f00)00")"
inet_case "option unknown"          udp4 opts="$(so 1 999 4 01000000)"
inet_case "option IP_TOS 256"       udp4 opts="$(so 0 1 4 00010000)"
inet_case "option int of 2 bytes"   udp4 opts="$(so 1 12 2 0100)0000"
inet_case "option twice"            udp4 opts="$(so 1 12 4 01000000)$(so 1 12 4 02000000)"
inet_case "option cut"              udp4 opts="$(so 1 12 4 0100)"
inet_case "option len 2^32-1"       udp4 opts="$(so 1 12 0xffffffff 01000000)"
inet_case "option not padded"       udp4 opts="$(so 1 25 3 6c6f00)"
inet_case "filter of 7 bytes"       udp4 opts="$(so 1 26 7 06000000000000)00"
inet_case "device name of 17 bytes" udp4 opts="$(so 1 25 17 $(zeros 17))$(zeros 3)"
inet_case "datagrams, rcv_len short" udp6 queue="$(dg 3 7 0 7f000001 616263)" rcv_len=20
forged "FS cwd_len 0"              edit -r FS --set cwd_len=0 --resize 8
forged "FS cwd_len 0, cwd kept"    edit -r FS --set cwd_len=0
forged "FS root_len 0"             edit -r FS --set root_len=0
forged "FS root_len past end"      edit -r FS --add root_len=8
forged "FS flags unknown"           edit -r FS --set flags=4
forged "FS cwd fd, not deleted"     edit -r FS --set flags=2
forged "FS cwd_fd without flag"     edit -r FS --set cwd_fd=3
forged "FS cwd_mode 010000"         edit -r FS --set flags=1 --set cwd_mode=4096
forged "FS root relative"          edit -r FS --offset -2 --bytes 41
forged "FS root unterminated"      edit -r FS --offset -1 --bytes 41
# locks, fd owners (locks.c): a lock and an owner on fd 1, which the
# holder has (its output), are well-formed; each field wrong is not
lock() {	# FD KIND TYPE RESERVED START LEN
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 8 "$5")$(le 8 "$6")"
}
fown() {	# FD OWNER-TYPE OWNER SIGNO
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")"
}
forged "control: POSIX lock on fd 1" --control insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 0 10 10)"
forged "control: flock, OFD lock"  --control insert --at after:'FD#-1' \
	--type LOCK --payload "$(lock 1 2 0 0 0 0)" --type LOCK --payload "$(lock 1 3 1 0 5 0)"
forged "control: owner of fd 1"    --control insert --at after:'FD#-1' --type FOWN --payload "$(fown 1 1 1 10)"
forged "LOCK kind 0"               insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 0 1 0 10 10)"
forged "LOCK kind 5"               insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 5 1 0 10 10)"
forged "control: a lease"          --control insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 4 1 0 0 0)"
forged "LOCK lease with a range"   insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 4 1 0 10 10)"
forged "LOCK lease breaking to 3"  insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 4 1 3 0 0)"
forged "LOCK read lease to read"   insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 4 0 1 0 0)"
forged "LOCK type 2 (unlock)"      insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 2 0 10 10)"
forged "LOCK reserved 1"           insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 1 10 10)"
forged "LOCK on fd 99 (none)"      insert --at after:'FD#-1' --type LOCK --payload "$(lock 99 1 1 0 10 10)"
forged "LOCK fd 2^31"              insert --at after:'FD#-1' --type LOCK --payload "$(lock 0x80000000 1 1 0 10 10)"
forged "LOCK start 2^63"           insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 0 0x8000000000000000 1)"
forged "LOCK start+len overflow"   insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 0 0x7000000000000000 0x7000000000000000)"
forged "LOCK flock with a range"   insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 2 1 0 10 10)"
forged "LOCK 31 bytes"             insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 0 10 10 | head -c 62)"
# (its kind, at byte 4, was read before its size was checked: the fuzzer)
forged "LOCK 4 bytes"              insert --at after:'FD#-1' --type LOCK --payload "$(lock 1 1 1 0 10 10 | head -c 8)"
forged "LOCK before any TASK"      insert --at 1 --type LOCK --payload "$(lock 1 1 1 0 10 10)"
forged "FOWN owner_type 3"         insert --at after:'FD#-1' --type FOWN --payload "$(fown 1 3 1 10)"
forged "FOWN owner -1"             insert --at after:'FD#-1' --type FOWN --payload "$(fown 1 1 0xffffffff 10)"
forged "FOWN signo 65"             insert --at after:'FD#-1' --type FOWN --payload "$(fown 1 1 1 65)"
forged "FOWN on fd 99 (none)"      insert --at after:'FD#-1' --type FOWN --payload "$(fown 99 1 1 10)"
forged "FOWN 20 bytes"             insert --at after:'FD#-1' --type FOWN --payload "$(fown 1 1 1 10)00000000"
# FIFOs (fifo.c): a buffer record alone is well-formed
fifo() {	# ID CAPACITY DATA_LEN RESERVED DATA-HEX
	printf "%s" "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")${5:-}"
}
forged "control: FIFO with 3 bytes" --control insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 3 0 616263)"
forged "FIFO id 0"                 insert --at after:'FD#-1' --type FIFO --payload "$(fifo 0 4096 3 0 616263)"
forged "FIFO capacity 100"         insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 100 3 0 616263)"
forged "FIFO capacity 2^31"        insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 0x80000000 3 0 616263)"
forged "FIFO data_len > capacity"  insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 5000 0 616263)"
forged "FIFO data_len past end"    insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 4 0 616263)"
forged "FIFO data_len short"       insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 2 0 616263)"
forged "FIFO reserved 1"           insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 3 1 616263)"
forged "FIFO twice"                insert --at after:'FD#-1' --type FIFO --payload "$(fifo 1000 4096 0 0)" --type FIFO --payload "$(fifo 1000 4096 0 0)"
forged "FILE kind FIFO, no FIFO"   edit -r 'FILE#-1' --set kind=6
forged "FILE reg, flags 0x40000000" edit -r 'FILE#-1' --or flags=0x40000000
forged "FILE reg, access mode 3"   edit -r 'FILE#-1' --or flags=3
# unix sockets (UNIX_SK, inserted after the TASK; the holder has none)
usk() {	# TYPE STATE PEER SHUTDOWN FLAGS BACKLOG NAME-HEX NR-MSGS DATA-LEN LENS-AND-DATA-HEX
	printf '%s' "$(le 4 1000)$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "$5")$(le 4 "$6")$(le 4 0xffffffff)$(zeros 36)$(le 4 $((${#7} / 2)))$(le 4 "$8")$(le 4 "$9")$7${10}"
}
usk_case() {	# NAME [--control] USK-ARGS...
	local name=$1 ctl=
	shift
	[ "$1" = --control ] && { ctl=--control; shift; }
	forged_now "$name" $ctl insert --at after:TASK --type UNIX_SK --payload "$(usk "$@")"
}
alias usk_case='mine && usk_case'
usk_case "control: UNIX_SK stream"           --control 1 1 0 0 0 0 "" 0 0 ""
usk_case "control: UNIX_SK dgram, a message" --control 2 1 0 0 0 0 00616263 1 3 "$(le 4 3)616263"
usk_case "UNIX_SK type 3"                    3 1 0 0 0 0 "" 0 0 ""
usk_case "UNIX_SK state 0"                   1 0 0 0 0 0 "" 0 0 ""
usk_case "UNIX_SK state 6"                   1 6 0 0 0 0 "" 0 0 ""
usk_case "UNIX_SK shutdown 4"                1 1 0 4 0 0 "" 0 0 ""
usk_case "UNIX_SK flags 4"                   1 1 0 0 4 0 "" 0 0 ""
usk_case "UNIX_SK listen, no name"           1 2 0 0 0 5 "" 0 0 ""
usk_case "UNIX_SK listen, dgram"             2 2 0 0 0 5 00616263 0 0 ""
usk_case "UNIX_SK backlog, not listening"    1 1 0 0 0 5 "" 0 0 ""
usk_case "UNIX_SK connected to itself"       1 3 1000 0 0 0 "" 0 0 ""
usk_case "UNIX_SK pending, no listener"      1 4 0 0 0 0 "" 0 0 ""
usk_case "UNIX_SK unconnected, a peer"       1 1 7 0 0 0 "" 0 0 ""
usk_case "UNIX_SK external, connected"       1 3 7 0 2 0 "" 0 0 ""
usk_case "control: UNIX_SK remote dgram"     --control 2 6 0 0 2 0 006c6f67 0 0 ""
usk_case "UNIX_SK remote, not external"      2 6 0 0 0 0 006c6f67 0 0 ""
usk_case "UNIX_SK remote stream"             1 6 0 0 2 0 006c6f67 0 0 ""
usk_case "UNIX_SK remote, no name"           2 6 0 0 2 0 "" 0 0 ""
usk_case "UNIX_SK remote, data"              2 6 0 0 2 0 006c6f67 1 1 "$(le 4 1)61"
usk_case "UNIX_SK state 7"                   2 7 0 0 2 0 006c6f67 0 0 ""
usk_case "UNIX_SK relative path"             2 1 0 0 0 0 616263 0 0 ""
usk_case "UNIX_SK NUL inside the path"       2 1 0 0 0 0 2f610062 0 0 ""
usk_case "UNIX_SK name 108 bytes"            2 1 0 0 0 0 "2f$(printf '61%.0s' {1..107})" 0 0 ""
usk_case "UNIX_SK name_len past payload"     2 1 0 0 0 0 "" 0 0 2f61
usk_case "UNIX_SK messages != data_len"      2 1 0 0 0 0 00616263 1 4 "$(le 4 3)61626364"
usk_case "UNIX_SK nr_msgs 2^32-1"            2 1 0 0 0 0 00616263 0xffffffff 0 ""
usk_case "UNIX_SK data, no one to send it"   1 1 0 0 0 0 "" 1 3 "$(le 4 3)616263"
usk_case "UNIX_SK data_len past payload"     2 1 0 0 0 0 00616263 1 300 "$(le 4 300)616263"
forged "UNIX_SK twice" insert --at after:TASK --type UNIX_SK --payload "$(usk 1 1 0 0 0 0 "" 0 0 "")" \
	--type UNIX_SK --payload "$(usk 1 1 0 0 0 0 "" 0 0 "")"
forged "FILE unix without its UNIX_SK"   edit -r FILE --set kind=15 --set rdev=4242
# cgroups (the holder is in a group of every hierarchy, the root at least)
cgprop() {	# GROUP FLAGS MODE NAME VALUE
	printf '%s' "$(le 4 $1)$(le 4 $2)$(zeros 8)$(le 4 $3)$(le 4 ${#4})$(le 4 ${#5})$(zeros 4)"
	printf '%s%s' "$4" "$5" | od -An -tx1 -v | tr -d ' \n'
}
forged "CGROUP id 0"                edit -r CGROUP --set id=0
forged "CGROUP flags 4"             edit -r CGROUP --set flags=4
forged "control: CGROUP base"       --control edit -r CGROUP --set flags=2
forged "CGROUP mode 010000"         edit -r CGROUP --set mode=0x1000
forged "CGROUP reserved 1"          edit -r CGROUP --set reserved=1
forged "CGROUP path_len past payload" edit -r CGROUP --add path_len=100
forged "CGROUP ctrl_len 1000"       edit -r CGROUP --set ctrl_len=1000
forged "CGROUP twice"               dup -r CGROUP
forged "CGROUP path ../x"           insert --at after:CGROUP --type CGROUP --payload "$(le 4 2)$(zeros 16)$(le 4 0)$(le 4 5)$(zeros 4)$(strhex /../x | sed 's/00$//')"
forged "CGROUP_MEMBER group 9999"   edit -r CGROUP_MEMBER --set group0=9999
forged "CGROUP_MEMBER nr +1"        edit -r CGROUP_MEMBER --add nr=1
forged "CGROUP_MEMBER ns, no root"  edit -r CGROUP_MEMBER --set ns=1
forged "CGROUP_MEMBER twice"        insert --at after:CGROUP_MEMBER --type CGROUP_MEMBER --payload "$(zeros 8)"
forged "CGROUP_MEMBER before THREAD" insert --at after:TASK --type CGROUP_MEMBER --payload "$(zeros 8)"
forged "CGROUP_PROP tasks"          insert --at after:CGROUP --type CGROUP_PROP --payload "$(cgprop 1 1 0 tasks 1)"
forged "CGROUP_PROP name ../x"      insert --at after:CGROUP --type CGROUP_PROP --payload "$(cgprop 1 2 0644 ../x '')"
forged "CGROUP_PROP of no group"    insert --at after:CGROUP --type CGROUP_PROP --payload "$(cgprop 7 2 0644 x '')"
# packet and netlink sockets (FILE_PACKET, FILE_NETLINK: no fd, loaded
# and checked all the same), and an area mapping a packet socket's rings
pkring() {	# BLOCK_SIZE BLOCK_NR FRAME_SIZE FRAME_NR [TMO]: one ring
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "${5:-0}")$(zeros 12)"
}
pkopt() {	# INDEX VALUE (INDEX 1..14): opt[16] with one set; 0: version
	[ "$1" = 0 ] && { printf '%s' "$(le 4 "$2")$(zeros 60)"; return; }
	printf '%s' "$(zeros $((4 * $1)))$(le 4 "$2")$(zeros $((60 - 4 * $1)))"
}
pkrec() {	# TYPE IFINDEX FANOUT NR_MC NR_FILTER [OPTS RX TX RESERVED]
	printf '%s' "$(le 2 "$1")$(le 2 0x0300)$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "$5")$(le 4 212992)$(le 4 212992)$(le 4 "${9:-0}")${6:-$(zeros 64)}${7:-$(zeros 32)}${8:-$(zeros 32)}"
}
pkmc() {	# IFINDEX TYPE ALEN COUNT
	printf '%s' "$(le 4 "$1")$(le 2 "$2")$(le 2 "$3")$(le 4 "$4")$(zeros 36)"
}
pkcase() {	# NAME [--control] EXTRA-HEX
	local name=$1 how=(--expect "bad packet socket")
	shift
	[ "$1" = --control ] && { how=(--control); shift; }
	forged_now "$name" "${how[@]}" insert --at after:'FILE#-1' --type FILE --payload "$(kindfile 1000 20 'socket:[4242]' "$1")"
}
alias pkcase='mine && pkcase'
V3RX=$(pkring 4096 2 2048 4 60)
pkcase "control: packet raw"            --control "$(pkrec 3 0 0 0 0)"
pkcase "control: packet V3 RX ring"     --control "$(pkrec 3 1 0 0 0 "$(pkopt 0 2)" "$V3RX")"
pkcase "control: packet membership, filter" --control "$(pkrec 2 1 0x80001234 1 1)$(pkmc 1 1 0 2)0600000000000000"
pkcase "packet type 4"                  "$(pkrec 4 0 0 0 0)"
pkcase "packet ifindex -1"              "$(pkrec 3 0xffffffff 0 0 0)"
pkcase "packet reserved 1"              "$(pkrec 3 0 0 0 0 "" "" "" 1)"
pkcase "packet version 3"               "$(pkrec 3 0 0 0 0 "$(pkopt 0 3)")"
pkcase "packet vnet header 11"          "$(pkrec 3 0 0 0 0 "$(pkopt 4 11)")"
pkcase "packet opt slot 12"             "$(pkrec 3 0 0 0 0 "$(pkopt 12 1)")"
pkcase "packet reserve -1"              "$(pkrec 3 0 0 0 0 "$(pkopt 1 0xffffffff)")"
pkcase "packet ring frame_nr wrong"     "$(pkrec 3 0 0 0 0 "$(pkopt 0 2)" "$(pkring 4096 2 2048 3 60)")"
pkcase "packet ring block 1000"         "$(pkrec 3 0 0 0 0 "" "$(pkring 1000 1 1000 1)")"
pkcase "packet ring 2^40 bytes"         "$(pkrec 3 0 0 0 0 "$(pkopt 0 2)" "$(pkring 0x100000 0x100000 0x100000 0x100000)")"
pkcase "packet V2 ring with timeout"    "$(pkrec 3 0 0 0 0 "$(pkopt 0 1)" "$(pkring 4096 1 2048 2 60)")"
pkcase "packet ring with 0 frames"      "$(pkrec 3 0 0 0 0 "" "" "$(pkring 4096 1 0 0)")"
pkcase "SOCK_PACKET with a ring"        "$(pkrec 10 0 0 0 0 "$(pkopt 0 2)" "$V3RX")"
pkcase "SOCK_PACKET with an option"     "$(pkrec 10 0 0 0 0 "$(pkopt 2 1)")"
pkcase "packet fanout by BPF"           "$(pkrec 3 0 0x60001 0 0)"
pkcase "packet fanout flag 0x40"        "$(pkrec 3 0 0x40000001 0 0)"
pkcase "packet nr_mc 2^31"              "$(pkrec 3 0 0 0x80000000 0)$(pkmc 1 1 0 1)"
pkcase "packet nr_mc 1, none there"     "$(pkrec 3 0 0 1 0)"
pkcase "packet membership alen 33"      "$(pkrec 3 0 0 1 0)$(pkmc 1 1 33 1)"
pkcase "packet membership count 0"      "$(pkrec 3 0 0 1 0)$(pkmc 1 1 0 0)"
pkcase "packet membership ifindex 0"    "$(pkrec 3 0 0 1 0)$(pkmc 0 1 0 1)"
pkcase "packet membership type 9"       "$(pkrec 3 0 0 1 0)$(pkmc 1 9 0 1)"
pkcase "packet filter 4097 insns"       "$(pkrec 3 0 0 0 4097)$(zeros 32776)"
pkcase "packet filter past payload"     "$(pkrec 3 0 0 0 2)0600000000000000"
pkcase "packet a byte after"            "$(pkrec 3 0 0 0 0)00"
pkcase "packet 159 bytes"               "$(pkrec 3 0 0 0 0 | cut -c3-)"
nlrec() {	# PROTOCOL TYPE PORTID DST_PORTID DST_GROUP FLAGS NR_GROUPS NR_FILTER
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 4 "$5")$(le 4 "$6")$(le 4 "$7")$(le 4 "$8")$(le 4 212992)$(le 4 212992)"
}
nlcase() {	# NAME [--control] EXTRA-HEX
	local name=$1 how=(--expect "bad netlink socket")
	shift
	[ "$1" = --control ] && { how=(--control); shift; }
	forged_now "$name" "${how[@]}" insert --at after:'FILE#-1' --type FILE --payload "$(kindfile 1000 21 'socket:[4243]' "$1")"
}
alias nlcase='mine && nlcase'
nlcase "control: netlink bound, groups" --control "$(nlrec 2 3 4242 0 0 0x41 2 0)$(le 4 0x10)$(le 4 1)"
nlcase "control: netlink connected"     --control "$(nlrec 2 2 4242 4243 32 0 0 1)0600000000000000"
nlcase "netlink protocol 32"            "$(nlrec 32 3 0 0 0 0 0 0)"
nlcase "netlink SOCK_STREAM"            "$(nlrec 2 1 0 0 0 0 0 0)"
nlcase "netlink dst_group 33"           "$(nlrec 2 3 4242 0 33 0 0 0)"
nlcase "netlink connected, not bound"   "$(nlrec 2 3 0 4243 0 0 0 0)"
nlcase "netlink flags 0x80"             "$(nlrec 2 3 0 0 0 0x80 0 0)"
nlcase "netlink 1025 group words"       "$(nlrec 2 3 0 0 0 0 1025 0)$(zeros 4100)"
nlcase "netlink groups past payload"    "$(nlrec 2 3 0 0 0 0 1 0)"
nlcase "netlink filter 4097 insns"      "$(nlrec 2 3 0 0 0 0 0 4097)$(zeros 32776)"
nlcase "netlink 39 bytes"               "$(nlrec 2 3 0 0 0 0 0 0 | cut -c3-)"
pkvma() {	# SHM-ID PATH: a kind 20 area at 0x30000, 2 pages
	local p; p=$(strhex "$2")
	printf '%s' "$(le 8 0x30000)$(le 8 0x32000)$(zeros 8)$(le 4 3)$(le 4 1)$(le 4 20)$(zeros 20)$(le 4 $((${#p} / 2)))$(le 4 "$1")$p"
}
forged "VMA packet of no socket" --expect "bad area" edit -r 'VMA#0' --set kind=20
forged "VMA packet named a file" --expect "bad path" edit -r 'VMA#0' --set kind=20 --set reserved=1
forged "VMA packet of a regular file" --expect "packet socket FILE 1" insert --at before:VMA --type VMA --payload "$(pkvma 1 'socket:[4242]')"
forged "PAGES of a packet area" --expect "does not follow its VMA" insert --at before:VMA --type VMA --payload "$(pkvma 1 'socket:[4242]')" --type PAGES --payload "$(le 8 0x30000)$(le 8 1)$(le 4 1)$(zeros 4)$(le 8 0x30000)$(le 8 1)$(zeros 4096)"
# fds in flight (UNIX_SCM, after a datagram server's UNIX_SK with one
# message, naming the first FILE)
uscm() {	# SK OPENER NR-MSGS NR-FDS ENTRIES-AND-IDS-HEX
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$5"
}
scm_case() {	# NAME [--control] SCM-ARGS...
	local name=$1 ctl=
	shift
	[ "$1" = --control ] && { ctl=--control; shift; }
	forged_now "$name" $ctl insert --at after:'FILE#0' \
		--type UNIX_SK --payload "$(usk 2 1 0 0 0 0 00616263 1 3 "$(le 4 3)616263")" \
		--type UNIX_SCM --payload "$(uscm "$@")"
}
alias scm_case='mine && scm_case'
scm_case "control: UNIX_SCM a message, a file" --control 1000 1 1 1 "$(le 4 0)$(le 4 1)$(le 4 1)"
scm_case "UNIX_SCM no such socket"    999 1 1 1 "$(le 4 0)$(le 4 1)$(le 4 1)"
scm_case "UNIX_SCM message 1 of 1"    1000 1 1 1 "$(le 4 1)$(le 4 1)$(le 4 1)"
scm_case "UNIX_SCM message of 0 fds"  1000 1 1 0 "$(le 4 0)$(le 4 0)"
scm_case "UNIX_SCM fds do not add up" 1000 1 1 2 "$(le 4 0)$(le 4 1)$(le 4 1)$(le 4 1)"
scm_case "UNIX_SCM no such FILE"      1000 1 1 1 "$(le 4 0)$(le 4 1)$(le 4 4242)"
scm_case "UNIX_SCM no messages"       1000 1 0 0 ""
scm_case "UNIX_SCM length short"      1000 1 2 1 "$(le 4 0)$(le 4 1)$(le 4 1)"
scm_case "UNIX_SCM 254 fds"           1000 1 1 254 "$(le 4 0)$(le 4 254)$(for ((i = 0; i < 254; i++)); do le 4 1; done)"
forged "UNIX_SCM twice" insert --at after:'FILE#0' \
	--type UNIX_SK --payload "$(usk 2 1 0 0 0 0 00616263 1 3 "$(le 4 3)616263")" \
	--type UNIX_SCM --payload "$(uscm 1000 1 1 1 "$(le 4 0)$(le 4 1)$(le 4 1)")" \
	--type UNIX_SCM --payload "$(uscm 1000 1 1 1 "$(le 4 0)$(le 4 1)$(le 4 1)")"
# the root's uts namespace (NS_UTS: two 65-byte names, 6 reserved bytes)
utsrec() {	# NODENAME-HEX DOMAIN-HEX RESERVED-HEX
	local n=$1 m=$2
	printf '%s' "$n$(zeros $((65 - ${#n} / 2)))$m$(zeros $((65 - ${#m} / 2)))$3"
}
forged "control: NS_UTS"           --control insert --at after:TASK --type NS_UTS --payload "$(utsrec 6868 6464 "$(zeros 6)")"
forged "NS_UTS nodename unterminated" --expect "bad NS_UTS" insert --at after:TASK --type NS_UTS \
	--payload "$(printf '41%.0s' {1..65})$(zeros 65)$(zeros 6)"
forged "NS_UTS reserved 1"         --expect "bad NS_UTS" insert --at after:TASK --type NS_UTS --payload "$(utsrec 68 64 "$(zeros 5)01")"
forged "NS_UTS twice"              --expect "bad NS_UTS" insert --at after:TASK --type NS_UTS --payload "$(utsrec 68 64 "$(zeros 6)")" \
	--type NS_UTS --payload "$(utsrec 68 64 "$(zeros 6)")"
forged "NS_UTS 135 bytes"          insert --at after:TASK --type NS_UTS --payload "$(utsrec 68 64 "$(zeros 5)")"
# a container's namespaces (NS: own, shared; NS_TIME: two clocks), in an
# image that is no container's (no HEAD_CONTAINER, root not pid 1)
forged "NS in a plain image"        --expect "bad NS record" insert --at after:TASK --type NS \
	--payload "$(le 4 0x11)$(le 4 0xee)$(zeros 8)"
forged "NS_TIME without NS"         --expect "bad NS_TIME" insert --at after:TASK --type NS_TIME \
	--payload "$(le 8 1000)$(le 8 2000)"
forged "HEAD container flag, root not pid 1" --expect "bad task count, pid or flags" \
	edit -r HEAD --or flags=0x80000000
# pid namespaces nested in the tree (NSPID: depth, children, ns[8],
# pid[8]; NSTID: tid[8]): the root is at level 0 and forks no child
# here; a lone process has no thread to give levels to
nspid() {	# DEPTH CHILDREN NS0 PID0
	printf '%s' "$(le 4 $1)$(le 4 $2)$(le 4 $3)$(zeros 28)$(le 4 $4)$(zeros 28)"
}
forged "NSPID of the root, nested"  --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 1 0 99 1)"
forged "NSPID depth 9"              --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 9 0 99 1)"
forged "NSPID of nothing"           --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 0 0 0 0)"
forged "NSPID level 1 unused set"   --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 0 99 5 0)"
forged "NSPID children 2^31"        --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 0 0x80000000 0 0)"
forged "NSPID children no child"    --expect "no child of it" insert --at after:TASK --type NSPID --payload "$(nspid 0 99 0 0)"
forged "NSPID twice"                --expect "bad NSPID" insert --at after:TASK --type NSPID --payload "$(nspid 0 99 0 0)" \
	--type NSPID --payload "$(nspid 0 99 0 0)"
forged "NSPID after THREAD"         --expect "bad NSPID" insert --at after:THREAD --type NSPID --payload "$(nspid 0 99 0 0)"
forged "NSPID 71 bytes"             insert --at after:TASK --type NSPID --payload "$(nspid 0 99 0 0 | cut -c3-)"
forged "NSTID of no nested process" --expect "bad NSTID" insert --at after:THREAD --type NSTID --payload "$(le 4 5)$(zeros 28)"
# a container's own user namespace (NS_USER: nr_uid, nr_gid, flags,
# nr_groups, then extents {first, lower, count}, then groups): bad maps
# are refused as the kernel would refuse them, and a sound one outside a
# container too
nsuser() {	# NR_UID NR_GID FLAGS NR_GROUPS EXTENTS-AND-GROUPS-HEX
	printf '%s' "$(le 4 $1)$(le 4 $2)$(le 4 $3)$(le 4 $4)$5"
}
ext() { printf '%s' "$(le 4 $1)$(le 4 $2)$(le 4 $3)"; }
NSU_ONE="$(ext 0 100000 65536)$(ext 0 100000 65536)"
forged "NS_USER in a plain image"   --expect "for its own user namespace" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 0 0 "$NSU_ONE")"
forged "NS_USER no extents"         --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 0 0 0 0 "")"
forged "NS_USER extent of 0 ids"    --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 0 0 "$(ext 0 100000 0)$(ext 0 100000 1)")"
forged "NS_USER extents overlap"    --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 2 1 0 0 "$(ext 0 100000 10)$(ext 5 200000 10)$(ext 0 100000 1)")"
forged "NS_USER lower ids overlap"  --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 2 1 0 0 "$(ext 0 100000 10)$(ext 10 100005 10)$(ext 0 100000 1)")"
forged "NS_USER ids past 2^32"      --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 0 0 "$(ext 0 0xffffff00 0x1000)$(ext 0 100000 1)")"
forged "NS_USER 341 extents"        --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 341 1 0 0 "")"
forged "NS_USER length lies"        --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 2 1 0 0 "$NSU_ONE")"
forged "NS_USER flags 2"            --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 2 0 "$NSU_ONE")"
forged "NS_USER groups, not denied" --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 0 1 "$NSU_ONE$(le 4 5)")"
forged "NS_USER 65537 groups"       --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 1 65537 "$NSU_ONE")"
forged "NS_USER groups length lies" --expect "1 to 340 extents" insert --at after:TASK --type NS_USER \
	--payload "$(nsuser 1 1 1 2 "$NSU_ONE$(le 4 5)")"
forged "NS_USER 15 bytes"           insert --at after:TASK --type NS_USER --payload "$(nsuser 1 1 0 0 "" | cut -c3-)"
# the root's own ipc namespace's content (IPC_NS .. IPC_MQ_MSG, 240-245):
# in a tree without one, refused whatever it says (every field of them
# forged: tests/unit/ipcns_test.c)
forged "IPC_NS of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 240 --payload "$(zeros 88)"
forged "IPC_MSQ of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 241 --payload "$(zeros 80)"
forged "IPC_MSG of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 242 --payload "$(le 8 1)$(le 4 1)$(zeros 4)41"
forged "IPC_SEM of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 243 --payload "$(zeros 48)"
forged "IPC_MQ of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 244 --payload "$(zeros 288)"
forged "IPC_MQ_MSG of no own ipc namespace" --expect "not of the root's own ipc namespace" \
	insert --at after:TASK --type 245 --payload "$(zeros 8)"
# the root's own net namespace (NET_*: kinds/netns.c); a sound record is
# refused too, the holder's namespace being restart's own
strhexn() {	# STRING BYTES: STRING NUL-padded to BYTES
	local h
	h=$(printf %s "$1" | od -An -tx1 | tr -d ' \n')
	printf '%s' "$h"
	[ $(($2 - ${#h} / 2)) -gt 0 ] && zeros $(($2 - ${#h} / 2))
	return 0
}
nlink() {	# IFINDEX KIND FLAGS MTU MASTER PEER MODE ADDR_LEN NAME [PEER-NAME]
	printf '%s' "$(le 4 $1)$(le 4 $2)$(le 4 $3)$(le 4 $4)$(le 4 $5)$(le 4 $6)$(le 4 $7)$(le 4 1000)$(le 4 $8)$(le 4 0)"
	printf '%s' "$(zeros 32)$(strhexn "$9" 16)$(strhexn "${10:-}" 16)$(zeros 8)"
}
naddr() {	# FAMILY PREFIX IFINDEX HAS LOCAL-HEX(16) LABEL
	printf '%s' "$(le 1 $1)$(le 1 $2)$(zeros 2)$(le 4 0)$(le 4 $3)$(le 4 0xffffffff)$(le 4 0xffffffff)$(le 4 $4)"
	printf '%s' "$5$(zeros 32)$(strhexn "$6" 16)"
}
nroute() {	# FAMILY DST_LEN PROTOCOL TYPE TABLE HAS OIF MASK METRIC0
	printf '%s' "$(le 1 $1)$(le 1 $2)$(zeros 2)$(le 1 $3)$(zeros 1)$(le 1 $4)$(zeros 1)$(le 4 $5)$(le 4 0)$(le 4 $7)$(le 4 0)$(le 4 $6)$(le 4 $8)"
	printf '%s' "$(zeros 64)$(le 4 $9)$(zeros 76)"
}
nsysctl() {	# PATH VALUE [PATH_LEN]
	local p v
	p=$(strhexn "$1" $((${#1} + 1))) v=$(strhexn "$2" $((${#2} + 1)))
	printf '%s' "$(le 4 ${3:-$((${#1} + 1))})$(le 4 $((${#2} + 1)))$p$v"
}
V4=0a000001$(zeros 12)
forged "NET_LINK lo, not the root's own namespace" --expect "net namespace is not its own" \
	insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)"
forged "NET_LINK ifindex 0"         --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 0 1 1 65536 0 0 0 6 lo)"
forged "NET_LINK kind 9"            --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 9 1 65536 0 0 0 6 lo)"
forged "NET_LINK flags 0x2"         --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 1 2 65536 0 0 0 6 lo)"
forged "NET_LINK addr_len 33"       --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 33 lo)"
forged "NET_LINK name unterminated" --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 0123456789abcdef)"
forged "NET_LINK name empty"        --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 '')"
forged "NET_LINK macvlan mode 3"    --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 3 1 1500 0 2 3 6 mv)"
forged "NET_LINK veth outside, no peer name" --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 0 0 0 6 v0)"
forged "NET_LINK twice"             --expect "bad NET_LINK" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)" \
	--type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)"
forged "NET_LINK veth with no peer" --expect "bad NET_LINK v0" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 0 3 0 6 v0)"
forged "NET_LINK master not a bridge" --expect "bad NET_LINK v0" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)" \
	--type 220 --payload "$(nlink 2 2 1 1500 1 0 0 6 v0 h0)"
forged "NET_LINK 111 bytes"         insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo | cut -c3-)"
nbridge() {	# STP MCAST_SNOOPING RESERVED-HEX(3)
	printf '%s' "$(le 4 1500)$(le 4 200)$(le 4 2000)$(le 4 30000)$(le 4 $1)$(le 2 32768)$(le 2 0)$(le 1 $2)$(zeros 4)$3"
}
forged "NET_BRIDGE after lo"        --expect "bad NET_BRIDGE" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)" \
	--type 225 --payload "$(nbridge 0 1 "$(zeros 3)")"
forged "NET_BRIDGE stp_state 2"     --expect "bad NET_BRIDGE" insert --at after:TASK --type 220 --payload "$(nlink 1 4 1 1500 0 0 0 6 br0)" \
	--type 225 --payload "$(nbridge 2 1 "$(zeros 3)")"
forged "NET_BRIDGE snooping 2"      --expect "bad NET_BRIDGE" insert --at after:TASK --type 220 --payload "$(nlink 1 4 1 1500 0 0 0 6 br0)" \
	--type 225 --payload "$(nbridge 0 2 "$(zeros 3)")"
forged "NET_BRIDGE reserved 1"      --expect "bad NET_BRIDGE" insert --at after:TASK --type 220 --payload "$(nlink 1 4 1 1500 0 0 0 6 br0)" \
	--type 225 --payload "$(nbridge 0 1 000001)"
forged "NET_BRIDGE twice"           --expect "bad NET_BRIDGE" insert --at after:TASK --type 220 --payload "$(nlink 1 4 1 1500 0 0 0 6 br0)" \
	--type 225 --payload "$(nbridge 0 1 "$(zeros 3)")" --type 225 --payload "$(nbridge 0 1 "$(zeros 3)")"
forged "NET_BRIDGE 31 bytes"        insert --at after:TASK --type 220 --payload "$(nlink 1 4 1 1500 0 0 0 6 br0)" \
	--type 225 --payload "$(nbridge 0 1 0000)"
nbrport() {	# PRIORITY FLAG0 MCAST_ROUTER RESERVED-HEX(3)
	printf '%s' "$(le 4 100)$(le 2 $1)$(le 2 0)$(le 1 $2)$(zeros 11)$(le 1 $3)$4"
}
forged "NET_BRPORT after no port"   --expect "bad NET_BRPORT" insert --at after:TASK --type 220 --payload "$(nlink 1 1 1 65536 0 0 0 6 lo)" \
	--type 226 --payload "$(nbrport 5 0 1 "$(zeros 3)")"
forged "NET_BRPORT priority 64"     --expect "bad NET_BRPORT" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 4 0 0 6 v0 h0)" \
	--type 226 --payload "$(nbrport 64 0 1 "$(zeros 3)")"
forged "NET_BRPORT hairpin 2"       --expect "bad NET_BRPORT" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 4 0 0 6 v0 h0)" \
	--type 226 --payload "$(nbrport 5 2 1 "$(zeros 3)")"
forged "NET_BRPORT mcast_router 4"  --expect "bad NET_BRPORT" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 4 0 0 6 v0 h0)" \
	--type 226 --payload "$(nbrport 5 0 4 "$(zeros 3)")"
forged "NET_BRPORT reserved 1"      --expect "bad NET_BRPORT" insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 4 0 0 6 v0 h0)" \
	--type 226 --payload "$(nbrport 5 0 1 010000)"
forged "NET_BRPORT 25 bytes"        insert --at after:TASK --type 220 --payload "$(nlink 2 2 1 1500 4 0 0 6 v0 h0)" \
	--type 226 --payload "$(nbrport 5 0 1 "$(zeros 4)")"
forged "NET_ADDR prefix 33"         --expect "bad NET_ADDR" insert --at after:TASK --type 221 --payload "$(naddr 2 33 1 0 $V4 '')"
forged "NET_ADDR family 3"          --expect "bad NET_ADDR" insert --at after:TASK --type 221 --payload "$(naddr 3 8 1 0 $V4 '')"
forged "NET_ADDR has 8"             --expect "bad NET_ADDR" insert --at after:TASK --type 221 --payload "$(naddr 2 8 1 8 $V4 '')"
forged "NET_ADDR IPv4 past 4 bytes" --expect "bad NET_ADDR" insert --at after:TASK --type 221 --payload "$(naddr 2 8 1 0 0a0000010a$(zeros 11) '')"
forged "NET_ADDR label not said"    --expect "bad NET_ADDR" insert --at after:TASK --type 221 --payload "$(naddr 2 8 1 0 $V4 x)"
forged "NET_ADDR of no NET_LINK"    --expect "ifindex 5 is no NET_LINK" insert --at after:TASK --type 221 --payload "$(naddr 2 8 5 0 $V4 '')"
forged "NET_ROUTE type 0"           --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 2 8 4 0 254 0 0 0 0)"
forged "NET_ROUTE protocol kernel"  --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 2 8 2 1 254 0 0 0 0)"
forged "NET_ROUTE dst_len 129"      --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 10 129 4 1 254 0 0 0 0)"
forged "NET_ROUTE oif not said"     --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 2 8 4 1 254 0 3 0 0)"
forged "NET_ROUTE metric not in mask" --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 2 8 4 1 254 0 0 0 7)"
forged "NET_ROUTE metric mask 1<<20" --expect "bad NET_ROUTE" insert --at after:TASK --type 222 --payload "$(nroute 2 8 4 1 254 0 0 0x100000 0)"
forged "NET_ROUTE oif of no NET_LINK" --expect "ifindex 3 is no NET_LINK" insert --at after:TASK --type 222 --payload "$(nroute 2 8 4 1 254 16 3 0 0)"
forged "NET_SYSCTL path ../"        --expect "bad NET_SYSCTL" insert --at after:TASK --type 223 --payload "$(nsysctl ipv4/../../kernel/x 1)"
forged "NET_SYSCTL path bridge/"    --expect "bad NET_SYSCTL" insert --at after:TASK --type 223 --payload "$(nsysctl bridge/bridge-nf-call-iptables 1)"
forged "NET_SYSCTL path_len +1"     --expect "bad NET_SYSCTL" insert --at after:TASK --type 223 --payload "$(nsysctl ipv4/ip_forward 1 17)"
forged "NET_SYSCTL path_len 2^32-1" --expect "bad NET_SYSCTL" insert --at after:TASK --type 223 --payload "$(nsysctl ipv4/ip_forward 1 0xffffffff)"
forged "NET_SYSCTL 7 bytes"         insert --at after:TASK --type 223 --payload "$(zeros 7)"
forged "NET_IPTABLES family 5"      --expect "bad NET_IPTABLES" insert --at after:TASK --type 224 --payload "$(le 4 5)$(le 4 2)2a0a"
forged "NET_IPTABLES len +1"        --expect "bad NET_IPTABLES" insert --at after:TASK --type 224 --payload "$(le 4 4)$(le 4 3)2a0a"
forged "NET_IPTABLES a NUL"         --expect "bad NET_IPTABLES" insert --at after:TASK --type 224 --payload "$(le 4 4)$(le 4 2)2a00"
forged "NET_IPTABLES twice"         --expect "bad NET_IPTABLES" insert --at after:TASK --type 224 --payload "$(le 4 4)$(le 4 2)2a0a" \
	--type 224 --payload "$(le 4 4)$(le 4 2)2a0a"
# the root's mounts (MNT 250, MNT_FILE 251, MNT_DATA 252)
mntrec() {	# ID PARENT HOW FLAGS SB_RO SHARED MASTER PROP BIND_OF RESERVED MP TYPE SOURCE ROOT OPTS HOST
	local h= str= i v
	for v in "${@:1:9}"; do h+=$(le 4 "$v"); done
	h+=$(le 4 0)	# dev
	for v in "${@:11:6}"; do
		str+=$(strhex "$v")
		h+=$(le 4 $((${#v} + 1)))
	done
	printf '%s' "$h$(le 4 "${10}")$str"
}
mntfile() {	# MODE UID GID LINK SIZE RDEV ATIME_NS PATH [TARGET]
	local p t=
	p=$(strhex "$8")
	[ $# -gt 8 ] && t=$(strhex "$9")
	printf '%s' "$(le 4 "$1")$(le 4 "$2")$(le 4 "$3")$(le 4 "$4")$(le 8 "$5")$(le 8 "$6")$(le 8 1)$(le 8 2)$(le 4 "$7")$(le 4 0)$(le 4 $((${#p} / 2)))$(le 4 $((${#t} / 2)))$p$t"
}
mntdata() { printf '%s' "$(le 8 "$1")$(le 4 "$2")$(le 4 "${4:-0}")$3"; }	# OFF LEN BYTES-HEX [RESERVED]
MNT_ROOT=$(mntrec 10 0 3 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "mode=755" "")
MNT_DIR=$(mntfile $((0x41ed)) 0 0 0 0 0 0 "")
mnt_case() {	# NAME [--control] RECORD-TYPE PAYLOAD ...: after the root TASK
	local name=$1 opt=(--expect "MNT")
	shift
	[ "$1" = --control ] && { opt=(--control); shift; }
	local args=()
	while [ $# -gt 0 ]; do args+=(--type "$1" --payload "$2"); shift 2; done
	forged_now "$name" "${opt[@]}" insert --at after:TASK "${args[@]}"
}
alias mnt_case='mine && mnt_case'
mnt_case "control: MNT tmpfs root, its files and data" --control 250 "$MNT_ROOT" 251 "$MNT_DIR" \
	251 "$(mntfile $((0x81a4)) 1 2 0 8 0 0 a)" 252 "$(mntdata 0 4 61626364)" 252 "$(mntdata 6 2 6566)" \
	251 "$(mntfile $((0x81a4)) 1 2 2 0 0 0 b)" 251 "$(mntfile $((0xa1ff)) 0 0 0 0 0 0 l a)" \
	250 "$(mntrec 11 10 1 $((0x41)) 0 0 0 0 0 0 usr ext4 /dev/vda usr "" /usr)" \
	250 "$(mntrec 12 10 2 $((0x4e)) 0 0 0 0 0 0 proc proc proc "" "" "")" \
	250 "$(mntrec 13 10 4 64 0 0 0 0 10 0 peer tmpfs tmpfs dir "mode=755" "")"
mnt_case "MNT first with a parent"     250 "$(mntrec 10 3 3 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT first not at the root"   250 "$(mntrec 10 0 3 64 0 0 0 0 0 0 a tmpfs tmpfs "" "" "")"
mnt_case "MNT id 0"                    250 "$(mntrec 0 0 3 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT id twice"                250 "$MNT_ROOT" 250 "$MNT_ROOT"
mnt_case "MNT parent unknown"          250 "$MNT_ROOT" 250 "$(mntrec 11 99 3 64 0 0 0 0 0 0 a tmpfs tmpfs "" "" "")"
mnt_case "MNT mountpoint with .."      250 "$MNT_ROOT" 250 "$(mntrec 11 10 3 64 0 0 0 0 0 0 a/../b tmpfs tmpfs "" "" "")"
mnt_case "MNT mountpoint absolute"     250 "$MNT_ROOT" 250 "$(mntrec 11 10 3 64 0 0 0 0 0 0 /a tmpfs tmpfs "" "" "")"
mnt_case "MNT mountpoint a//b"         250 "$MNT_ROOT" 250 "$(mntrec 11 10 3 64 0 0 0 0 0 0 a//b tmpfs tmpfs "" "" "")"
mnt_case "MNT root with ."             250 "$MNT_ROOT" 250 "$(mntrec 11 10 1 64 0 0 0 0 0 0 a ext4 x ./b "" /b)"
mnt_case "MNT how 0"                   250 "$(mntrec 10 0 0 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT how 5"                   250 "$(mntrec 10 0 5 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT flags 0x100"             250 "$(mntrec 10 0 3 256 0 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT sb_ro 2"                 250 "$(mntrec 10 0 3 64 2 0 0 0 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT prop 4"                  250 "$(mntrec 10 0 3 64 0 0 0 4 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT reserved 1"              250 "$(mntrec 10 0 3 64 0 0 0 0 0 1 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT type empty"              250 "$(mntrec 10 0 1 64 0 0 0 0 0 0 "" "" x "" "" /)"
mnt_case "MNT bind, host relative"     250 "$(mntrec 10 0 1 64 0 0 0 0 0 0 "" ext4 x "" "" usr)"
mnt_case "MNT bind, host with .."      250 "$(mntrec 10 0 1 64 0 0 0 0 0 0 "" ext4 x "" "" /usr/..)"
mnt_case "MNT tmpfs with a host path"  250 "$(mntrec 10 0 3 64 0 0 0 0 0 0 "" tmpfs tmpfs "" "" /tmp)"
mnt_case "MNT tmpfs with a root"       250 "$(mntrec 10 0 3 64 0 0 0 0 0 0 "" tmpfs tmpfs sub "" "")"
mnt_case "MNT new ext4"                250 "$(mntrec 10 0 2 64 0 0 0 0 0 0 "" ext4 x "" "" "")"
mnt_case "MNT the root a peer"         250 "$(mntrec 10 0 4 64 0 0 0 0 10 0 "" tmpfs x "" "" "")"
mnt_case "MNT peer of an unknown"      250 "$MNT_ROOT" 250 "$(mntrec 11 10 4 64 0 0 0 0 77 0 a tmpfs x "" "" "")"
mnt_case "MNT bind_of set, not a peer" 250 "$MNT_ROOT" 250 "$(mntrec 11 10 3 64 0 0 0 0 10 0 a tmpfs x "" "" "")"
mnt_case "MNT slave of no group"       250 "$MNT_ROOT" 250 "$(mntrec 11 10 3 64 0 0 5 0 0 0 a tmpfs x "" "" "")"
mnt_case "MNT slave of its own group"  250 "$(mntrec 10 0 3 64 0 5 0 0 0 0 "" tmpfs tmpfs "" "" "")" \
	250 "$(mntrec 11 10 3 64 0 5 5 0 0 0 a tmpfs x "" "" "")"
mnt_case "MNT outside slave, tmpfs"    250 "$(mntrec 10 0 3 64 0 0 0 2 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT shared and unbindable"   250 "$(mntrec 10 0 3 64 0 4 0 1 0 0 "" tmpfs tmpfs "" "" "")"
mnt_case "MNT string lengths too long" 250 "$MNT_ROOT$(zeros 4)"
mnt_case "MNT string unterminated"     250 "${MNT_ROOT%00}41"
mnt_case "MNT_FILE after no MNT"       251 "$MNT_DIR"
mnt_case "MNT_FILE after a bind"       250 "$(mntrec 10 0 1 64 0 0 0 0 0 0 "" ext4 x "" "" /)" 251 "$MNT_DIR"
mnt_case "MNT_FILE first not the root" 250 "$MNT_ROOT" 251 "$(mntfile $((0x41ed)) 0 0 0 0 0 0 a)"
mnt_case "MNT_FILE root a file"        250 "$MNT_ROOT" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 0 "")"
mnt_case "MNT_FILE root twice"         250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_DIR"
mnt_case "MNT_FILE type 0"             250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x1a4)) 0 0 0 0 0 0 a)"
mnt_case "MNT_FILE mode bit 0x10000"   250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x181a4)) 0 0 0 0 0 0 a)"
mnt_case "MNT_FILE path with .."       250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 0 ../a)"
mnt_case "MNT_FILE path absolute"      250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 0 /a)"
mnt_case "MNT_FILE size of a dir"      250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x41ed)) 0 0 0 5 0 0 a)"
mnt_case "MNT_FILE size 2^40+1"        250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 $(((1 << 40) + 1)) 0 0 a)"
mnt_case "MNT_FILE rdev of a file"     250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 5 0 a)"
mnt_case "MNT_FILE atime_ns 10^9"      250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 1000000000 a)"
mnt_case "MNT_FILE symlink no target"  250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0xa1ff)) 0 0 0 0 0 0 a)"
mnt_case "MNT_FILE file with a target" 250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 0 a b)"
mnt_case "MNT_FILE link to a later"    250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 3 0 0 0 a)"
mnt_case "MNT_FILE link to a dir"      250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x41ed)) 0 0 1 0 0 0 a)"
mnt_case "MNT_FILE link to a link"     250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$(mntfile $((0x81a4)) 0 0 0 0 0 0 a)" \
	251 "$(mntfile $((0x81a4)) 0 0 2 0 0 0 b)" 251 "$(mntfile $((0x81a4)) 0 0 3 0 0 0 c)"
mnt_case "MNT_DATA after no file"      250 "$MNT_ROOT" 252 "$(mntdata 0 1 41)"
mnt_case "MNT_DATA after a dir"        250 "$MNT_ROOT" 251 "$MNT_DIR" 252 "$(mntdata 0 1 41)"
MNT_A=$(mntfile $((0x81a4)) 0 0 0 4 0 0 a)
mnt_case "MNT_DATA past the size"      250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 2 4 41424344)"
mnt_case "MNT_DATA len 0"              250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 0 0 "")"
mnt_case "MNT_DATA len not its bytes"  250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 0 3 41)"
mnt_case "MNT_DATA descending"         250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 2 1 41)" \
	252 "$(mntdata 0 1 41)"
mnt_case "MNT_DATA overlapping"        250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 0 2 4141)" \
	252 "$(mntdata 1 1 41)"
mnt_case "MNT_DATA reserved 1"         250 "$MNT_ROOT" 251 "$MNT_DIR" 251 "$MNT_A" 252 "$(mntdata 0 1 41 1)"
# the record stream
forged "header len 2^63 (VMA)"     setlen -r 'VMA#0' --len 0x8000000000000000
forged "header len 2^63 (PAGES)"   setlen -r "$big_i" --len 0x8000000000000000
forged "header len 2^64-1 (TASK)"  setlen -r TASK --len 0xffffffffffffffff
forged "header flags 1"            sethdr -r TASK --flags 1
forged "header reserved 1"         sethdr -r TASK --reserved 1
forged "record type 777"           insert --at before:TAIL --type 777 --payload 0102030405
forged "record type 777 early"     insert --at 1 --type 777 --payload 0102030405
forged "TAIL missing"              drop -r TAIL
forged "TAIL nr_records +1"        edit -r TAIL --add nr_records=1
forged "TAIL nr_records -1"        edit -r TAIL --add nr_records=-1
forged "TAIL offset +8"            edit -r TAIL --add offset=8
forged "TAIL chain wrong"          edit -r TAIL --add chain=1
forged "ERROR record" --expect "failed checkpoint" error --msg "forged: checkpoint failed midway"
# AUTH (checkpoint --key): its fields are checked without a key too; it
# covers every byte before it (so its own offset), the last before TAIL
auth() {	# MAGIC ALG RESERVED COVERED: an AUTH payload, MAC zero
	printf '%s' "$(le 8 "$1")$(le 4 "$2")$(le 4 "$3")$(le 8 "$4")$(zeros 32)"
}
AM=0x0043414d54504b43
forged "control: AUTH with a wrong MAC, no key" --control insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 "$toff")"
forged "AUTH bad magic"            --expect "malformed AUTH" insert --at before:TAIL \
	--type AUTH --payload "$(auth 0x0043414d54504b44 1 0 "$toff")"
forged "AUTH algorithm 2"          --expect "unknown algorithm 2" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 2 0 "$toff")"
forged "AUTH algorithm 0"          --expect "unknown algorithm 0" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 0 0 "$toff")"
forged "AUTH reserved 1"           --expect "malformed AUTH" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 1 "$toff")"
forged "AUTH covers 8 bytes less"  --expect "covers" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 $((toff - 8)))"
forged "AUTH covers 2^64-1 bytes"  --expect "covers" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 0xffffffffffffffff)"
forged "AUTH 8 bytes short"        --expect "malformed AUTH" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 "$toff" | head -c 96)"
forged "AUTH 8 bytes long"         --expect "malformed AUTH" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 "$toff")$(zeros 8)"
forged "AUTH empty"                --expect "malformed AUTH" insert --at before:TAIL --type AUTH
forged "AUTH not last (after HEAD)" --expect "after the AUTH record" insert --at 1 \
	--type AUTH --payload "$(auth $AM 1 0 "$off1")"
forged "AUTH twice"                --expect "after the AUTH record" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 "$toff")" --type AUTH --payload "$(auth $AM 1 0 $((toff + 88)))"
forged "AUTH then ERROR"           --expect "after the AUTH record" insert --at before:TAIL \
	--type AUTH --payload "$(auth $AM 1 0 "$toff")" --type ERROR --payload 6600
# every kind of record with an empty, a one byte short and a longer payload
declare -A done_type=()
for r in "${RECS[@]}"; do
	read -r i off type len _ <<< "$r"
	[ -z "${done_type[$type]:-}" ] || continue
	done_type[$type]=1
	for n in 0 $((len - 1)) $((len + 8)); do
		# a CPU mask of any length in words is one
		[ "$type" = THREAD_CPUS ] && [ $n -gt $len ] && continue
		[ $n -ge 0 ] && forged "$type payload $len -> $n bytes" edit -r "$type" --resize $n
	done
done

# Every case of forge.batch made from IMAGE and checked.
run_batch() {	# IMAGE
	local i
	"${FORGE[@]}" batch "$1" < "$W/forge.batch" > "$W/forge.results" 2> "$W/forge.err"
	mapfile -t RES < "$W/forge.results"
	local IN_BATCH=1
	for i in "${!FNAME[@]}"; do
		if [ "${RES[$i]:-}" != "ok ${FOUT[$i]}" ]; then
			FAILED=$((FAILED + 1))
			echo "FAIL ${FNAME[$i]}: forge.py: ${RES[$i]:-no answer} $(quote "$W/forge.err")"
		elif [ "${FPAT[$i]}" = control ]; then
			control "${FNAME[$i]}" "${FOUT[$i]}"
		else
			check "${FNAME[$i]}" "${FOUT[$i]}" "${FPAT[$i]}"
		fi
		rm -f "${FOUT[$i]}"
	done
	FNAME=() FOUT=() FPAT=()
	: > "$W/forge.batch"
}
run_batch "$GOOD"

# garbage after a complete image
{ cat "$GOOD"; printf '\0\0\0\0\0\0\0\0'; } > "$BAD"
check "8 bytes after the tail" "$BAD"
cat "$GOOD" "$GOOD" > "$BAD"
check "image twice" "$BAD"

# ---- 4. event fds ----------------------------------------------------------
# A holder with an eventfd, a timerfd and a signalfd (FILE#-3, -2, -1): its
# image restarts, and forged payloads of those kinds are refused.

rm -f "$W/go" "$W/out"	# (no READY of the last holder's: start_holder())
EVGOOD=$W/evfds.img
"$HOLDER" evfds "$W/go" > "$W/out" 2>&1 < /dev/null &
HPID=$!
for ((i = 0; i < 1000; i++)); do
	grep -q READY "$W/out" 2>/dev/null && break
	sleep 0.01
done
exec 3>&2 2>/dev/null
timeout -k 2 $CASE_TIMEOUT "$CKPT" checkpoint --kill -o "$EVGOOD" "$HPID" 2> "$W/checkpoint.err" ||
	fatal "checkpoint of the evfds holder: $(head -3 "$W/checkpoint.err" | tr '\n' ' ')"
wait "$HPID"
exec 2>&3 3>&-
PID=$HPID
HPID=
wait_dead "$PID" 3 || fatal "pid $PID still there after checkpoint --kill"
rpid=$(timeout -k 2 20 "$CKPT" restart --detach "$EVGOOD" 2> "$W/detach.err")
[ $? = 0 ] && [ "$rpid" = "$PID" ] ||
	fatal "restart --detach of the evfds image: $(head -3 "$W/detach.err" | tr '\n' ' ')"
touch "$W/go"
for ((i = 0; i < 300; i++)); do
	grep -q '^PASS' "$W/out" && break
	sleep 0.01
done
if ! grep -q '^PASS' "$W/out"; then
	echo "FAIL evfds image: the restored holder did not PASS: $(tail -1 "$W/out")"
	FAILED=$((FAILED + 1))
fi
kill -9 "$PID" 2>/dev/null
wait_dead "$PID" 5 || fatal "restored pid $PID does not go away"
wait_reaped "$PID" 5

FNAME=() FOUT=() FPAT=()
: > "$W/forge.batch"
E='FILE#-3' T='FILE#-2' S='FILE#-1'
mapfile -t EVLEN < <("${FORGE[@]}" list "$EVGOOD" | awk '$3 == "FILE" {print $4}' | tail -3)
[ ${#EVLEN[@]} = 3 ] || fatal "the evfds image has ${#EVLEN[@]} FILE records"
forged "control: evfds copy"       --control copy
forged "eventfd kind, timerfd state" edit -r "$T" --set kind=9
forged "eventfd count 2^64-1"      edit -r "$E" --set eventfd.count=0xffffffffffffffff
forged "eventfd flags 2"           edit -r "$E" --set eventfd.flags=2
forged "eventfd reserved 1"        edit -r "$E" --set eventfd.reserved=1
forged "eventfd O_APPEND"          edit -r "$E" --or flags=0o2000
forged "eventfd write-only"        edit -r "$E" --set flags=1
forged "eventfd extra_len 8"       edit -r "$E" --add extra_len=-8 --resize $((EVLEN[0] - 8))
forged "timerfd clock 99"          edit -r "$T" --set timerfd.clockid=99
forged "timerfd clock -1"          edit -r "$T" --set timerfd.clockid=-1
forged "timerfd CLOCK_PROCESS_CPUTIME" edit -r "$T" --set timerfd.clockid=2
forged "timerfd settime flags 4"   edit -r "$T" --set timerfd.settime_flags=4
forged "timerfd ticks 2^63"        edit -r "$T" --set timerfd.ticks=0x8000000000000000
forged "timerfd interval -1"       edit -r "$T" --set timerfd.interval_ns=-1
forged "timerfd value 2^62"        edit -r "$T" --set timerfd.value_ns=0x4000000000000000
forged "timerfd now -5"            edit -r "$T" --set timerfd.now_ns=-5
forged "timerfd extra_len +8"      edit -r "$T" --add extra_len=8 --resize $((EVLEN[1] + 8))
forged "signalfd SIGKILL"          edit -r "$S" --or signalfd.sigmask=0x100
forged "signalfd SIGSTOP"          edit -r "$S" --or signalfd.sigmask=0x40000
forged "signalfd O_NONBLOCK|O_ASYNC" edit -r "$S" --or flags=0o20000
forged "signalfd no payload"       edit -r "$S" --set extra_len=0 --resize $((EVLEN[2] - 8))
run_batch "$EVGOOD"
# ---- 4b. compressed records ------------------------------------------------
# The holder checkpointed with --compress (its random memory stored
# plain), two of its PAGES records then made pieces (REC_F_ZFRAME) by
# forge.py, Z a zstd frame, R stored raw: forged with every checksum
# valid, they reach the expansion's own checks (bounds, then zstd into
# a buffer of the claimed size, then the size and checksum).

ZGOOD=$W/compressed.img
good_image "$HOLDER" "$W/compressed0.img" --compress
"${FORGE[@]}" zpiece "$W/compressed0.img" "$W/compressed1.img" -r 'PAGES#0' &&
	"${FORGE[@]}" zpiece "$W/compressed1.img" "$ZGOOD" -r 'PAGES#1' --method 0 ||
	fatal "forge.py zpiece failed"
read -r Z _ _ ZLEN _ < <("${FORGE[@]}" pieces "$ZGOOD" | awk '$3 == 1' | head -1)
read -r R _ _ RLEN _ < <("${FORGE[@]}" pieces "$ZGOOD" | awk '$3 == 0' | head -1)
[ -n "$Z" ] && [ -n "$R" ] || fatal "forge.py made no zstd or raw piece"
forged "z: control: copy"             --control copy
forged "z: zstd magic"                --expect "bad zstd frame" edit -r $Z --offset 32 --bytes 00000000
forged "z: zstd frame header"         --expect "bad zstd frame" edit -r $Z --offset 36 --bytes ffffffff
forged "z: zstd frame cut"            --expect "bad zstd frame" edit -r $Z --resize 48
forged "z: zstd block bytes"          --expect "checksum mismatch once expanded" edit -r $Z --offset 44 --bytes 5a5a5a5a5a5a5a5a
forged "z: zstd block type 3"         --expect "bad zstd frame" edit -r $Z --set-u8 41=0xff
forged "z: raw_len one short"         --expect "bad zstd frame" edit -r $Z --set raw_len=$((ZLEN - 1)) --set total=$((ZLEN - 1))
forged "z: raw_len one over"          --expect "gives $ZLEN bytes, its head says $((ZLEN + 1))" edit -r $Z --set raw_len=$((ZLEN + 1)) --set total=$((ZLEN + 1))
forged "z: raw_len over total"        --expect "overruns" edit -r $Z --set raw_len=$((ZLEN + 1))
forged "z: raw_len 0"                 --expect "bad piece head" edit -r $Z --set raw_len=0
forged "z: raw_len 8 MiB + 1"         --expect "bad piece head" edit -r $Z --set raw_len=0x800001 --set total=0x800001
forged "z: bomb 1 GiB in 4096"        --expect "bad zstd frame" edit -r $Z --zbomb 0x40000000 --set raw_len=4096 --set total=4096
forged "z: bomb 8 MiB + 1"            --expect "bad zstd frame" edit -r $Z --zbomb 0x800001 --set raw_len=0x800000 --set total=0x800000
forged "z: bomb saying 2^40"          --expect "bad zstd frame" edit -r $Z --zbomb 4096 --zbomb-size 0x10000000000 --set raw_len=4096 --set total=4096
forged "z: total 2^60"                --expect "more than this machine's memory" edit -r $Z --set total=0x1000000000000000
forged "z: total 2^64-1"              --expect "more than this machine's memory" edit -r $Z --set total=0xffffffffffffffff
forged "z: record cut short"          --expect "cut short" edit -r $Z --set total=$((ZLEN + 4096))
forged "z: piece with no start"       --expect "with no start" edit -r $Z --set offset=4096 --set total=$((ZLEN + 4096))
forged "z: offset 2^64-1"             --expect "no start" edit -r $Z --set offset=0xffffffffffffffff
forged "z: method 2"                  --expect "bad piece head" edit -r $Z --set method=2
forged "z: reserved 1"                --expect "bad piece head" edit -r $Z --set reserved=1
forged "z: raw_crc wrong"             --expect "checksum mismatch once expanded" edit -r $Z --add raw_crc=1
forged "z: piece head cut"            --expect "too short" edit -r $Z --resize 31
forged "z: piece empty"               --expect "too short" edit -r $Z --resize 0
forged "z: raw piece stored short"    --expect "bad piece head" edit -r $R --resize $((RLEN + 32 - 8))
forged "z: raw piece byte"            --expect "checksum mismatch once expanded" edit -r $R --offset 40 --bytes 5a
forged "z: piece twice"               dup -r $Z
forged "z: unknown flag"              --expect "unknown flags" sethdr -r $Z --flags 3
forged "z: flag off a piece"          sethdr -r $Z --flags 0
forged "z: HEAD a piece"              sethdr -r HEAD --flags 1
forged "z: TAIL a piece"              --expect "cannot be compressed" sethdr -r TAIL --flags 1
forged "z: HEAD not compressed"       --expect "HEAD does not say" edit -r HEAD --set flags=0
run_batch "$ZGOOD"
# a piece in an image written without --compress
forged "z: a piece, plain image"      --expect "HEAD does not say" sethdr -r XSTATE --flags 1
run_batch "$GOOD"

# ---- 5. a 32-bit process's image ---------------------------------------
if [[ $HOLDER32 == *.img.gz ]]; then
	GOOD32=$W/good32.img
	gzip -dc "$HOLDER32" > "$GOOD32" || fatal "cannot read $HOLDER32"
	timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$GOOD32" > /dev/null 2> "$W/i.err" || fatal "info rejects $HOLDER32: $(quote "$W/i.err")"
	PID=$(awk '/^TASK/ { sub("pid=", "", $4); print $4; exit }' < <(timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$GOOD32"))
elif [[ $HOLDER32 == *.img ]]; then
	GOOD32=$HOLDER32
	PID=$(awk '/^TASK/ { sub("pid=", "", $4); print $4; exit }' < <(timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$GOOD32"))
elif [ -n "$HOLDER32" ]; then
	GOOD32=$W/good32.img
	good_image "$HOLDER32" "$GOOD32"
fi
if [ -n "$HOLDER32" ]; then
	forged "32: control: copy"          --control copy
	forged "32: IA32 abi 2"             edit -r IA32 --set abi=2
	forged "32: IA32 reserved 1"        edit -r IA32 --set reserved=1
	forged "32: IA32 missing"           drop -r IA32
	forged "32: IA32 after THREAD"      move -r IA32 --at after:THREAD
	forged "32: IA32 twice"             dup -r IA32
	forged "32: IA32 payload 0"         edit -r IA32 --resize 0
	forged "32: IA32_THREAD missing"    drop -r IA32_THREAD
	forged "32: IA32_THREAD twice"      dup -r IA32_THREAD
	forged "32: IA32_THREAD payload 52" edit -r IA32_THREAD --resize 52
	forged "32: IA32_THREAD payload 64" edit -r IA32_THREAD --resize 64
	forged "32: TLS entry 5"            edit -r IA32_THREAD --set tls0.entry=5
	forged "32: TLS code segment"       edit -r IA32_THREAD --set tls1.base=0x1000 --set tls1.flags=0x5
	forged "32: TLS conforming code"    edit -r IA32_THREAD --set tls1.base=0x1000 --set tls1.flags=0x7
	forged "32: TLS 64-bit (lm)"        edit -r IA32_THREAD --or tls0.flags=0x80
	forged "32: TLS not present"        edit -r IA32_THREAD --set tls1.base=0x1000 --set tls1.flags=0x21
	forged "32: TLS 16-bit"             edit -r IA32_THREAD --set tls1.base=0x1000 --set tls1.flags=0x0
	forged "32: TLS limit 2^20"         edit -r IA32_THREAD --set tls0.limit=0x100000
	forged "32: TLS reserved flag bit"  edit -r IA32_THREAD --or tls0.flags=0x100
	forged "32: robust_len 24"          edit -r IA32_THREAD --set robust_len=24
	forged "32: REGS cs 0x33 (64-bit)"  edit -r REGS --set cs=0x33
	forged "32: REGS cs 0x10 (kernel)"  edit -r REGS --set cs=0x10
	forged "32: REGS cs 0x1b"           edit -r REGS --set cs=0x1b
	forged "32: REGS ss 0x18 (kernel)"  edit -r REGS --set ss=0x18
	forged "32: REGS gs 0x60 (RPL 0)"   edit -r REGS --set gs=0x60
	forged "32: REGS gs 0x7b (entry 15)" edit -r REGS --set gs=0x7b
	forged "32: REGS es 0xf (LDT)"      edit -r REGS --set es=0xf
	forged "32: REGS fs 0x13 (kernel DS)" edit -r REGS --set fs=0x13
	forged "32: REGS eflags IOPL 3"     edit -r REGS --or eflags=0x3000
	forged "32: REGS eflags VM"         edit -r REGS --or eflags=0x20000
	forged "32: REGS eflags IF clear"   edit -r REGS --add eflags=-0x200
	forged "32: REGS rip above 4 GiB"   edit -r REGS --set rip=0x100001000
	forged "32: REGS gs_base above 4 GiB" edit -r REGS --set gs_base=0x100000000
	forged "32: SIGHAND handler 2^32"   edit -r SIGHAND --set sig10.handler=0x100000000
	# compared with this kernel's 32-bit vdso before any process exists
	# (where it has one: not from a stored image)
	if [ "$GOOD32" = "$W/good32.img" ] && [[ $HOLDER32 != *.img.gz ]]; then
		vdso_i=$(timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$GOOD32" | awk '/kind=vdso/ { print NR - 1; exit }')
		forged "32: vdso a page shorter" --expect "elsewhere:vdso layout differs" \
			edit -r "$vdso_i" --add start=0x1000
	fi
	run_batch "$GOOD32"
fi

# ---- done -----------------------------------------------------------------

if ours; then
	echo "FAIL pid $PID exists at the end"
	FAILED=$((FAILED + 1))
fi
echo "bad images: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
