#!/usr/bin/env bash
# run.sh - the test suite, run by `make test` (after building): every test
# of tests/cases/*.sh, side by side.
# usage: tests/run.sh [PATTERN...]   (make test T="PATTERN...")
#   PATTERN: a test's name, a glob (state32_*), or part of names (tcp_);
#   none: every test.
#   J=N: N tests at a time (default: CPUs + 1; a run on 2 CPUs keeps 1.4
#   busy, but at CPUs + 3 state_tcp_bigq's stream stalled past its 5 s).
#   VERBOSE=1: every log.
#   CKPT_TEST_NO_IA32=1: act as a kernel that cannot run 32-bit programs.
# Prints a line per test with its time, the slowest ten, then, alone on
# the last line, "N passed, N failed, N skipped"; exits non-zero if any
# test failed.  A failed test's log stays in build/test/logs/NAME.log.
#
# Each test runs in its own session (tests/one.sh), its processes tagged
# in their environment, which restored processes keep; whatever it ends
# by, they are killed and its files removed.  At the end, anything the
# suite left (a process, a file in /tmp or /dev/shm, a mount, an
# iptables rule, a SysV segment) fails it as the test "leftovers".
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PATTERNS=("$@")
J=${J:-$(($(nproc) + 1))}
LOGS=$ROOT/build/test/logs
export PATH=$PATH:/usr/sbin:/sbin

for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2> /dev/null
done

# ---- a /tmp and /dev/shm of its own --------------------------------------

# The suite runs in a mount namespace of its own, where /tmp and /dev/shm
# are empty directories (of the real /tmp, PRIV): what is in them at the
# end is what the suite left, whatever else runs on the machine.  (The
# repository, if it is in /tmp, is bound back in its place.)  The
# directory is removed from out here, where nothing is mounted in it.
if [ -z "${T_PRIVATE:-}" ] && [ "$(id -u)" = 0 ] && unshare --mount true 2> /dev/null; then
	PRIV=$(mktemp -d /tmp/ckpt-priv.XXXXXX)
	# (a background job ignores SIGINT: it gets SIGTERM for both)
	T_PRIVATE=$PRIV unshare --mount --propagation private bash "$0" "$@" &
	child=$!
	trap 'kill -TERM $child 2> /dev/null' INT TERM
	while :; do
		wait $child
		rc=$?
		kill -0 $child 2> /dev/null || break
	done
	rm -rf "$PRIV"
	exit $rc
fi
if [ -n "${T_PRIVATE:-}" ]; then
	mkdir -p "$T_PRIVATE/tmp" "$T_PRIVATE/shm"
	chmod 1777 "$T_PRIVATE/tmp" "$T_PRIVATE/shm"
	if [[ $ROOT == /tmp/* ]]; then
		mkdir -p "$T_PRIVATE$ROOT"
		mount --bind "$ROOT" "$T_PRIVATE$ROOT"
	fi
	mount --bind "$T_PRIVATE/shm" /dev/shm && mount --rbind "$T_PRIVATE/tmp" /tmp ||
		{ echo "tests: cannot make a /tmp and /dev/shm of the suite's own"; exit 1; }
	cd "$ROOT" || exit 1
fi

# ---- what is there before -------------------------------------------------

# Everything a test could leave behind outside its own directory, one
# line each.  (Without a /tmp of its own, the harness's and other suites'
# entries there are not ours.)
snapshot() {
	{
		ls -A /tmp | grep -v '^ckpt-run\.' |
			if [ -n "${T_PRIVATE:-}" ]; then cat; else
				grep -v '^bash_tool_\|^bash_jobs\.\|^ckpt-tests\.\|^ckpt-priv\.'
			fi | sed 's|^|file /tmp/|'
		ls -A /dev/shm | sed 's|^|file /dev/shm/|'
		awk '{ print "mount " $5 }' /proc/self/mountinfo
		for c in iptables ip6tables; do	# chains and rules, not policies
			$c-save 2> /dev/null | grep '^-A\|^:' | grep -v '^:[A-Z]* [A-Z]' | sed "s/ \\[[0-9]*:[0-9]*\\]$//; s/^/$c /"
		done
		ipcs -m 2> /dev/null | awk '$2 ~ /^[0-9]+$/ { print "SysV segment id " $2 " key " $1 }'
	} | sort -u
}
BEFORE=$(snapshot)

RUNDIR=$(mktemp -d /tmp/ckpt-run.XXXXXX)
RUNID=$(basename "$RUNDIR")
chmod 755 "$RUNDIR"
trap 'rm -rf "$RUNDIR"' EXIT
mkdir -p "$RUNDIR/tmp" "$RUNDIR/res"
export TMPDIR=$RUNDIR/tmp	# what tests make with mktemp stays in the run's
rm -rf "$LOGS"
mkdir -p "$LOGS"

# The named cgroup hierarchy the cgroup tests use (tests/progs/cgroup.c)
# lives from the first mount of it to the last unmount: every process
# gains or loses a line of /proc/PID/cgroup then, which a checkpoint in
# progress of another test reads as its groups changing.  A process of
# ours keeps it mounted, in a mount namespace of its own, all run long.
unshare -m --propagation private sh -c \
	'mount -t cgroup -o none,name=ckpt_test none /mnt 2> /dev/null; exec sleep 100000' &
CGPIN=$!
trap 'kill $CGPIN 2> /dev/null; rm -rf "$RUNDIR"' EXIT	# (an early exit too)

# ---- which tests ----------------------------------------------------------

bash tests/caps.sh "$RUNDIR/caps"
declare -A NEEDS=() GROUP=() LIMIT=() FIRST=() CAPWHY=()
while read -r cap ok why; do
	[ "$ok" = 1 ] || CAPWHY[$cap]=$why
done < "$RUNDIR/caps"

matches() {	# NAME: one of the PATTERNS (all, if none) is its
	local p
	[ ${#PATTERNS[@]} = 0 ] && return 0
	for p in "${PATTERNS[@]}"; do
		if [[ $p == *[*?[]* ]]; then
			[[ $1 == $p ]] && return 0
		elif [ -n "${ALL[$p]:-}" ]; then
			[ "$1" = "$p" ] && return 0
		else
			[[ $1 == *"$p"* ]] && return 0
		fi
	done
	return 1
}

# the table: NAME [needs CAP...] [group G] [timeout S] [first] [noroot]
declare -A ALL=()
TABLE=$(bash tests/one.sh --list) || { echo "tests/one.sh --list failed"; exit 1; }
while read -r name rest; do ALL[$name]=1; done <<< "$TABLE"
ORDER=() LATER=() LAST=()
while read -r name rest; do
	matches "$name" || continue
	NEEDS[$name]=root GROUP[$name]= LIMIT[$name]=120 FIRST[$name]=
	set -- $rest
	while [ $# -gt 0 ]; do
		case $1 in
		needs) shift
			while [ $# -gt 0 ] && [[ $1 != group && $1 != timeout && $1 != first && $1 != noroot ]]; do
				NEEDS[$name]+=" $1"
				shift
			done
			continue ;;
		group) GROUP[$name]=$2; shift ;;
		timeout) LIMIT[$name]=$2; shift ;;
		first) FIRST[$name]=1 ;;
		noroot) NEEDS[$name]=${NEEDS[$name]#root} ;;
		*) echo "tests: $name: unknown '$1' in its table entry"; exit 2 ;;
		esac
		shift
	done
	if [ -n "${FIRST[$name]}" ]; then ORDER+=("$name")
	elif [ "${GROUP[$name]}" = alone ]; then LAST+=("$name")
	else LATER+=("$name")
	fi
done <<< "$TABLE"
QUEUE=("${ORDER[@]}" "${LATER[@]}" "${LAST[@]}")
[ ${#QUEUE[@]} = 0 ] && { echo "no test matches '${PATTERNS[*]}'"; exit 1; }

echo "ckpt test suite: $(date -u +%FT%TZ), $(uname -r), ${#QUEUE[@]} tests, $J at a time"
grep ' 0 ' "$RUNDIR/caps" | sed 's/^\([^ ]*\) 0 /    no \1: /'

# ---- running them ---------------------------------------------------------

PASSED=0 FAILED=0 SKIPPED=0
FAILS=() TIMES=()
declare -A RUNNING=() BUSY=()	# pid -> test; group -> test

fail_line() {	# NAME MS REASON
	printf 'FAIL %-34s %6.1fs%s\n' "$1" "$(awk -v m="$2" 'BEGIN { print m / 1000 }')" "${3:+  ($3)}"
}

finish() {	# PID: its test is over
	local name=${RUNNING[$1]} res ms why
	unset "RUNNING[$1]"
	[ -n "${GROUP[$name]}" ] && unset "BUSY[${GROUP[$name]}]"
	read -r res ms why < "$RUNDIR/res/$name" 2> /dev/null ||
		{ res=fail ms=0 why="its runner died"; }
	TIMES+=("$ms $name")
	if [ "$res" = pass ]; then
		PASSED=$((PASSED + 1))
		printf 'ok   %-34s %6.1fs\n' "$name" "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
		[ -n "${VERBOSE:-}" ] && sed 's/^/    | /' "$LOGS/$name.log"
		rm -f "$LOGS/$name.log"
	else
		FAILED=$((FAILED + 1))
		FAILS+=("$name")
		fail_line "$name" "$ms" "$why"
		if [ -n "${VERBOSE:-}" ]; then
			sed 's/^/    | /' "$LOGS/$name.log"
		else
			sed 's/^/    | /' "$LOGS/$name.log" | tail -25
		fi
		echo "    (log: build/test/logs/$name.log)"
	fi
}

startable() {	# NAME
	local g=${GROUP[$1]}
	[ -n "${BUSY[alone]:-}" ] && return 1
	[ "$g" = alone ] && { [ ${#RUNNING[@]} = 0 ]; return; }
	[ -z "$g" ] || [ -z "${BUSY[$g]:-}" ]
}

missing() {	# NAME: the reason it cannot run here, if any
	local c
	for c in ${NEEDS[$1]}; do
		[ -n "${CAPWHY[$c]:-}" ] && { echo "${CAPWHY[$c]}"; return 0; }
	done
	return 1
}

# SIGINT/SIGTERM: every test's processes killed, its files removed
interrupted() {
	trap '' INT TERM
	echo
	echo "interrupted: stopping ${#RUNNING[@]} tests"
	local p
	exec 3>&2 2> /dev/null	# (not bash's notices of the jobs killed)
	for p in "${!RUNNING[@]}"; do kill -9 -- -$p; done
	kill $CGPIN
	cleanup_run
	exec 2>&3 3>&-
	echo "$PASSED passed, $((FAILED + ${#RUNNING[@]})) failed, $SKIPPED skipped"
	exit 130
}
trap interrupted INT TERM

tagged_all() {	# live processes tagged by this run
	local f p
	for f in $(grep -lz "^CKPT_TEST_TAG=$RUNID/" /proc/[0-9]*/environ 2> /dev/null); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$(awk '{print $3}' /proc/$p/stat 2> /dev/null)" = Z ] || echo $p
	done
}

# The network lock's chain (and INPUT's and OUTPUT's jumps to it), which ckpt makes once
# and keeps, if this run made it and no lock is in it now.
drop_lock_chain() {
	local c
	for c in iptables ip6tables; do
		echo "$BEFORE" | grep -q "^$c :CKPT-LOCK" && continue
		$c -w -S CKPT-LOCK 2> /dev/null | grep -q '^-A' && continue
		$c -w -D INPUT -j CKPT-LOCK 2> /dev/null
		$c -w -D OUTPUT -j CKPT-LOCK 2> /dev/null
		$c -w -X CKPT-LOCK 2> /dev/null
	done
}

# What an interrupted run made: its processes, SysV segments and lock
# rules, its directory.
cleanup_run() {
	local i left f id
	for ((i = 0; i < 100; i++)); do
		left=$(tagged_all)
		[ -z "$left" ] && break
		kill -9 $left 2> /dev/null
		sleep 0.05
	done
	for f in $(find "$RUNDIR/work" -name shm_ids 2> /dev/null); do
		for id in $(cat "$f"); do ipcrm -m "$id" 2> /dev/null; done
	done
	comm -13 <(echo "$BEFORE" | grep '^iptables -A CKPT-LOCK') \
		<(snapshot | grep '^iptables -A CKPT-LOCK') | sed 's/^iptables -A/-D/' |
		while read -r r; do eval "iptables -w $r"; done
	drop_lock_chain
	rm -rf "$RUNDIR"
}

T0=$(date +%s%N)
while [ ${#QUEUE[@]} -gt 0 ] || [ ${#RUNNING[@]} -gt 0 ]; do
	rest=()
	for name in "${QUEUE[@]}"; do
		if why=$(missing "$name"); then
			SKIPPED=$((SKIPPED + 1))
			printf 'skip %-34s         (%s)\n' "$name" "$why"
		elif [ ${#RUNNING[@]} -lt "$J" ] && startable "$name"; then
			T_GROUP=${GROUP[$name]} setsid bash tests/one.sh "$name" "$RUNDIR" "${LIMIT[$name]}" \
				> "$LOGS/$name.log" 2>&1 < /dev/null &
			RUNNING[$!]=$name
			[ -n "${GROUP[$name]}" ] && BUSY[${GROUP[$name]}]=$name
		else
			rest+=("$name")
		fi
	done
	QUEUE=("${rest[@]}")
	[ ${#RUNNING[@]} = 0 ] && continue
	ended=
	wait -n -p ended "${!RUNNING[@]}" 2> /dev/null
	# (a signal interrupts wait: the trap ran, or it is not ours)
	if [ -n "${ended:-}" ] && [ -n "${RUNNING[$ended]:-}" ]; then
		finish "$ended"
		continue
	fi
	# a job bash reaped beside another one it returned is no job any
	# more, and wait -n fails on it at once: over once its process is
	for p in "${!RUNNING[@]}"; do
		kill -0 "$p" 2> /dev/null || finish "$p"
	done
done
WALL=$(( ($(date +%s%N) - T0) / 1000000 ))

# ---- what is left ---------------------------------------------------------

kill $CGPIN 2> /dev/null
wait $CGPIN 2> /dev/null
drop_lock_chain
rm -rf "$RUNDIR"
left=
for ((i = 0; i < 20; i++)); do	# (a process may be dying, a lock rule going)
	left=$( { comm -13 <(echo "$BEFORE") <(snapshot); tagged_all | sed 's/^/process /'; } )
	[ -z "$left" ] && break
	sleep 0.2
done
if [ -n "$left" ]; then
	FAILED=$((FAILED + 1))
	FAILS+=(leftovers)
	echo "FAIL leftovers: what the suite made and left:"
	echo "$left" | while read -r what; do
		case $what in
		process\ *) p=${what#process }
			echo "    process $p ($(cat /proc/$p/comm 2> /dev/null), $(tr '\0' '\n' < /proc/$p/environ 2> /dev/null | grep '^CKPT_TEST_TAG='))" ;;
		*) echo "    $what" ;;
		esac
	done
else
	echo "ok   leftovers (no process, file, mount, rule or segment left)"
fi

if [ ${#TIMES[@]} -gt 0 ]; then
	echo
	echo "slowest:"
	printf '%s\n' "${TIMES[@]}" | sort -rn | head -10 |
		awk '{ printf "    %-34s %6.1fs\n", $2, $1 / 1000 }'
fi
echo "wall time $(awk -v m=$WALL 'BEGIN { printf "%.0f", m / 1000 }')s"
[ ${#FAILS[@]} = 0 ] || echo "failed: ${FAILS[*]}"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ $FAILED = 0 ]
