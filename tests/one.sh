#!/usr/bin/env bash
# one.sh - run one test of tests/cases/*.sh, as tests/run.sh does.
# usage: tests/one.sh --list           the table of tests, one per line
#        tests/one.sh NAME RUNDIR TIMEOUT
# NAME runs in RUNDIR/work/NAME under `timeout TIMEOUT`, every process of
# it tagged CKPT_TEST_TAG=RUNID/NAME (RUNID the basename of RUNDIR), which
# restored, detached and namespaced processes keep.  Once it ends, however
# it ends, those processes are killed and its files removed.  Its result
# is RUNDIR/res/NAME: "pass MS" or "fail MS [REASON]", MS its time in
# milliseconds.  Its output (the caller keeps it as its log) is whatever
# the test printed.  RUNDIR/caps is what tests/caps.sh found.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
cd "$ROOT"

# have CAP: the machine has it (tests/caps.sh, found by tests/run.sh)
have() { grep -q "^$1 1" "$T_CAPS"; }

load_cases() {
	local f
	for f in "$HERE"/cases/*.sh; do
		. "$f"
	done
}

if [ "${1:-}" = --list ]; then
	T_LIST=1
	load_cases
	exit 0
fi

# Descriptors the caller holds are not the tests' business; a target
# holding one of them would be refused as holding an unknown fd.
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2> /dev/null
done

NAME=$1
RUNDIR=$2
LIMIT=$3
RUNID=$(basename "$RUNDIR")
export T_CAPS=$RUNDIR/caps
WORK=$RUNDIR/work/$NAME
export T_STEPFILE=$RUNDIR/step/$NAME
mkdir -p "$WORK" "$RUNDIR/step" "$RUNDIR/res"
chmod 755 "$WORK"

if [ "${T_INNER:-}" = 1 ]; then
	# the test itself, in its own process under timeout
	load_cases
	declare -F "test_$NAME" > /dev/null || { echo "no test $NAME"; exit 1; }
	step start
	"test_$NAME"
	[ $? = 0 ] && exit 0
	exit 1
fi

tagged() {	# TAG: live processes carrying it (zombies are as good as gone)
	local f p
	for f in $(grep -lzx "CKPT_TEST_TAG=$1" /proc/[0-9]*/environ 2> /dev/null); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = $BASHPID ] && continue
		[ "$(awk '{print $3}' /proc/$p/stat 2> /dev/null)" = Z ] || echo $p
	done
}

# kill_tagged TAG: kill them until none is left (a process may fork
# meanwhile, or be restored from an image)
kill_tagged() {
	local i left
	for ((i = 0; i < 100; i++)); do
		left=$(tagged "$1")
		[ -z "$left" ] && return 0
		kill -9 $left 2> /dev/null
		sleep 0.05
	done
	echo "processes of $NAME that would not die: $left"
	return 1
}

# what a failed test may leave beyond processes: SysV segments it listed,
# network lock rules it made
sysv_leftovers() {
	local f id
	for f in $(find "$WORK" -name shm_ids 2> /dev/null); do
		for id in $(cat "$f"); do ipcrm -m "$id" 2> /dev/null; done
	done
}
rules() { iptables -w -S CKPT-LOCK 2> /dev/null | grep '^-A'; }

[ -n "${T_GROUP:-}" ] && [ "$T_GROUP" = iptables ] && rules > "$RUNDIR/step/$NAME.rules"
start=$(date +%s%N)
T_INNER=1 CKPT_TEST_TAG=$RUNID/$NAME timeout -k 5 "$LIMIT" bash "$0" "$@" < /dev/null
rc=$?
end=$(date +%s%N)
why=
case $rc in
0) result=pass ;;
124|137) result=fail why="timed out after ${LIMIT}s in step: $(cat "$T_STEPFILE" 2> /dev/null)" ;;
*) result=fail ;;
esac
kill_tagged "$RUNID/$NAME" || result=fail why="processes left: $(tagged "$RUNID/$NAME" | tr '\n' ' ')"
sysv_leftovers
if [ -f "$RUNDIR/step/$NAME.rules" ]; then
	# the lock's rules this test added and left (its group runs alone)
	rules | grep -vxFf "$RUNDIR/step/$NAME.rules" | sed 's/^-A/-D/' |
		while read -r r; do eval "iptables -w $r"; done
fi
rm -rf "$WORK" "$T_STEPFILE" "$RUNDIR/step/$NAME.rules"
echo "$result $(((end - start) / 1000000)) $why" > "$RUNDIR/res/$NAME"
