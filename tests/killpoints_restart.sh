#!/usr/bin/env bash
# killpoints_restart.sh - a restart killed at any step leaves nothing.
# usage: tests/killpoints_restart.sh CKPT WORKDIR PROG...
#
# For each PROG (a tests/progs program): checkpoint it with --kill, count
# the test points a restart passes (CKPT_TEST_POINTS, test build only) up
# to the release of its last process, then SIGKILL restart at about
# POINTS of them spread over that (and at each release): no process
# of the image may be left (a subreaper around restart reaps what it
# made).  Last, a whole restart of the same image passes the program's
# own checks: the image was not spoiled.
# Prints one line per failing case and "killpoints_restart: N cases ok, M failed".
set -u
CKPT=$1
W=$2
shift 2
POINTS=${POINTS:-10}
PYTHON=/usr/bin/python3
OK=0
FAILED=0
mkdir -p "$W"
. "$(dirname "$0")/killlib.sh"

for prog in "$@"; do
	name=$(basename "$prog")
	d=$W/$name
	rm -rf "$d"
	mkdir -p "$d"
	chmod 755 "$d"
	TP_TMPDIR=$d "$prog" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	if ! wait_for "$d/out" READY ||
	   ! timeout 60 "$CKPT" checkpoint --kill -o "$d/img" $pid 2> "$d/ckpt.err"; then
		echo "FAIL $name: could not checkpoint it: $(tail -1 "$d/ckpt.err")"
		FAILED=$((FAILED + 1))
		kill -9 $pid 2>/dev/null
		continue
	fi
	{ wait $pid; } 2>/dev/null
	gone $pid
	pids=$("$CKPT" info "$d/img" | sed -n 's/^TASK.* pid=\([0-9]*\).*/\1/p' | sort -u)
	# counted on a restart --detach whose processes are killed before
	# they run on: they must not use up the files the image needs
	CKPT_TEST_POINTS=1 reaped timeout 60 "$CKPT" restart --detach "$d/img" \
		> /dev/null 2> "$d/points" &
	rpid=$!
	for ((i = 0; i < 1000; i++)); do
		grep -q ' all let go$' "$d/points" && kill -0 $pid 2>/dev/null && break
		sleep 0.01
	done
	for p in $pids; do kill -9 $p 2>/dev/null; done
	wait $rpid
	# up to the last process let go: a restart killed while it lets
	# them go leaves none (its keeper kills those already let go)
	n=$(sed -n 's/^testpoint \([0-9]*\) all let go$/\1/p' "$d/points" | head -1)
	# one process let go is the whole restart done: it runs on
	[ $(echo $pids | wc -w) = 1 ] &&
		n=$(( $(sed -n 's/^testpoint \([0-9]*\) process let go$/\1/p' "$d/points" | head -1) - 1 ))
	n=${n:-0}
	[ "$n" -gt 0 ] || { echo "FAIL $name: no test points"; FAILED=$((FAILED + 1)); continue; }
	step=$(( n / POINTS > 0 ? n / POINTS : 1 ))
	ks=$( (seq 1 $step $n; sed -n 's/^testpoint \([0-9]*\) process let go$/\1/p' "$d/points";
	       echo $n) | sort -nu | awk -v n=$n '$1 <= n')
	for k in $ks; do
		why=
		CKPT_TEST_KILL_AT=$k reaped timeout 60 "$CKPT" restart --detach "$d/img" \
			> /dev/null 2> "$d/r.err"
		rc=$?
		grep -q "killed at point $k " "$d/r.err" || why="restart not killed at point $k (exit $rc: $(tail -1 "$d/r.err"))"
		for p in $pids; do
			[ -e /proc/$p ] && why="$why; pid $p left: $(tr '\0' ' ' < /proc/$p/cmdline)" &&
				kill -9 $p 2>/dev/null
		done
		if [ -n "$why" ]; then
			echo "FAIL $name restart point $k $(sed -n 's/.*killed at point [0-9]* \((.*)\)$/\1/p' "$d/r.err"): $why"
			FAILED=$((FAILED + 1))
		else
			OK=$((OK + 1))
		fi
	done
	( sleep 0.5; touch "$d/go" ) &
	if timeout 60 "$CKPT" restart "$d/img" > "$d/rout" 2>&1 && grep -q '^PASS' "$d/out"; then
		OK=$((OK + 1))
	else
		echo "FAIL $name: the image no longer restarts: $(cat "$d/rout" "$d/out" | tail -3 | tr '\n' ' ')"
		FAILED=$((FAILED + 1))
	fi
	wait
	rm -rf "$d"
done
echo "killpoints_restart: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
