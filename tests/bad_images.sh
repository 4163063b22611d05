#!/usr/bin/env bash
# bad_images.sh - ckpt against hostile images.
# usage: tests/bad_images.sh CKPT HOLDER WORKDIR [HOLDER32]
#
# Checkpoints HOLDER (tests/aux/holder), checks the image restarts once, then
# feeds ckpt truncated, bit-flipped and forged images (tests/forge.py makes
# the forged ones with every checksum valid, so they reach the semantic
# checks).  For every bad image:
#   - `ckpt restart BAD` exits 125 and `ckpt info BAD` exits 1;
#   - each prints exactly one line on stderr, starting "ckpt: ";
#   - no sanitizer report;
#   - no process with the saved pid is left.
# Prints one line per failing case, then "bad images: N cases ok, M failed";
# exits non-zero if any case failed.  Details of every case are in
# WORKDIR/cases.log, the images and messages of failed ones in WORKDIR/failed/.
set -u

if [ $# != 3 ] && [ $# != 4 ]; then
	echo "usage: $0 CKPT HOLDER WORKDIR [HOLDER32]" >&2
	exit 2
fi
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

alive() {	# PID: a process (not a zombie) has that pid
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
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

cleanup() {
	[ -n "$HPID" ] && kill -9 "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
	[ -n "$PID" ] && alive "$PID" && kill -9 "$PID" 2>/dev/null && wait_dead "$PID" 5
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
good_image() {	# HOLDER IMAGE
	local i rpid rc
	rm -f "$W/go"
	"$1" plain "$W/go" > "$W/out" 2>&1 < /dev/null &
	HPID=$!
	for ((i = 0; i < 1000; i++)); do
		grep -q READY "$W/out" 2>/dev/null && break
		sleep 0.01
	done
	grep -q READY "$W/out" || fatal "holder did not get ready: $(head -c 200 "$W/out")"
	exec 3>&2 2>/dev/null	# not bash's "Killed" notice of the holder
	if ! "$CKPT" checkpoint --kill -o "$2" "$HPID" 2> "$W/checkpoint.err"; then
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
	[ "$(wc -l < "$1")" = 1 ] && [ "$(wc -c < "$1")" -gt 0 ] &&
		[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
		head -1 "$1" | grep -q '^ckpt: '
}

quote() {	# FILE: its first lines, on one line, shortened
	head -c 300 "$1" | head -3 | tr '\n' '|' | sed 's/|$//'
}

# check NAME IMAGE [RESTART-MESSAGE-PATTERN]
# A pattern "elsewhere:PAT" marks an image that is sound but was made on
# another kind of machine: restart refuses it here, info shows it.
check() {
	local name=$1 img=$2 pat=${3:-} rc irc why=() want_irc=1
	if [[ $pat == elsewhere:* ]]; then
		pat=${pat#elsewhere:}
		want_irc=0
	fi
	timeout -k 2 $CASE_TIMEOUT "$CKPT" restart "$img" > "$W/r.out" 2> "$W/r.err" < /dev/null
	rc=$?
	timeout -k 2 $CASE_TIMEOUT "$CKPT" info "$img" > /dev/null 2> "$W/i.err" < /dev/null
	irc=$?
	if alive "$PID"; then
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
	grep -q "Sanitizer\|runtime error" "$W/r.err" && why+=("restart: sanitizer report")
	grep -q "Sanitizer\|runtime error" "$W/i.err" && why+=("info: sanitizer report")
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
	if "$CKPT" info "$2" > /dev/null 2> "$W/i.err"; then
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
"$CKPT" info --json "$GOOD" > "$W/good.json" 2> "$W/info.err" ||
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
	b=$(od -An -tu1 -j "$1" -N1 "$GOOD" | tr -d ' ')
	printf "$(printf '\\x%02x' $((b ^ 0xff)))" |
		dd of="$BAD" bs=1 seek="$1" conv=notrunc status=none
	check "flip@$1 ($2)" "$BAD"
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
forged() {
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
forged "TASK comm unterminated"    edit -r TASK --offset comm --bytes "$(printf '41%.0s' {1..16})"
forged "two TASK records"          dup -r TASK
forged "THREAD twice"              dup -r THREAD
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
# files
forged "FILE kind 99"              edit -r FILE --set kind=99
forged "FILE extra_len past end"    edit -r FILE --set extra_len=64
forged "FILE extra_len huge"        edit -r FILE --set extra_len=0xfffffff0
forged "FD of a missing file id"   edit -r FD --set file_id=99
forged "FD number repeated"        edit -r 'FD#-1' --set fd=0
forged "FD numbers out of order"   move -r FD --at after:'FD#-1'
forged "FS cwd_len 0"              edit -r FS --set cwd_len=0 --resize 8
forged "FS cwd_len 0, cwd kept"    edit -r FS --set cwd_len=0
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
# every kind of record with an empty, a one byte short and a longer payload
declare -A done_type=()
for r in "${RECS[@]}"; do
	read -r i off type len _ <<< "$r"
	[ -z "${done_type[$type]:-}" ] || continue
	done_type[$type]=1
	for n in 0 $((len - 1)) $((len + 8)); do
		[ $n -ge 0 ] && forged "$type payload $len -> $n bytes" edit -r "$type" --resize $n
	done
done

# Every case of forge.batch made from IMAGE and checked.
run_batch() {	# IMAGE
	local i
	"${FORGE[@]}" batch "$1" < "$W/forge.batch" > "$W/forge.results" 2> "$W/forge.err"
	mapfile -t RES < "$W/forge.results"
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

# ---- 4. a 32-bit process's image ---------------------------------------
if [ -n "$HOLDER32" ]; then
	GOOD32=$W/good32.img
	good_image "$HOLDER32" "$GOOD32"
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
	vdso_i=$("$CKPT" info "$GOOD32" | awk '/kind=vdso/ { print NR - 1; exit }')
	forged "32: vdso a page shorter" --expect "elsewhere:vdso layout differs" \
		edit -r "$vdso_i" --add start=0x1000
	run_batch "$GOOD32"
fi

# ---- done -----------------------------------------------------------------

if alive "$PID"; then
	echo "FAIL pid $PID exists at the end"
	FAILED=$((FAILED + 1))
fi
echo "bad images: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
