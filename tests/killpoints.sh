#!/usr/bin/env bash
# killpoints.sh - ckpt killed in the middle of a checkpoint harms nothing.
# usage: tests/killpoints.sh CKPT WORKDIR [--kill] PROG...
#
# For each PROG (a tests/progs program: READY, then on its go file it
# checks its own state and prints PASS): count the test points a whole
# checkpoint passes (CKPT_TEST_POINTS, test build only), then, for about
# POINTS of them spread over the checkpoint (the first and last always),
# start PROG afresh, SIGKILL ckpt at that point (CKPT_TEST_KILL_AT), and
# have PROG check itself.  With --kill the checkpoints are --kill ones:
# the target must still be there, and intact.  CKPT_TEST_KILL_SIG=S
# sends signal S instead of SIGKILL (a ^C: ckpt unwinds, then dies of
# it).  KP_MATCH (a grep -E
# pattern of point names) takes every point of those names instead, and
# with KP_NEXT=N the N points after each too.
# Prints one line per failing case and "killpoints: N cases ok, M failed".
set -u
CKPT=$1
W=$2
shift 2
KILLOPT=
[ "${1:-}" = --kill ] && { KILLOPT=--kill; shift; }
POINTS=${POINTS:-10}
OK=0
FAILED=0
mkdir -p "$W"
. "$(dirname "$0")/killlib.sh"

start() {	# PROG DIR: sets pid
	rm -rf "$2"
	mkdir -p "$2"
	chmod 755 "$2"
	TP_TMPDIR=$2 "$1" "$2/go" > "$2/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$2/out" READY && cat /proc/$pid/maps > "$2/maps" &&
		descendants $pid > "$2/pids"
}

# The one window README.md owns up to: a 32-bit thread's guard page
# (src/arch/x86/guard32.c), or the page of a checkpoint's batches of
# calls (src/arch/x86/runner.c), is left if ckpt is killed in the very
# call that maps it: the three points before "... page mapped", and that.
guard_page_left() {	# PROG N PID MAPSFILE
	local added
	grep -Eq "^testpoint ($2|$(($2 + 1))|$(($2 + 2))|$(($2 + 3))) (guard|runner) page mapped\$" \
		"$W/$(basename "$1").count.points" || return 1
	added=$(diff "$4" /proc/$3/maps | grep '^[<>]')
	[[ $added =~ ^\>\ ([0-9a-f]+)-([0-9a-f]+)\ r-xp\ 00000000\ 00:00\ 0\ *$ ]] &&
		[ $((16#${BASH_REMATCH[2]} - 16#${BASH_REMATCH[1]})) = 4096 ] || return 1
	echo "note: $(basename "$1") point $2: a page of ours left (the window README.md names)"
}

# Nothing of ours left in its address space (a thread let go runs its
# way back, unmapping what it must, as soon as it is scheduled).
same_maps() {	# PID MAPSFILE
	local i
	# they map, unmap and move memory all the time (thread stacks,
	# lazy_churn's areas)
	case $(tr '\0' ' ' < /proc/$1/cmdline) in *threads_churn* | *lazy_churn*) return 0 ;; esac
	for ((i = 0; i < 100; i++)); do
		[ "$(cat /proc/$1/maps 2>/dev/null)" = "$(cat "$2")" ] && return 0
		sleep 0.01
	done
	return 1
}

# From the point where a --kill checkpoint starts killing (its image
# safe), ckpt's death ends the whole tree: nothing is left half killed.
past_killing() {	# PROG N
	local k
	[ -n "$KILLOPT" ] || return 1
	k=$(grep -E '^testpoint [0-9]+ killing$' "$W/$(basename "$1").count.points" |
	    head -1 | cut -d' ' -f2)
	[ -n "$k" ] && [ "$2" -ge "$k" ]
}

descendants() {	# PID
	local c
	for c in $(pgrep -P $1); do echo $c; descendants $c; done
}

left_alive() {	# PIDSFILE: says which of those still run after 3 s
	local p i
	for p in $(cat "$1"); do
		for ((i = 0; i < 300; i++)); do
			grep -q '^State:[[:space:]]*[^ZX]' /proc/$p/status 2>/dev/null || break
			sleep 0.01
		done
		[ $i = 300 ] && echo -n "pid $p of its tree left running "
	done
}

# One case: kill ckpt at point N of a checkpoint of a fresh PROG.
one() {	# PROG N
	local d=$W/$(basename "$1").$2 why= rc
	start "$1" "$d" || why="did not start: $(head -3 "$d/out" | tr '\n' ' ')"
	if [ -z "$why" ]; then
		# in the background: no "Killed" from bash
		CKPT_TEST_KILL_AT=$2 timeout 60 "$CKPT" checkpoint $KILLOPT -o "$d/img" $pid \
			> /dev/null 2> "$d/ckpt.err" &
		{ wait $!; } 2> /dev/null
		rc=$?
		# a checkpoint of a program whose threads come and go passes a
		# varying number of points: one that ended first is checked too
		# with CKPT_TEST_KILL_SIG (SIGINT...) ckpt unwinds, then dies of it
		[ $rc = $((128 + ${CKPT_TEST_KILL_SIG:-9})) ] || [ $rc = 0 ] ||
			why="ckpt was not killed at point $2 ($(tail -1 "$d/ckpt.err"))"
	fi
	if [ -z "$why" ] && past_killing "$1" $2; then
		{ wait $pid; } 2>/dev/null
		gone $pid || why="not killed past the point of killing"
		[ -z "$why" ] && why=$(left_alive "$d/pids")
		[ -z "$why" ] && { OK=$((OK + 1)); rm -rf "$d"; return; }
	fi
	[ -z "$why" ] && ! untraced $pid && why="still traced"
	[ -z "$why" ] && ! kill -0 $pid 2>/dev/null && why="target gone"
	[ -z "$why" ] && ! same_maps $pid "$d/maps" && ! guard_page_left "$1" $2 $pid "$d/maps" &&
		why="its mappings changed: $(diff "$d/maps" /proc/$pid/maps | grep '^[<>]' | head -2 | tr '\n' ' ')"
	touch "$d/go"
	if [ -z "$why" ]; then
		timeout 30 tail --pid=$pid -s 0.05 -f /dev/null
		grep -q '^PASS' "$d/out" && ! grep -q '^FAIL' "$d/out" ||
			why="target harmed: $(grep -v '^READY' "$d/out" | head -3 | tr '\n' ' ')"
	fi
	kill -9 $pid 2>/dev/null
	{ wait $pid; } 2>/dev/null
	if [ -n "$why" ]; then
		FAILED=$((FAILED + 1))
		echo "FAIL $(basename "$1") point $2 $(sed -n 's/.*killed at point [0-9]* \((.*)\)$/\1/p' "$d/ckpt.err"): $why"
	else
		OK=$((OK + 1))
		rm -rf "$d"
	fi
}

for prog in "$@"; do
	d=$W/$(basename "$prog").count
	start "$prog" "$d" || { echo "FAIL $prog: did not start: $(head -3 "$d/out" | tr '\n' ' ')"; FAILED=$((FAILED + 1)); continue; }
	# counted in the same mode (a --kill checkpoint has no release)
	CKPT_TEST_POINTS=1 timeout 60 "$CKPT" checkpoint $KILLOPT -o "$d/img" $pid 2> "$d/points"
	n=$(grep -c '^testpoint ' "$d/points")
	cp "$d/points" "$d.points"
	touch "$d/go"
	timeout 30 tail --pid=$pid -s 0.05 -f /dev/null
	kill -9 $pid 2>/dev/null
	{ wait $pid; } 2>/dev/null
	rm -rf "$d"
	[ "$n" -gt 0 ] || { echo "FAIL $prog: no test points (not the test build?)"; FAILED=$((FAILED + 1)); continue; }
	if [ -n "${KP_MATCH:-}" ]; then
		# every point of those names (KP_MATCH: a grep -E pattern);
		# none is a failure: what the test was for did not happen
		grep -Eq "^testpoint [0-9]+ ($KP_MATCH)\$" "$d.points" ||
			{ echo "FAIL $prog: no point named ($KP_MATCH) passed"; FAILED=$((FAILED + 1)); }
		for k in $(grep -E "^testpoint [0-9]+ ($KP_MATCH)\$" "$d.points" |
			   cut -d' ' -f2 | while read -r m; do
				   seq "$m" $((m + ${KP_NEXT:-0}))
			   done | sort -nu); do
			[ "$k" -le "$n" ] && one "$prog" $k
		done
		rm -f "$d.points"
		continue
	fi
	step=$(( n / POINTS > 0 ? n / POINTS : 1 ))
	for ((k = 1; k <= n; k += step)); do one "$prog" $k; done
	[ $(( (n - 1) % step )) = 0 ] || one "$prog" $n
	rm -f "$d.points"
done
echo "killpoints: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
