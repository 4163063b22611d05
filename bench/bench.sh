#!/usr/bin/env bash
# bench/bench.sh - how fast ckpt checkpoints and restarts a process, next to
# what this machine can move at best, measured in the same run.
#
#   bench/bench.sh            as root, from anywhere; about 2 minutes
#
# Environment (all optional):
#   CKPT=PATH      the ckpt binary to measure (default: `make build/ckpt`,
#                  then build/ckpt of this tree)
#   REPS=3         runs of every measurement (median, min and max reported)
#   TINY_REPS=5    the tiny process's rounds in each run (every tool's in
#                  turn): a few ms each, and a few ms is where the noise is
#   BIG_MIB=1024   memory of the big process, and size of the limit copies
#   SHM_DIR=/dev/shm     where the in-memory images go (a tmpfs)
#   DISK_DIR=/var/tmp    where the on-disk images go (a disk filesystem)
#   PRIME_MIB=N    memory faulted in and freed just before each timed step
#                  of the big process and of the limits (default 2*BIG_MIB
#                  + 256; 0: none).  See bench/README.md, "Priming".
#
# bench/README.md says what each number means.  Only processes this script
# started are ever signalled (by pid, after checking their command line);
# everything it made is removed on exit, failure or ^C included.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
REPS=${REPS:-3}
TINY_REPS=${TINY_REPS:-5}
BIG_MIB=${BIG_MIB:-1024}
SHM_BASE=${SHM_DIR:-/dev/shm}
DISK_BASE=${DISK_DIR:-/var/tmp}
PRIME_MIB=${PRIME_MIB:-$((2 * BIG_MIB + 256))}
export HWLIMIT_PRIME_MIB=$PRIME_MIB

WORK="" SHM="" DISK=""
PIDS=()			# every process we started that may still be alive

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/others.sh"
die() { say "bench: $*"; exit 1; }

# true if pid $1 is still one of our workloads (not a reused pid)
ours() {
	local cmd
	cmd=$(tr '\0' ' ' 2>/dev/null </proc/"$1"/cmdline) || return 1
	[[ $cmd == "$WORK/workload "* ]]
}


cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM
	set +e
	{
		for pid in "${PIDS[@]}"; do
			ours "$pid" && kill -KILL "$pid"
		done
		for pid in "${PIDS[@]}"; do
			wait "$pid"		# our own children: reaped here
			wait_gone "$pid" 5	# init's children: wait for init
		done
	} 2>/dev/null
	[ -n "$WORK" ] && rm -rf -- "$WORK"
	[ -n "$SHM" ] && rm -rf -- "$SHM"
	[ -n "$DISK" ] && rm -rf -- "$DISK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ckpt failed: show exactly what was run and what it said, then stop
ckpt_failed() {
	local rc=$1 out=$2; shift 2
	say ""
	say "bench: FAILED (exit $rc; $WORK/ckpt is a copy of $CKPT): $*"
	sed 's/^/    /' "$out" >&2
	say "    workload log:"
	sed 's/^/    /' "$WORK/workload.log" >&2
	exit 1
}

# ---------------------------------------------------------------- setup

[ "$(id -u)" = 0 ] || die "run as root (ckpt needs ptrace of any pid; drop_caches)"
command -v gcc >/dev/null || die "gcc is needed"

if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt >&2 ||
		die "make build/ckpt failed (someone mid-edit? retry in a minute)"
	CKPT=$ROOT/build/ckpt
fi
[ -x "$CKPT" ] || die "no ckpt binary at $CKPT"

WORK=$(mktemp -d /tmp/ckpt-bench.XXXXXX)
SHM=$(mktemp -d "$SHM_BASE"/ckpt-bench.XXXXXX)
DISK=$(mktemp -d "$DISK_BASE"/ckpt-bench.XXXXXX)

# our own copy, so that a rebuild by someone else mid-run changes nothing
cp "$CKPT" "$WORK/ckpt"
CK=$WORK/ckpt
gcc -std=gnu11 -O2 -Wall -Wextra -o "$WORK/workload" "$HERE/workload.c"
gcc -std=gnu11 -O2 -Wall -Wextra -pthread -o "$WORK/hwlimit" "$HERE/hwlimit.c" "$HERE/hwlimit_take.c"
HWL=$WORK/hwlimit
: >"$WORK/workload.log"

[ "$(stat -f -c %T "$SHM")" = tmpfs ] || die "$SHM_BASE is not a tmpfs"
[ "$(stat -f -c %T "$DISK")" != tmpfs ] || die "$DISK_BASE is a tmpfs, not a disk"
need_kib=$(( (2 * BIG_MIB + 256) * 1024 ))
for d in "$SHM" "$DISK"; do
	avail=$(df -Pk "$d" | awk 'NR==2 {print $4}')
	[ "$avail" -ge "$need_kib" ] ||
		die "$d has $((avail / 1024)) MiB free, needs $((need_kib / 1024))"
done
memavail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
need_mib=$((4 * BIG_MIB + PRIME_MIB + 512))
[ "$memavail" -ge $((need_mib * 1024)) ] ||
	die "MemAvailable $((memavail / 1024)) MiB is short of $need_mib MiB"

# what a cold restart must still find in the page cache: the programs
WARM=("$CK" "$WORK/workload" "$HWL" "$WORK/workload.log")
while read -r lib; do WARM+=("$lib"); done < <(
	ldd "$WORK/workload" | awk '$2 == "=>" {print $3} $1 ~ /^\// {print $1}')

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cat "${WARM[@]}" >/dev/null
}

# results: one "KEY SECONDS" line per measurement
RES=$WORK/results
: >"$RES"

# ------------------------------------------------------------- workload

PRIMING=0	# prime before the timed ckpt steps (the big process only)
prime() {
	[ "$PRIMING" = 1 ] || return 0
	"$HWL" prime "$PRIME_MIB" || die "hwlimit prime $PRIME_MIB failed"
}

READY=$WORK/ready GO=$WORK/go RESULT=$WORK/result
WPID=""

start_workload() {
	local mib=$1 deadline=$((EPOCHSECONDS + 60))
	rm -f "$READY" "$GO" "$RESULT"
	"$WORK/workload" "$mib" "$READY" "$GO" "$RESULT" \
		</dev/null >>"$WORK/workload.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	until [ -s "$READY" ]; do
		[ -e /proc/"$WPID" ] && [ "$EPOCHSECONDS" -le "$deadline" ] ||
			die "workload $mib MiB did not get ready: $(cat "$WORK/workload.log")"
		sleep 0.01
	done
}

# checkpoint --kill the workload into $2; record under $1
checkpoint() {
	local key=$1 img=$2 t0 t1 rc=0 st=0
	rm -f "$img"
	sync				# nothing else's dirty data in our fsync
	prime
	t0=${EPOCHREALTIME/./}
	# (the braces' 2>/dev/null silences bash's "Killed" note on its job)
	{ "$CK" checkpoint --kill -o "$img" "$WPID" >"$WORK/ckpt.out" 2>&1; } 2>/dev/null || rc=$?
	t1=${EPOCHREALTIME/./}
	[ "$rc" = 0 ] || ckpt_failed "$rc" "$WORK/ckpt.out" \
		"$CK" checkpoint --kill -o "$img" "$WPID"
	wait "$WPID" 2>/dev/null || st=$?
	[ "$st" = 137 ] || die "checkpointed pid $WPID ended with status $st, not SIGKILL"
	rec_us "$key.ckpt" $((t1 - t0))
	rec_s "$key.size" "$(stat -c %s "$img")"
}

# restart --detach from $2 (the process must come back as pid $WPID);
# record the return, alive and verified times under $1
restart() {
	local key=$1 img=$2 t0 t1 rc=0 rpid=""
	rm -f "$RESULT"
	touch "$GO"			# it looks for GO as soon as it runs again
	prime
	t0=${EPOCHREALTIME/./}
	"$CK" restart --detach "$img" >"$WORK/restart.out" 2>"$WORK/restart.err" || rc=$?
	t1=${EPOCHREALTIME/./}
	[ "$rc" = 0 ] || { cat "$WORK/restart.out" >>"$WORK/restart.err"
		ckpt_failed "$rc" "$WORK/restart.err" "$CK" restart --detach "$img"; }
	read -r rpid <"$WORK/restart.out" || true
	[ "$rpid" = "$WPID" ] || die "restart printed pid '$rpid', expected $WPID"
	PIDS+=("$rpid")
	await_result "$key" "$t0" "$t1" "$rpid"
}

# wait for the result of restored pid $4, whose restart ran from $2 to $3
# (us); record the return, alive and verified times under $1
await_result() {	# KEY T0 T1 RPID
	local key=$1 t0=$2 t1=$3 rpid=$4 deadline line
	deadline=$((EPOCHSECONDS + 60))
	until [ -s "$RESULT" ]; do
		[ "$EPOCHSECONDS" -le "$deadline" ] ||
			die "restored pid $rpid wrote no result in 60 s"
		[ -e /proc/"$rpid" ] && ! grep -q '^State:.Z' /proc/"$rpid"/status 2>/dev/null ||
			[ -s "$RESULT" ] || die "restored pid $rpid died without a result: $(cat "$WORK/workload.log")"
		sleep 0.01
	done
	read -r line <"$RESULT"
	[[ $line == "ok "* ]] || die "restored pid $rpid: memory not intact: $line"
	[[ $line =~ go_ns=([0-9]+).*done_ns=([0-9]+).*verify_ns=([0-9]+).*pre_verify_ns=([0-9]+) ]] ||
		die "bad result line: $line"
	rec_us "$key.restart" $((t1 - t0))
	rec_us "$key.alive" $((BASH_REMATCH[1] / 1000 - t0))
	rec_us "$key.verified" $((BASH_REMATCH[2] / 1000 - t0))
	rec_us "$key.verify" $((BASH_REMATCH[3] / 1000))
	rec_us "$key.preverify" $((BASH_REMATCH[4] / 1000))
	# it exits by itself; init reaps it in a second or two, and only then
	# is its pid free for the next restart of the same image
	wait_gone "$rpid" 15 || die "restored pid $rpid still there 15 s after its result"
	rm -f "$GO" "$RESULT"
}

# image fully out of the page cache?  (fincore: pages of it in memory)
check_cold() {
	local img=$1 res
	command -v fincore >/dev/null || return 0
	res=$(fincore -b -n -o RES "$img" 2>/dev/null | awk '{print $1}')
	[ "${res:-0}" -le 65536 ] || say "bench: warning: $res bytes of $img still cached after drop_caches"
}

bench_process() {	# NAME MIB
	local name=$1 mib=$2 img
	PRIMING=$((mib > 0 && PRIME_MIB > 0))
	# image on tmpfs
	img=$SHM/$name.img
	start_workload "$mib"
	checkpoint "$name.shm" "$img"
	restart "$name.shm" "$img"
	rm -f "$img"
	# image on disk: restart cold (image not cached), then warm (cached)
	img=$DISK/$name.img
	start_workload "$mib"
	checkpoint "$name.disk" "$img"
	drop_caches
	check_cold "$img"
	restart "$name.diskcold" "$img"
	restart "$name.diskwarm" "$img"
	rm -f "$img"
}

# ------------------------------------------- other tools (others.sh)

# Another tool's checkpoint of the workload: CMD ARGS... timed after a
# sync and the priming, into OTHER_US.  A failure (OTHER_RC) takes TOOL
# out of this run (TOOL_out STEP RC LOG), and the workload, which the
# tool left running, is killed.
other_dump() {	# TOOL STEP LOG CMD ARGS...
	local tool=$1 step=$2 log=$3 t0 t1
	shift 3
	sync
	prime
	t0=${EPOCHREALTIME/./}
	"$@"
	t1=${EPOCHREALTIME/./}
	OTHER_US=$((t1 - t0))
	[ "$OTHER_RC" = 0 ] && return 0
	"${tool}_out" "$step" "$OTHER_RC" "$log"
	{ ours "$WPID" && kill -KILL "$WPID"; wait "$WPID"; } 2>/dev/null
	return 1
}

# criu dump the workload into directory $2 (fsync'ed if $3 = fsync); record
# under $1.  A failure takes criu out of this run (other_dump).
criu_checkpoint() {	# KEY DIR [fsync]
	local key=$1 dir=$2 st=0
	other_dump criu "dump of the workload ($key)" "$WORK/criu-dump.log" \
		criu_dump "$dir" "$WPID" "${3:-}" || { rm -rf -- "$dir"; return 1; }
	wait "$WPID" 2>/dev/null || st=$?
	[ "$st" = 137 ] || die "criu-dumped pid $WPID ended with status $st, not SIGKILL"
	rec_us "$key.ckpt" "$OTHER_US"
	rec_s "$key.size" "$(criu_size "$dir")"
}

# criu restore -d from directory $2, as `restart` does for ckpt
criu_restart() {	# KEY DIR
	local key=$1 dir=$2 t0 t1
	rm -f "$RESULT"
	touch "$GO"
	prime
	t0=${EPOCHREALTIME/./}
	criu_restore "$dir"
	t1=${EPOCHREALTIME/./}
	if [ "$OTHER_RC" != 0 ]; then
		criu_out "restore ($key)" "$OTHER_RC" "$WORK/criu-restore.log"
		rm -f "$GO"
		return 1
	fi
	[ "$OTHER_PID" = "$WPID" ] || die "criu restore wrote pid '$OTHER_PID', expected $WPID"
	PIDS+=("$OTHER_PID")
	await_result "$key" "$t0" "$t1" "$OTHER_PID"
}

# what bench_process does for ckpt, with criu, if it is there and works
criu_process() {	# NAME MIB WHAT
	local name=criu.$1 mib=$2 dir f
	criu_usable || return 0
	say "bench: $3"
	PRIMING=$((mib > 0 && PRIME_MIB > 0))
	dir=$SHM/$name
	start_workload "$mib"
	criu_checkpoint "$name.shm" "$dir" || return 0
	criu_restart "$name.shm" "$dir" || { rm -rf -- "$dir"; return 0; }
	rm -rf -- "$dir"
	dir=$DISK/$name
	start_workload "$mib"
	criu_checkpoint "$name.disk" "$dir" fsync || return 0
	drop_caches
	for f in "$dir"/*; do check_cold "$f"; done
	criu_restart "$name.diskcold" "$dir" &&
		criu_restart "$name.diskwarm" "$dir" || true
	rm -rf -- "$dir"
}

# The workload under DMTCP checkpointed into directory $2 and killed,
# record under $1.  A failure takes DMTCP out of this run (other_dump).
dmtcp_checkpoint() {	# KEY DIR
	local key=$1 dir=$2
	other_dump dmtcp "checkpoint of the workload ($key)" "$WORK/dmtcp-cmd.log" \
		dmtcp_dump "$WPID" || return 1
	rec_us "$key.ckpt" "$OTHER_US"
	rec_s "$key.size" "$(dmtcp_size "$dir")"
}

# dmtcp_restart from directory $2: it returns only when the process
# ends, so its "restart" is until the process is alive again
dmtcp_restart() {	# KEY DIR
	local key=$1 dir=$2 t0
	rm -f "$RESULT"
	touch "$GO"
	prime
	t0=${EPOCHREALTIME/./}
	dmtcp_restore "$dir"
	if [ "$OTHER_RC" != 0 ]; then
		dmtcp_out "restart ($key)" "$OTHER_RC" "$WORK/dmtcp-restart.log"
		rm -f "$GO"
		return 1
	fi
	PIDS+=("$OTHER_PID")
	until [ -s "$RESULT" ] || ! kill -0 "$OTHER_PID" 2>/dev/null; do sleep 0.005; done
	if [ ! -s "$RESULT" ]; then
		dmtcp_out "restart ($key)" 1 "$WORK/dmtcp-restart.log"
		return 1
	fi
	await_result "$key" "$t0" "$t0" "$OTHER_PID"
	rec_us "$key.restart" "$(awk -v k="$key.alive" '$1 == k {v = $2} END {printf "%d", v * 1e6}' "$RES")"
	wait "$OTHER_PID" 2>/dev/null || true
}

# the workload of $2 MiB under DMTCP, images on /dev/shm, if DMTCP is
# there and works
dmtcp_process() {	# NAME MIB WHAT
	local name=dmtcp.$1 mib=$2 dir
	dmtcp_usable || return 0
	say "bench: $3"
	PRIMING=$((mib > 0 && PRIME_MIB > 0))
	dir=$SHM/$name
	rm -f "$READY" "$GO" "$RESULT"
	dmtcp_start "$dir" "$WORK/workload" "$mib" "$READY" "$GO" "$RESULT"
	WPID=$OTHER_PID
	PIDS+=("$WPID")
	until [ -s "$READY" ]; do
		kill -0 "$WPID" 2>/dev/null || { dmtcp_out "launch" 1 "$WORK/dmtcp.log"; return 0; }
		sleep 0.01
	done
	dmtcp_checkpoint "$name.shm" "$dir" || { rm -rf -- "$dir"; return 0; }
	dmtcp_restart "$name.shm" "$dir" || true
	rm -rf -- "$dir"
}

# run hwlimit with the arguments after $1, record its seconds under $1
lim() {
	local key=$1 v
	shift
	v=$("$HWL" "$@") || die "hwlimit $* failed"
	rec_s "$key" "$v"
}

bench_limits() {
	local v f a b c
	v=$("$HWL" memcpy "$BIG_MIB") || die "hwlimit memcpy failed"
	read -r a b c <<<"$v"
	rec_s limit.memcpy "$a"
	rec_s limit.fault "$b"
	rec_s limit.memcpyfresh "$c"
	f=$SHM/limit.bin
	lim limit.shm.write write "$f" "$BIG_MIB"
	lim limit.shm.read read "$f"
	# every way to place pages into fresh memory, one CPU and all
	for how in populate popwrite hugepage uffd uffdbuf; do
		lim limit.shm.place.$how place $how "$f"
		lim limit.shm.place.$how.all place $how "$f" "$(nproc)"
	done
	# every way to take another process's pages into an image file
	for how in vmread procmem vmsplice mmap direct; do
		lim limit.shm.take.$how take $how "$f" "$BIG_MIB"
		lim limit.shm.take.$how.all take $how "$f" "$BIG_MIB" "$(nproc)"
	done
	rm -f "$f"
	f=$DISK/limit.bin
	sync
	lim limit.disk.write write "$f" "$BIG_MIB"
	for how in vmread direct; do
		lim limit.disk.take.$how.all take $how "$f" "$BIG_MIB" "$(nproc)"
	done
	drop_caches
	check_cold "$f"
	lim limit.diskcold.read read "$f"
	lim limit.diskwarm.read read "$f"
	rm -f "$f"
}

# ----------------------------------------------------------------- runs

T_START=$EPOCHSECONDS
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= REPS; r++)); do
	say "bench: run $r/$REPS: hardware limits"
	bench_limits
	say "bench: run $r/$REPS: $BIG_MIB MiB process"
	bench_process big "$BIG_MIB"
	criu_process big "$BIG_MIB" "run $r/$REPS: criu, $BIG_MIB MiB process"
	dmtcp_process big "$BIG_MIB" "run $r/$REPS: dmtcp, $BIG_MIB MiB process"
	for ((k = 1; k <= TINY_REPS; k++)); do
		say "bench: run $r/$REPS: tiny process, round $k/$TINY_REPS"
		bench_process tiny 0
		criu_process tiny 0 "run $r/$REPS: criu, tiny process, round $k/$TINY_REPS"
		dmtcp_process tiny 0 "run $r/$REPS: dmtcp, tiny process, round $k/$TINY_REPS"
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --------------------------------------------------------------- report

rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$ROOT" status --porcelain -- src include Makefile 2>/dev/null | grep -q . && echo '+local changes' || true)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')
diskdev=$(df -P "$DISK" | awk 'NR==2 {print $1}')
disktype=$(findmnt -n -o FSTYPE -T "$DISK" 2>/dev/null || stat -f -c %T "$DISK")

cat <<EOF

ckpt benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), ckpt $rev$dirty
machine: $(nproc) CPUs ($cpu), $(awk '/^MemTotal:/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r), THP $thp
images:  /dev/shm = $SHM ($(stat -f -c %T "$SHM")); disk = $DISK ($disktype on $diskdev)
load average before/after: $LOAD0 / $LOAD1;  total bench time $((EPOCHSECONDS - T_START)) s
priming: $PRIME_MIB MiB faulted in and freed just before each timed step of the big process and limits
EOF

awk -v reps="$REPS" -v treps="$TINY_REPS" -v mib="$BIG_MIB" -v criu_why="$CRIU_WHY" -v criu_desc="$(criu_desc)" -v dmtcp="$(dmtcp_status)" '
function median(k,   n, i, j, t, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++) a[i] = val[k, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) {
		t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	lo[k] = a[1]; hi[k] = a[n]
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function ms(s) { return sprintf("%9.1f ms", s * 1000) }	# 12 wide
# one timing row: label, key, bytes moved (0: no GB/s), limit key
function row(label, k, bytes, lk,   m, g, lm, lg, s) {
	if (!(k in cnt)) return
	m = median(k)
	s = sprintf("  %-38s %s  [%8.1f - %8.1f]", label, ms(m), lo[k] * 1000, hi[k] * 1000)
	if (bytes > 0) {
		g = bytes / m / 1e9
		s = s sprintf("  %11.2f", g)
		if (lk != "" && (lk in cnt)) {
			lm = median(lk); lg = LB / lm / 1e9
			s = s sprintf("  %11.2f  %4.0f%%  %5.2fx", lg, 100 * g / lg, lg / g)
		}
	}
	print s
}
function size(k) { return (k in cnt) ? median(k) : 0 }
# the key of the fastest "hwlimit take" of PFX, each HOW then SFX
function best(pfx, sfx,   i, k, m, bk, bm) {
	for (i = 1; i <= ntakes; i++) {
		k = pfx "." takes[i, 1] sfx
		if (!(k in cnt)) continue
		m = median(k)
		if (bk == "" || m < bm) { bk = k; bm = m }
	}
	return bk
}
function head(t, lim) {
	print ""
	print t
	if (lim)
		printf "  %-38s %12s  [%8s - %8s]  %11s\n", "", "median", "min", "max", "GB/s"
	else
		printf "  %-38s %12s  [%8s - %8s]  %11s  %11s  %5s  %6s\n", "", "median", "min", "max", "ckpt GB/s", "limit GB/s", "%lim", "slower"
}
# one row of the comparison: ckpt median, then criu median [min - max] and
# criu median / ckpt median
function cmp(label, k, tool,   a, b) {
	if (tool == "") tool = "criu"
	if (!((tool "." k) in cnt) || !(k in cnt)) return
	a = median(k); b = median(tool "." k)
	printf "  %-38s %s  %s  [%8.1f - %8.1f]  %6.2fx\n", label, ms(a), ms(b),
		lo[tool "." k] * 1000, hi[tool "." k] * 1000, b / a
}
# the columns of the block of a tool
function cmp_head(tool) {
	printf "  %-38s %12s  %12s  [%8s - %8s]  %7s\n", "", "ckpt median", tool " median", "min", "max", "x"
}
# the process N (big or tiny) in the block of a tool: the sizes of the
# images; false if the tool has none of it
function cmp_process(n, tool) {
	if (!((tool "." n ".shm.size") in cnt)) return 0
	printf "  %s: image %d bytes (ckpt), %d bytes (%s)\n",
		n == "big" ? sprintf("%d MiB process", mib) : "tiny process",
		size(n ".shm.size"), size(tool "." n ".shm.size"), tool
	return 1
}
function dmtcp_rows(   p, n) {
	if (!("dmtcp.big.shm.ckpt" in cnt) && !("dmtcp.tiny.shm.ckpt" in cnt)) return
	print ""
	print "(dmtcp = the workload started under `dmtcp_launch --no-gzip`; `dmtcp_command --bcheckpoint`, then"
	print "`--kill`, timed until the process is gone; `dmtcp_restart`, which becomes the process and does not"
	print "return: its restart is until alive; x = dmtcp median / ckpt median)"
	cmp_head("dmtcp")
	for (p = 1; p <= 2; p++) {
		n = p == 1 ? "big" : "tiny"
		if (!cmp_process(n, "dmtcp")) continue
		cmp("checkpoint -> /dev/shm", n ".shm.ckpt", "dmtcp")
		cmp("restart <- /dev/shm, until alive", n ".shm.alive", "dmtcp")
		cmp("  until memory verified", n ".shm.verified", "dmtcp")
	}
}
function others(   p, n, have) {
	print ""
	print "other tools on the same workloads, same run"
	have = ("criu.big.shm.ckpt" in cnt) || ("criu.tiny.shm.ckpt" in cnt)
	if (have) {
		print "(ckpt rows as above; criu = `criu dump --shell-job` (kills the tree; + fsync of its files to disk) and"
		print "`criu restore --shell-job -d`, with the same clocks; x = criu median / ckpt median)"
		cmp_head("criu")
		for (p = 1; p <= 2; p++) {
			n = p == 1 ? "big" : "tiny"
			if (!cmp_process(n, "criu")) continue
			cmp("checkpoint -> /dev/shm", n ".shm.ckpt")
			cmp("restart <- /dev/shm", n ".shm.restart")
			cmp("  until alive", n ".shm.alive")
			cmp("  until memory verified", n ".shm.verified")
			cmp("checkpoint -> disk (fsync)", n ".disk.ckpt")
			cmp("restart <- disk, cold cache", n ".diskcold.restart")
			cmp("  until alive", n ".diskcold.alive")
			cmp("restart <- disk, warm cache", n ".diskwarm.restart")
			cmp("  until alive", n ".diskwarm.alive")
		}
	}
	dmtcp_rows()
	if (criu_why == "")
		print "  criu:  measured: " criu_desc
	else
		printf "  criu:  not available%s: %s\n", have ? " for the rest" : "", criu_why
	print "  dmtcp: " dmtcp
}
{ cnt[$1]++; val[$1, cnt[$1]] = $2 }
END {
	LB = mib * 1048576
	ntakes = split("vmread procmem vmsplice mmap direct", tk, " ")
	split("vm_readv + pwrite|/proc/PID/mem + pwrite|vmsplice + splice (CRIU)|vm_readv into the file mmap|vm_readv + O_DIRECT pwrite", td, "|")
	for (i = 1; i <= ntakes; i++) { takes[i, 1] = tk[i]; takes[i, 2] = td[i] }
	printf "\n%d runs of each (the tiny process %d); median [min - max] in ms; GB/s = 10^9 bytes/s of the image (ckpt) or of %d MiB (limits);\n", reps, reps * treps, mib
	print "%lim = ckpt GB/s as a share of the limit GB/s; slower = limit GB/s / ckpt GB/s."
	print "restart = until `ckpt restart --detach` returns; alive = until the restored process next polls its"
	print "GO file; verified = until it has checked all its memory (includes its own verify pass, shown below)."
	print "limit of checkpoint -> X: write(2) -> X + fsync; of restart <- X: read(2) X -> fresh mmap (same cache state)."
	for (p = 1; p <= 2; p++) {
		n = p == 1 ? "big" : "tiny"
		b = size(n ".shm.size")
		if (p == 1)
			head(sprintf("%d MiB process, image %d bytes on /dev/shm, %d on disk", mib, b, size(n ".disk.size")))
		else
			head(sprintf("tiny process (no extra memory), image %d bytes", b))
		g = p == 1			# GB/s only for the big one
		row("checkpoint --kill -> /dev/shm", n ".shm.ckpt", g * b, "limit.shm.write")
		row("  against the best way out, all CPUs", n ".shm.ckpt", g * b, best("limit.shm.take", ".all"))
		row("restart <- /dev/shm", n ".shm.restart", g * b, "limit.shm.read")
		row("  against UFFDIO_COPY, one CPU", n ".shm.restart", g * b, "limit.shm.place.uffd")
		row("  against UFFDIO_COPY via a buffer, all CPUs", n ".shm.restart", g * b, "limit.shm.place.uffdbuf.all")
		row("  until alive", n ".shm.alive", 0, "")
		row("  until memory verified", n ".shm.verified", 0, "")
		row("checkpoint --kill -> disk (fsync)", n ".disk.ckpt", g * b, "limit.disk.write")
		row("  against the best way out, all CPUs", n ".disk.ckpt", g * b, best("limit.disk.take", ".all"))
		row("restart <- disk, cold cache", n ".diskcold.restart", g * b, "limit.diskcold.read")
		row("  until alive", n ".diskcold.alive", 0, "")
		row("  until memory verified", n ".diskcold.verified", 0, "")
		row("restart <- disk, warm cache", n ".diskwarm.restart", g * b, "limit.diskwarm.read")
		row("  until alive", n ".diskwarm.alive", 0, "")
		row("  until memory verified", n ".diskwarm.verified", 0, "")
		if (p == 1) {
			row("workload verify pass, before ckpt", n ".shm.preverify", 0, "")
			row("workload verify pass, after restart", n ".shm.verify", 0, "")
		}
	}
	head(sprintf("hardware limits, %d MiB, same run", mib), 1)
	row("memcpy, destination already faulted", "limit.memcpy", LB, "")
	row("page faults: 1 write per fresh page", "limit.fault", LB, "")
	row("memcpy into fresh mmap (+ faults)", "limit.memcpyfresh", LB, "")
	row("write(2) -> /dev/shm file + fsync", "limit.shm.write", LB, "")
	row("read(2) /dev/shm file -> fresh mmap", "limit.shm.read", LB, "")
	row("  MAP_POPULATE, then read(2)", "limit.shm.place.populate", LB, "")
	row("  MADV_POPULATE_WRITE, then read(2)", "limit.shm.place.popwrite", LB, "")
	row("  MADV_HUGEPAGE, then read(2)", "limit.shm.place.hugepage", LB, "")
	row("  UFFDIO_COPY from the file mapped", "limit.shm.place.uffd", LB, "")
	row("  UFFDIO_COPY from a buffer pread(2) fills", "limit.shm.place.uffdbuf", LB, "")
	print "  the same five, split over all CPUs:"
	row("  MAP_POPULATE, then read(2)", "limit.shm.place.populate.all", LB, "")
	row("  MADV_POPULATE_WRITE, then read(2)", "limit.shm.place.popwrite.all", LB, "")
	row("  MADV_HUGEPAGE, then read(2)", "limit.shm.place.hugepage.all", LB, "")
	row("  UFFDIO_COPY from the file mapped", "limit.shm.place.uffd.all", LB, "")
	row("  UFFDIO_COPY from a buffer pread(2) fills", "limit.shm.place.uffdbuf.all", LB, "")
	print "  the memory of another process -> /dev/shm file + fsync (hwlimit take), one CPU, then all:"
	for (i = 1; i <= ntakes; i++) {
		row("  " takes[i, 2], "limit.shm.take." takes[i, 1], LB, "")
		row("  " takes[i, 2] ", all CPUs", "limit.shm.take." takes[i, 1] ".all", LB, "")
	}
	row("write(2) -> disk file + fsync", "limit.disk.write", LB, "")
	row("  vm_readv + pwrite, all CPUs", "limit.disk.take.vmread.all", LB, "")
	row("  vm_readv + O_DIRECT pwrite, all CPUs", "limit.disk.take.direct.all", LB, "")
	row("read(2) disk file -> fresh mmap, cold", "limit.diskcold.read", LB, "")
	row("read(2) disk file -> fresh mmap, warm", "limit.diskwarm.read", LB, "")
	others()
}' "$RES"
