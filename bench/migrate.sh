#!/usr/bin/env bash
# migrate.sh - iterative live migration (pre-copy) with incremental
# checkpoints: a process of MIB MiB that rewrites RATE MiB/s of random
# pages is checkpointed whole with --track-mem, then ROUNDS times with
# --parent while it runs, then a last time with --kill (its only real
# freeze), and restarted from that last image and its chain; it checks
# every page itself (tests/aux/dirtier).  Reports each step, the
# downtime (the last checkpoint + the restart), and the cost of the
# tracking to the process: its CPU time a second, untracked and tracked.
#
# usage: bench/migrate.sh [MIB [RATE [ROUNDS]]]   (default 1024 10 3)
# env: CKPT (default build/ckpt), MIGRATE_DIR (default a /dev/shm dir,
# removed at the end)
set -u
cd "$(dirname "$0")/.."
MIB=${1:-1024} RATE=${2:-10} ROUNDS=${3:-3}
CKPT=${CKPT:-build/ckpt}
# a descriptor we inherited would be the target's, and refused
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
if [ -n "${MIGRATE_DIR:-}" ]; then
	W=$MIGRATE_DIR
	mkdir -p "$W"
	keep=1
else
	W=$(mktemp -d /dev/shm/ckpt-migrate.XXXXXX)
	keep=
fi
pid= rpid=
trap 'kill -9 $pid $rpid 2>/dev/null; [ -z "$keep" ] && rm -rf "$W"' EXIT
cc -O2 -o "$W/dirtier" tests/aux/dirtier.c || exit 1

now_us() { local t=$EPOCHREALTIME; echo $((${t/./})); }
ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# CPU time of $pid's thread, ns (schedstat: not the clock ticks of stat)
cpu() { awk '{ print $1 }' /proc/$pid/schedstat; }
cpu_rate() {	# SECONDS: the process's CPU ms a second over that time
	local c0 c1
	c0=$(cpu)
	sleep "$1"
	c1=$(cpu)
	awk -v d=$((c1 - c0)) -v s="$1" 'BEGIN { printf "%.2f", d / 1e6 / s }'
}
timed() {	# NAME IMG ARGS...: a checkpoint, its time and size
	local t0 t1 name=$1 img=$2
	shift 2
	t0=$(now_us)
	"$CKPT" checkpoint "$@" -o "$W/$img" $pid || exit 1
	t1=$(now_us)
	last_us=$((t1 - t0))
	printf '%-22s %9s ms %9s MiB\n' "$name" "$(ms $last_us)" "$(mib "$W/$img")"
}

"$W/dirtier" "$W" "$MIB" "$RATE" > "$W/out" 2>&1 < /dev/null &
pid=$!
until grep -q READY "$W/out" 2>/dev/null; do
	kill -0 $pid 2>/dev/null || { cat "$W/out"; exit 1; }
	sleep 0.05
done
echo "process: $MIB MiB, rewriting $RATE MiB/s; $ROUNDS pre-copy rounds"
untracked=$(cpu_rate 3)
timed "full, --track-mem" img0 --track-mem
sleep 1	# its first writes after the full one fault on every page
tracked=$(cpu_rate 3)
for ((i = 1; i <= ROUNDS; i++)); do
	sleep 1
	timed "round $i, --parent" img$i --parent "$W/img$((i - 1))"
done
sleep 1
timed "last, --kill (frozen)" final --kill --parent "$W/img$ROUNDS"
freeze=$last_us
wait $pid 2>/dev/null
pid=
t0=$(now_us)
rpid=$("$CKPT" restart --detach "$W/final") || exit 1
restart=$(($(now_us) - t0))
printf '%-22s %9s ms\n' "restart of the chain" "$(ms $restart)"
echo "downtime $(ms $((freeze + restart))) ms (last checkpoint $(ms $freeze) + restart $(ms $restart))"
echo "tracking: the process's CPU $untracked ms/s untracked, $tracked ms/s tracked"
touch "$W/go"
while kill -0 $rpid 2>/dev/null; do sleep 0.05; done
rpid=
grep -q '^PASS' "$W/out" || { echo "the migrated process found its memory wrong:"; cat "$W/out"; exit 1; }
echo "the migrated process checked all its pages: PASS"
