#!/usr/bin/env bash
# bench/tree.sh - how long ckpt takes to checkpoint and restart a tree of
# 100 small processes and one process with 64 threads, next to a single
# tiny process measured in the same run.
#
#   bench/tree.sh             as root, from anywhere; about 25 s
#
# Environment (all optional):
#   CKPT=PATH      the ckpt binary to measure (default: `make build/ckpt`,
#                  then build/ckpt of this tree)
#   REPS=5         runs of every measurement (median, min and max reported)
#   PROCS=100      processes in the tree (the root and PROCS-1 children)
#   THREADS=64     threads of the multi-threaded process (main included)
#   SHM_DIR=/dev/shm   where the images go (a tmpfs)
#
# bench/README.md ("tree.sh") says what each number means.  Only processes
# this script started, or restored, are ever signalled (by pid, after
# checking their command line); everything it made is removed on exit,
# failure or ^C included, and it waits until every such pid has left /proc.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
REPS=${REPS:-5}
PROCS=${PROCS:-100}
THREADS=${THREADS:-64}
SHM_BASE=${SHM_DIR:-/dev/shm}

WORK="" SHM=""
PIDS=()			# every pid we started or restored that may still exist

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/others.sh"
die() { say "tree: $*"; exit 1; }

# true if pid $1 is still one of our tree processes (not a reused pid, not
# a zombie: a zombie's cmdline is empty).  Builtins only: it runs per pid.
ours() {
	local -a args=()
	mapfile -d '' -t args 2>/dev/null </proc/"$1"/cmdline || return 1
	[ "${args[0]:-}" = "$WORK/tree" ]
}


# set ST to the state letter of pid $1 (R, S, Z...), empty if it is gone
# (no command substitution: that would fork on every poll)
ST=""
state() {
	local s=""
	read -r s 2>/dev/null </proc/"$1"/stat || true
	s=${s##*) }
	ST=${s%% *}
}

# forget the pids that have left /proc
prune() {
	local pid keep=()
	for pid in "${PIDS[@]}"; do
		[ -e /proc/"$pid" ] && keep+=("$pid")
	done
	PIDS=("${keep[@]}")
}

cleanup() {
	local rc=$? pid
	trap - EXIT
	trap '' INT TERM	# a second ^C must not cut the cleanup short
	set +e
	{
		for pid in "${PIDS[@]}"; do
			ours "$pid" && kill -KILL "$pid"
		done
		for pid in "${PIDS[@]}"; do
			wait "$pid"		# our own children: reaped here
			wait_gone "$pid" 10 ||	# init's children: wait for init
				say "tree: warning: pid $pid still in /proc after 10 s"
		done
	} 2>/dev/null
	[ -n "$WORK" ] && rm -rf -- "$WORK"
	[ -n "$SHM" ] && rm -rf -- "$SHM"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ckpt failed: show exactly what was run and what it said, then stop
ckpt_failed() {
	local rc=$1 out=$2; shift 2
	say ""
	say "tree: FAILED (exit $rc; $WORK/ckpt is a copy of $CKPT): $*"
	sed 's/^/    /' "$out" >&2
	say "    workload log:"
	sed 's/^/    /' "$WORK/tree.log" >&2
	exit 1
}

# ---------------------------------------------------------------- setup

[ "$(id -u)" = 0 ] || die "run as root (ckpt needs ptrace of any pid)"
command -v gcc >/dev/null || die "gcc is needed"
[ "$PROCS" -ge 2 ] && [ "$THREADS" -ge 2 ] || die "PROCS and THREADS must be at least 2"

if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt >&2 ||
		die "make build/ckpt failed (someone mid-edit? retry in a minute)"
	CKPT=$ROOT/build/ckpt
fi
[ -x "$CKPT" ] || die "no ckpt binary at $CKPT"

WORK=$(mktemp -d /tmp/ckpt-tree.XXXXXX)
SHM=$(mktemp -d "$SHM_BASE"/ckpt-tree.XXXXXX)
[ "$(stat -f -c %T "$SHM")" = tmpfs ] || die "$SHM_BASE is not a tmpfs"

# our own copy, so that a rebuild by someone else mid-run changes nothing
cp "$CKPT" "$WORK/ckpt"
CK=$WORK/ckpt
gcc -std=gnu11 -O2 -Wall -Wextra -pthread -o "$WORK/tree" "$HERE/tree.c"
: >"$WORK/tree.log"

# results: one "KEY VALUE" line per measurement (seconds, or bytes)
RES=$WORK/results
: >"$RES"

# ------------------------------------------------------------- workload

READY=$WORK/ready GO=$WORK/go DONE=$WORK/done RESULT=$WORK/result
TPID=""		# the root process
IDS=()		# every pid (procs) or tid (threads) of it, root first

start_tree() {	# MODE N
	local mode=$1 n=$2 deadline=$((EPOCHSECONDS + 30))
	local -a kids=()
	rm -f "$READY" "$GO" "$DONE" "$RESULT"
	"$WORK/tree" "$mode" "$n" "$READY" "$GO" "$DONE" "$RESULT" \
		</dev/null >>"$WORK/tree.log" 2>&1 &
	TPID=$!
	PIDS+=("$TPID")
	until [ -s "$READY" ]; do
		[ -e /proc/"$TPID" ] && [ "$EPOCHSECONDS" -le "$deadline" ] ||
			die "tree $mode $n did not get ready: $(cat "$WORK/tree.log")"
		sleep 0.01
	done
	# who is there, from the kernel's point of view
	IDS=("$TPID")
	if [ "$mode" = procs ]; then
		read -r -a kids </proc/"$TPID"/task/"$TPID"/children || true
		IDS+=("${kids[@]}")
		PIDS+=("${kids[@]}")
	else
		local t
		for t in /proc/"$TPID"/task/*; do
			[ "${t##*/}" = "$TPID" ] || IDS+=("${t##*/}")
		done
	fi
	[ "${#IDS[@]}" = "$n" ] ||
		die "tree $mode $n: the kernel shows ${#IDS[@]} processes/threads, not $n"
}

# checkpoint --kill the tree into $2; record under $1; sets T_CKPT0
checkpoint() {
	local key=$1 img=$2 t1 rc=0 st=0
	rm -f "$img"
	sync
	T_CKPT0=${EPOCHREALTIME/./}
	# (the braces' 2>/dev/null silences bash's "Killed" note on its job)
	{ "$CK" checkpoint --kill -o "$img" "$TPID" >"$WORK/ckpt.out" 2>&1; } 2>/dev/null || rc=$?
	t1=${EPOCHREALTIME/./}
	[ "$rc" = 0 ] || ckpt_failed "$rc" "$WORK/ckpt.out" \
		"$CK" checkpoint --kill -o "$img" "$TPID"
	wait "$TPID" 2>/dev/null || st=$?	# the root is ours: reap it now
	[ "$st" = 137 ] || die "checkpointed pid $TPID ended with status $st, not SIGKILL"
	rec_us "$key.ckpt" $((t1 - T_CKPT0))
	rec_s "$key.size" "$(stat -c %s "$img")"
}

# poll until none of IDS is in /proc any more; record the wait under $1
wait_ids_free() {
	local key=$1 t0 id deadline=$((EPOCHSECONDS + 30))
	t0=${EPOCHREALTIME/./}
	for id in "${IDS[@]}"; do
		while [ -e /proc/"$id" ]; do
			[ "$EPOCHSECONDS" -le "$deadline" ] ||
				die "saved pid $id still in /proc 30 s after the checkpoint"
			sleep 0.005
		done
	done
	rec_us "$key.free" $((${EPOCHREALTIME/./} - t0))
}

# restart --detach from $2 and wait until every one of IDS has reported;
# record under $1 the restart time, the first and the last report
restart() {
	local key=$1 img=$2 t0 t1 rc=0 rpid=""
	rm -f "$RESULT" "$DONE"
	touch "$GO"			# they look for GO as soon as they run again
	t0=${EPOCHREALTIME/./}
	"$CK" restart --detach "$img" >"$WORK/restart.out" 2>"$WORK/restart.err" || rc=$?
	t1=${EPOCHREALTIME/./}
	[ "$rc" = 0 ] || { cat "$WORK/restart.out" >>"$WORK/restart.err"
		ckpt_failed "$rc" "$WORK/restart.err" "$CK" restart --detach "$img"; }
	read -r rpid <"$WORK/restart.out" || true
	[ "$rpid" = "$TPID" ] || die "restart printed pid '$rpid', expected $TPID"
	await_tree "$key" "$t0" "$t1"
}

# wait until every one of IDS, restored by a restart that ran from $2 to
# $3 (us), has reported; record under $1 the restart time, the first and
# the last report; then let them go and wait until the root has exited
await_tree() {	# KEY T0 T1
	local key=$1 t0=$2 t1=$3 n=${#IDS[@]} deadline line id go
	local first=0 last=0
	local -a lines=()
	local -A want=() seen=()
	for id in "${IDS[@]}"; do want[$id]=1; done
	PIDS+=("${IDS[@]}")
	deadline=$((EPOCHSECONDS + 30))
	while :; do
		lines=()
		[ -e "$RESULT" ] && mapfile -t lines <"$RESULT"
		[ "${#lines[@]}" -lt "$n" ] || break
		[ "$EPOCHSECONDS" -le "$deadline" ] ||
			die "only ${#lines[@]} of $n restored processes/threads reported in 30 s: $(cat "$WORK/tree.log")"
		state "$TPID"
		[ -n "$ST" ] && [ "$ST" != Z ] ||
			die "restored root $TPID ended before all reported (${#lines[@]} of $n): $(cat "$WORK/tree.log")"
		sleep 0.005
	done
	[ "${#lines[@]}" = "$n" ] || die "$n restored, but ${#lines[@]} reports"
	for line in "${lines[@]}"; do
		[[ $line =~ ^([0-9]+)\ ([0-9]+)$ ]] || die "bad report line: '$line'"
		id=${BASH_REMATCH[1]} go=${BASH_REMATCH[2]}
		[ -n "${want[$id]:-}" ] || die "report from $id, which was not in the checkpointed tree"
		[ -z "${seen[$id]:-}" ] || die "two reports from $id"
		seen[$id]=1
		go=$((go / 1000))
		[ "$first" != 0 ] && [ "$first" -le "$go" ] || first=$go
		[ "$last" -ge "$go" ] || last=$go
	done
	rec_us "$key.restart" $((t1 - t0))
	rec_us "$key.first" $((first - t0))
	rec_us "$key.all" $((last - t0))
	[ -z "${T_CKPT0:-}" ] || rec_us "$key.e2e" $((last - T_CKPT0))
	# let them go, and wait until they have: the root reaps its children
	# (or joins its threads) before it exits; init reaps the root later
	# (cleanup waits for that)
	touch "$DONE"
	deadline=$((EPOCHSECONDS + 10))
	state "$TPID"
	while [ -n "$ST" ] && [ "$ST" != Z ]; do
		[ "$EPOCHSECONDS" -le "$deadline" ] || die "restored root $TPID did not exit 10 s after DONE"
		sleep 0.01
		state "$TPID"
	done
	rm -f "$GO" "$DONE" "$RESULT"
	prune
}

bench_one() {	# NAME MODE N
	local name=$1 mode=$2 n=$3 img=$SHM/$1.img
	# A: wait until the checkpointed pids are free, then time the restart
	start_tree "$mode" "$n"
	checkpoint "$name.A" "$img"
	wait_ids_free "$name.A"
	T_CKPT0=""
	restart "$name.A" "$img"
	rm -f "$img"
	# B: restart at once; ckpt itself waits for the zombies' pids
	start_tree "$mode" "$n"
	checkpoint "$name.B" "$img"
	restart "$name.B" "$img"
	rm -f "$img"
}

# ------------------------------------------- other tools (others.sh)

# block A of bench_one with criu, if it is there and works: dump the tree
# (criu kills it), wait until its pids are free, restore it detached.  A
# failure takes criu out of this run; a tree criu left running is killed.
criu_bench_one() {	# NAME MODE N WHAT
	local name=criu.$1 mode=$2 n=$3 dir=$SHM/criu.$1 t0 t1 st=0 id
	criu_usable || return 0
	say "tree: $4"
	start_tree "$mode" "$n"
	sync
	t0=${EPOCHREALTIME/./}
	criu_dump "$dir" "$TPID"
	t1=${EPOCHREALTIME/./}
	if [ "$OTHER_RC" != 0 ]; then
		criu_out "dump of the workload ($1)" "$OTHER_RC" "$WORK/criu-dump.log"
		for id in "${IDS[@]}"; do
			! ours "$id" || kill -KILL "$id" 2>/dev/null || true
		done
		wait "$TPID" 2>/dev/null || true
		rm -rf -- "$dir"
		return 0
	fi
	wait "$TPID" 2>/dev/null || st=$?
	[ "$st" = 137 ] || die "criu-dumped pid $TPID ended with status $st, not SIGKILL"
	rec_us "$name.A.ckpt" $((t1 - t0))
	rec_s "$name.A.size" "$(criu_size "$dir")"
	wait_ids_free "$name.A"
	rm -f "$RESULT" "$DONE"
	touch "$GO"
	t0=${EPOCHREALTIME/./}
	criu_restore "$dir"
	t1=${EPOCHREALTIME/./}
	if [ "$OTHER_RC" != 0 ]; then
		criu_out "restore ($1)" "$OTHER_RC" "$WORK/criu-restore.log"
		rm -rf -- "$dir"
		rm -f "$GO"
		return 0
	fi
	[ "$OTHER_PID" = "$TPID" ] || die "criu restore wrote pid '$OTHER_PID', expected $TPID"
	T_CKPT0=""
	await_tree "$name.A" "$t0" "$t1"
	rm -rf -- "$dir"
}

# ----------------------------------------------------------------- runs

# CPU pressure: the share of the run in which some task waited for a CPU
psi_cpu() { awk -F'total=' '/^some/ {print $2}' /proc/pressure/cpu 2>/dev/null || true; }
T_START=$EPOCHSECONDS
T_START_US=${EPOCHREALTIME/./}
PSI0=$(psi_cpu)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= REPS; r++)); do
	say "tree: run $r/$REPS: tiny process"
	bench_one tiny procs 1
	say "tree: run $r/$REPS: tree of $PROCS processes"
	bench_one tree procs "$PROCS"
	say "tree: run $r/$REPS: process with $THREADS threads"
	bench_one threads threads "$THREADS"
	criu_bench_one tiny procs 1 "run $r/$REPS: criu, tiny process"
	criu_bench_one tree procs "$PROCS" "run $r/$REPS: criu, tree of $PROCS processes"
	criu_bench_one threads threads "$THREADS" "run $r/$REPS: criu, process with $THREADS threads"
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
PSI1=$(psi_cpu)
psi="?"
[ -z "$PSI0" ] || [ -z "$PSI1" ] ||
	psi="$(( (PSI1 - PSI0) * 100 / (${EPOCHREALTIME/./} - T_START_US) ))%"

# --------------------------------------------------------------- report

rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$ROOT" status --porcelain -- src include Makefile 2>/dev/null | grep -q . && echo '+local changes' || true)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)

cat <<EOF

ckpt tree benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), ckpt $rev$dirty
machine: $(nproc) CPUs ($cpu), $(awk '/^MemTotal:/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r)
images:  $SHM ($(stat -f -c %T "$SHM"));  init: $(tr '\0' ' ' </proc/1/cmdline | cut -c1-40)
load average before/after: $LOAD0 / $LOAD1;  CPU pressure (some) $psi;  total bench time $((EPOCHSECONDS - T_START)) s
EOF

awk -v reps="$REPS" -v np="$PROCS" -v nt="$THREADS" -v criu_why="$CRIU_WHY" -v criu_desc="$(criu_desc)" -v dmtcp="$(dmtcp_status undriven)" '
function median(k,   n, i, j, t, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++) a[i] = val[k, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) {
		t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	lo[k] = a[1]; hi[k] = a[n]
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function row(label, k,   m) {
	if (!(k in cnt)) return
	m = median(k)
	printf "  %-58s %9.1f ms  [%8.1f - %8.1f]\n", label, m * 1000, lo[k] * 1000, hi[k] * 1000
}
function M(k) { return (k in cnt) ? median(k) : 0 }
function section(n, title, unit, units,   s) {
	s = M(n ".A.size")
	median(n ".A.size")
	print ""
	printf "%s, image %d bytes", title, s
	if (lo[n ".A.size"] != hi[n ".A.size"])
		printf " [%d - %d]", lo[n ".A.size"], hi[n ".A.size"]
	print ""
	printf "  %-58s %12s  [%8s - %8s]\n", "", "median", "min", "max"
	row("checkpoint --kill -> /dev/shm", n ".A.ckpt")
	row("  then until no saved pid is left in /proc (init reaps)", n ".A.free")
	row("restart --detach, saved pids already free", n ".A.restart")
	row("  until the first " unit " is alive", n ".A.first")
	row("  until all " units " are alive", n ".A.all")
	row("restart --detach at once (incl. ckpt waiting for pids)", n ".B.restart")
	row("  until all " units " are alive", n ".B.all")
	row("end to end: checkpoint start -> all alive again", n ".B.e2e")
}
function per(label, n, k,   d) {
	d = k == "tree" ? np - 1 : nt - 1
	printf "  %-22s checkpoint %6.2f ms, restart %6.2f ms, until all alive %6.2f ms, image %5.1f KB\n",
		label, (M(k ".A.ckpt") - M("tiny.A.ckpt")) * 1000 / d,
		(M(k ".A.restart") - M("tiny.A.restart")) * 1000 / d,
		(M(k ".A.all") - M("tiny.A.all")) * 1000 / d,
		(M(k ".A.size") - M("tiny.A.size")) / d / 1000
}
# one row of the comparison: ckpt median, then criu median [min - max] and
# criu median / ckpt median
function cmp(label, k,   a, b) {
	if (!(("criu." k) in cnt) || !(k in cnt)) return
	a = M(k); b = median("criu." k)
	printf "  %-42s %9.1f ms  %9.1f ms  [%8.1f - %8.1f]  %6.2fx\n", label, a * 1000, b * 1000,
		lo["criu." k] * 1000, hi["criu." k] * 1000, b / a
}
function others(   p, n, have) {
	print ""
	print "other tools on the same workloads, same run"
	have = ("criu.tiny.A.ckpt" in cnt)
	if (have) {
		print "(block A: pids already free.  criu = `criu dump --shell-job` (kills the tree) and `criu restore"
		print "--shell-job -d`, with the same clocks; x = criu median / ckpt median)"
		printf "  %-42s %12s  %12s  [%8s - %8s]  %7s\n", "", "ckpt median", "criu median", "min", "max", "x"
		for (p = 1; p <= 3; p++) {
			n = p == 1 ? "tiny" : p == 2 ? "tree" : "threads"
			if (!(("criu." n ".A.size") in cnt)) continue
			printf "  %s: image %d bytes (ckpt), %d bytes (criu)\n",
				p == 1 ? "tiny process" : p == 2 ? sprintf("tree of %d processes", np) : sprintf("%d threads", nt),
				M(n ".A.size"), M("criu." n ".A.size")
			cmp("checkpoint -> /dev/shm", n ".A.ckpt")
			cmp("restart, saved pids already free", n ".A.restart")
			cmp("  until the first is alive", n ".A.first")
			cmp("  until all are alive", n ".A.all")
		}
	}
	if (criu_why == "")
		print "  criu:  measured: " criu_desc
	else
		printf "  criu:  not available%s: %s\n", have ? " for the rest" : "", criu_why
	print "  dmtcp: " dmtcp
}
{ cnt[$1]++; val[$1, cnt[$1]] = $2 }
END {
	printf "\n%d runs of each; median [min - max] in ms.  Every run starts a fresh process (tree) and checkpoints it.\n", reps
	print "restart = until `ckpt restart --detach` returns.  alive = until a restored process/thread first sees its GO"
	print "file (polled every 2 ms, so up to 2 ms late); all = the last of them.  \"saved pids already free\": after the"
	print "checkpoint the script polled until none of the checkpointed pids/tids was in /proc (the killed children are"
	print "init'\''s zombies until init reaps them) and only then started the clock; that wait is the row above it and"
	print "is in no other time of block A.  \"at once\": a second fresh tree, restarted right after its checkpoint, so"
	print "the restart includes ckpt'\''s own wait for those pids.  end to end = from that checkpoint'\''s start."
	section("tiny", "tiny process (1 process, 1 thread: the baseline)", "process", "processes")
	section("tree", sprintf("tree of %d processes (a root and %d forked children, 1 thread each)", np, np - 1), "process", "processes")
	section("threads", sprintf("one process with %d threads (main and %d pthreads)", nt, nt - 1), "thread", "threads")
	print ""
	print "cost of one more process or thread (median - tiny median, / 99 or / 63; restart and alive with pids free):"
	per(sprintf("per process (/%d)", np - 1), np, "tree")
	per(sprintf("per thread (/%d)", nt - 1), nt, "threads")
	others()
}' "$RES"
