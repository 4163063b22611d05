#!/usr/bin/env bash
# killtimes.sh - ckpt SIGKILLed at moments spread evenly over a live
# checkpoint, as a user's timeout or the OOM killer would: every target
# runs on intact.
# usage: tests/killtimes.sh CKPT HOLDER WORKDIR
#
# Targets: the holder (tests/aux/holder) with 26 MiB of memory, which
# checks its counter and memory after its go file; a python3 program
# writing a counter, whose output must equal an uninterrupted run's; and
# bash counting in a loop, likewise.  For each: time one whole checkpoint
# (D), then TIMES times start a fresh target, kill ckpt after i*D/(TIMES+1).
# Prints one line per failing case and "killtimes: N cases ok, M failed".
set -u
CKPT=$1
HOLDER=$2
W=$3
HERE=$(cd "$(dirname "$0")" && pwd)
TIMES=${TIMES:-10}
PYTHON=/usr/bin/python3
N=300
OK=0
FAILED=0
mkdir -p "$W"
. "$(dirname "$0")/killlib.sh"

# start_KIND DIR: a fresh target, $pid
start_holder() {
	"$HOLDER" plain "$1/go" 26 > "$1/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$1/out" READY
}
check_holder() {
	touch "$1/go"
	timeout 30 tail --pid=$pid -s 0.05 -f /dev/null
	grep -q '^PASS' "$1/out"
}
start_python() {
	$PYTHON "$HERE/aux/counter.py" $N "$1/out" < /dev/null > /dev/null 2>&1 &
	pid=$!
	wait_for "$1/out" '^20$'
}
check_python() {
	timeout 30 tail --pid=$pid -s 0.05 -f /dev/null
	$PYTHON "$HERE/aux/counter.py" $N "$1/ref" && cmp -s "$1/ref" "$1/out"
}
start_bash() {
	bash -c 'i=0; while [ $i -lt '$N' ]; do echo $i; i=$((i + 1)); sleep 0.004; done; echo end' \
		> "$1/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$1/out" '^20$'
}
check_bash() {
	timeout 30 tail --pid=$pid -s 0.05 -f /dev/null
	{ seq 0 $((N - 1)); echo end; } | cmp -s - "$1/out"
}

for kind in holder python bash; do
	d=$W/$kind.t
	rm -rf "$d"
	mkdir -p "$d"
	start_$kind "$d" || { echo "FAIL $kind: did not start"; FAILED=$((FAILED + 1)); continue; }
	t0=$(date +%s%N)
	timeout 60 "$CKPT" checkpoint -o "$d/img" $pid 2> "$d/err" ||
		{ echo "FAIL $kind: checkpoint: $(tail -1 "$d/err")"; FAILED=$((FAILED + 1)); }
	us=$(( ($(date +%s%N) - t0) / 1000 ))
	check_$kind "$d" || { echo "FAIL $kind: a whole live checkpoint harmed it"; FAILED=$((FAILED + 1)); }
	kill -9 $pid 2>/dev/null
	{ wait $pid; } 2>/dev/null
	for ((i = 1; i <= TIMES; i++)); do
		d=$W/$kind.$i
		why=
		rm -rf "$d"
		mkdir -p "$d"
		start_$kind "$d" || why="did not start"
		if [ -z "$why" ]; then
			"$CKPT" checkpoint -o "$d/img" $pid > /dev/null 2> "$d/err" &
			cp=$!
			sleep "$(awk -v u=$us -v i=$i -v n=$TIMES 'BEGIN { printf "%.6f", u * i / (n + 1) / 1e6 }')"
			kill -9 $cp 2>/dev/null
			{ wait $cp; } 2>/dev/null
			untraced $pid || why="still traced"
		fi
		[ -z "$why" ] && ! check_$kind "$d" && why="harmed: $(grep -v READY "$d/out" | tail -2 | tr '\n' ' ')"
		kill -9 $pid 2>/dev/null
		{ wait $pid; } 2>/dev/null
		if [ -n "$why" ]; then
			echo "FAIL $kind killed at $i/$((TIMES + 1)) of ${us} us: $why"
			FAILED=$((FAILED + 1))
		else
			OK=$((OK + 1))
			rm -rf "$d"
		fi
	done
done
echo "killtimes: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
