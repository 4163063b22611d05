#!/usr/bin/env bash
# failpoints.sh - a step that fails, at every step that can, harms nothing.
# usage: tests/failpoints.sh CKPT WORKDIR PROG...
#
# For each PROG (a tests/progs program), with the test build's injected
# failures (CKPT_TEST_FAIL_AT, src/testpoint.h), in its first and last
# process: each kind's save, the
# image's end and its sync made to fail in a checkpoint --kill: ckpt
# exits 1 with one line naming the failure, the program runs on untraced
# and passes its own checks at the end.  Then, on an image of it, each
# kind's restore of each process, each process built, the pages' check,
# the release and each process let go made to fail in a restart: exit
# 125 with one line, no process of the image left, and the image still
# restarts whole.  Kill points (tests/killpoints*.sh) show ckpt dying
# cleans up; these show its own error paths do.
# Prints one line per failing case and "failpoints: N cases ok, M failed".
set -u
CKPT=$1
W=$2
shift 2
PYTHON=/usr/bin/python3
OK=0
FAILED=0
mkdir -p "$W"
. "$(dirname "$0")/killlib.sh"

fail() {	# WHY
	echo "FAIL $*"
	FAILED=$((FAILED + 1))
}

# "K:NAME" of the points that can fail, from a CKPT_TEST_POINTS listing,
# by name and passing (the numbers of all points vary with retries): the
# first passing of each name (a kind's first process), and the last (its
# last process), not every process of a tree
failpoints() {
	sed -n 's/^failpoint [0-9]* \(.*\)$/\1/p' "$1" |
		awk '{ n[$0]++; if (!($0 in order)) order[$0] = NR }
		     END { for (k in n) { print order[k] " 1:" k; if (n[k] > 1) print order[k] " " n[k] ":" k } }' |
		sort -n | cut -d' ' -f2-
}

one_line() {	# ERRFILE POINT: a single line, the injected failure's
	[ "$(grep -vc '^testpoint\|^failpoint' "$1")" = 1 ] &&
		grep -qF "failure injected at $2" "$1"
}

checkpoint_points() {	# NAME DIR PID
	local name=$1 d=$2 pid=$3 k rc
	CKPT_TEST_POINTS=1 timeout 60 "$CKPT" checkpoint -o "$d/img" $pid \
		> /dev/null 2> "$d/points" || { fail "$name: a plain checkpoint failed"; return; }
	untraced $pid || { fail "$name: still traced after a checkpoint"; return; }
	while read -r k; do
		CKPT_TEST_FAIL_AT=$k timeout 60 "$CKPT" checkpoint --kill -o "$d/img" $pid \
			> /dev/null 2> "$d/c.err"
		rc=$?
		if [ $rc != 1 ] || ! one_line "$d/c.err" "$k"; then
			fail "$name checkpoint at $k: exit $rc: $(head -c 300 "$d/c.err")"
		elif ! kill -0 $pid 2>/dev/null || ! untraced $pid; then
			fail "$name checkpoint at $k: the program is gone or still traced"
			return 1
		else
			OK=$((OK + 1))
		fi
	done < <(failpoints "$d/points")
}

restart_points() {	# NAME DIR PIDS...
	local name=$1 d=$2 k rc why p
	shift 2
	# counted on a restart --detach whose processes are killed at once
	CKPT_TEST_POINTS=1 reaped --quick timeout 60 "$CKPT" restart --detach "$d/img" \
		> /dev/null 2> "$d/points"
	for p in "$@"; do kill -9 $p 2>/dev/null; done
	while read -r k; do
		CKPT_TEST_FAIL_AT=$k reaped --quick timeout 60 "$CKPT" restart --detach "$d/img" \
			> /dev/null 2> "$d/r.err"
		rc=$?
		why=
		[ $rc = 125 ] && one_line "$d/r.err" "$k" || why="exit $rc: $(head -c 300 "$d/r.err")"
		for p in "$@"; do
			[ -e /proc/$p ] && why="$why; pid $p left" && kill -9 $p 2>/dev/null
		done
		if [ -n "$why" ]; then
			fail "$name restart at $k: $why"
		else
			OK=$((OK + 1))
		fi
	done < <(failpoints "$d/points")
}

for prog in "$@"; do
	name=$(basename "$prog")
	d=$W/$name
	rm -rf "$d"
	mkdir -p "$d"
	chmod 755 "$d"
	TP_TMPDIR=$d "$prog" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	if ! wait_for "$d/out" READY; then
		fail "$name: did not start"
		kill -9 $pid 2>/dev/null
		continue
	fi
	checkpoint_points $name "$d" $pid || { kill -9 $pid 2>/dev/null; continue; }
	if ! timeout 60 "$CKPT" checkpoint --kill -o "$d/img" $pid 2> "$d/ckpt.err"; then
		fail "$name: could not checkpoint it: $(tail -1 "$d/ckpt.err")"
		kill -9 $pid 2>/dev/null
		continue
	fi
	{ wait $pid; } 2>/dev/null
	gone $pid
	pids=$("$CKPT" info "$d/img" | sed -n 's/^TASK.* pid=\([0-9]*\).*/\1/p' | sort -u)
	restart_points $name "$d" $pids
	( sleep 0.5; touch "$d/go" ) &
	if timeout 60 "$CKPT" restart "$d/img" > "$d/rout" 2>&1 && grep -q '^PASS' "$d/out"; then
		OK=$((OK + 1))
	else
		fail "$name: after it all: $(cat "$d/rout" "$d/out" | tail -3 | tr '\n' ' ')"
	fi
	wait
	rm -rf "$d"
done
echo "failpoints: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
