#!/usr/bin/env bash
# lib.sh - what the tests share: sourced by tests/one.sh, which runs one
# test (a function test_NAME of tests/cases/*.sh) in $WORK, a directory
# of its own, with its output going to its log.
#
# Every call of ckpt goes through ckpt (or ckpt_t, ckpt_bg), which runs it
# under a timeout and records it as the test's current step, together with
# the last `step` the test named: a test that hangs is reported with both.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CKPT=$ROOT/build/test/ckpt
# a restored process that hangs must fail its test, not the whole run:
# timeout's SIGTERM reaches it through restart's signal forwarding
RESTART_TIMEOUT=90
PROGS=$ROOT/build/test/progs
PROGS32=$ROOT/build/test/progs32	# the same built 32-bit, and tests/progs32
AUX=$ROOT/build/test/aux
PYTHON=/usr/bin/python3
[ -x $PYTHON ] || PYTHON=python3
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
export PATH=$PATH:/usr/sbin:/sbin

# t NAME [needs CAP...] [group G] [timeout SECONDS] [first]: register a
# test (see tests/README.md).  Only tests/one.sh --list prints them.
t() { [ -n "${T_LIST:-}" ] && echo "$*"; return 0; }

note() { printf '    %s\n' "$*"; }

# step TEXT: what the test does now, reported if it hangs.
step() {
	T_STEP=$*
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "$T_STEP" > "$T_STEPFILE"
	return 0
}

# ckpt ARGS...: ckpt under a timeout of $RESTART_TIMEOUT seconds;
# ckpt_t SECONDS ARGS...: under another; ckpt_bg ARGS... &: the same, for a
# background job whose pid ($!) must be ckpt's own (timeout passes on the
# signals sent to it).  A timeout says so in the log (exit 124).
# --foreground: ckpt stays in the test's process group, as restart's
# detached processes then do (in a group of its own, theirs would be
# orphaned when it exits, and a stopped one sent SIGCONT); what it
# leaves running the test's own timeout and cleanup end.
ckpt_t() {
	local limit=$1 rc
	shift
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: ckpt $*" > "$T_STEPFILE"
	timeout --foreground -k 5 "$limit" "$CKPT" "$@"
	rc=$?
	[ $rc = 124 ] && echo "ckpt $1: timed out after ${limit}s (in step: ${T_STEP:-start})" >&2
	return $rc
}
ckpt() { ckpt_t $RESTART_TIMEOUT "$@"; }
ckpt_bg() {
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: ckpt $*" > "$T_STEPFILE"
	exec timeout --foreground -k 5 $RESTART_TIMEOUT "$CKPT" "$@"
}

# (By the clock, not by a count of steps: each step is two programs run,
# which on a slow machine take longer than the sleep.)
wait_for() {	# FILE PATTERN [SECONDS]
	local end=$((SECONDS + ${3:-10} + 1))
	while ((SECONDS < end)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "timed out waiting for '$2' in $1"
	return 1
}

gone() {	# PID: true once no process has that pid
	local i
	for ((i = 0; i < 300; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		[ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = Z ] && return 0
		sleep 0.01
	done
	return 1
}

sanitizer_clean() {	# LOG...: no sanitizer report in these
	! grep -l "Sanitizer\|runtime error" "$@" 2>/dev/null
}

# Start the holder target in DIR (its output in DIR/out, GOFILE DIR/go)
# and set the caller's $pid.  usage: start_holder MODE DIR [MiB]
start_holder() {
	mkdir -p "$2"
	"${HOLDER_BIN:-$AUX/holder}" "$1" "$2/go" ${3:-} > "$2/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$2/out" READY 20
}

# The holder of DIR, saved as PID, once restart --pidns runs it again in
# its new pid namespace: the caller's $inner, its pid here (3 s).
pidns_holder() {	# DIR PID
	local i
	for ((i = 0; i < 300; i++)); do
		inner=$(pgrep -f "holder plain $1/go" | grep -vx $2 | head -1)
		[ -n "$inner" ] && return 0
		sleep 0.01
	done
	return 1
}

# checkpoint --kill PID into DIR/img; reap it (we are its parent).
checkpoint_kill() {	# DIR PID [CHECKPOINT-OPTION...]
	local d=$1 p=$2
	shift 2
	ckpt checkpoint --kill "$@" -o "$d/img" $p || return 1
	wait $p 2>/dev/null
	gone $p
}

# The protocol of tests/README.md for one program.
state_test() {	# PROG
	local prog=$1 d pid rpid rc
	d=$(mktemp -d "$WORK/${prog##*/}.XXXX")
	chmod 755 "$d"
	TP_TMPDIR=$d "$prog" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY || { kill -9 $pid; return 1; }
	sleep 0.3
	# PROG.flags, if there is one: more checkpoint options it needs
	if ! ckpt checkpoint --kill $(cat "$ROOT/tests/progs/${prog##*/}.flags" 2>/dev/null) \
			-o "$d/img" $pid 2> "$d/ckpt.err"; then
		cat "$d/ckpt.err" "$d/out"
		kill -9 $pid 2>/dev/null
		return 1
	fi
	wait $pid 2>/dev/null
	gone $pid || { echo "pid $pid still there after --kill"; return 1; }
	ckpt_bg restart "$d/img" > "$d/restart.out" 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		kill -0 $pid 2>/dev/null && break
		kill -0 $rpid 2>/dev/null || break
		sleep 0.01
	done
	touch "$d/go"
	wait $rpid
	rc=$?
	cat "$d/out" "$d/restart.out"
	# SysV segments a program made and could not remove (it died)
	[ -f "$d/shm_ids" ] && for id in $(cat "$d/shm_ids"); do ipcrm -m "$id" 2>/dev/null; done
	sanitizer_clean "$d/restart.out" "$d/ckpt.err" || return 1
	[ $rc = 0 ] && grep -q '^PASS' "$d/out" && ! grep -q '^FAIL' "$d/out"
}




# Checkpoints that must fail leave the target running exactly as before.
refused_checkpoint() {	# MODE EXPECT-IN-MESSAGE [STATES]
	# STATES: what the holder's State may be after (default: running or
	# sleeping; a parent in vfork() sleeps uninterruptibly)
	local d=$WORK/refuse-$1 pid
	start_holder $1 $d || return 1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "$2" $d/err || return 1
	# it names the holder, or (for sharing between them) its children
	grep -q "pid $pid\|pids $(pgrep -d ' ' -P $pid | sed 's/ / and /')" $d/err || return 1
	sanitizer_clean $d/err || return 1
	kill -0 $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	grep -q "^State:.*[${3:-SR}]" /proc/$pid/status || return 1
	# the image says why, and restart of it reports it
	ckpt restart $d/img 2> $d/err2
	[ $? = 125 ] && grep -q "failed checkpoint" $d/err2 || { cat $d/err2; return 1; }
	sleep 0.05
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}


# restart must refuse, exit 125, with one line naming PATTERN, leaving
# no process behind.
refused_restart() {	# DIR PID PATTERN
	ckpt_t 20 restart $1/img > $1/rout 2> $1/err
	local rc=$?
	note "$(cat $1/err)"
	[ $rc = 125 ] && [ "$(wc -l < $1/err)" = 1 ] && grep -q "$3" $1/err || return 1
	sanitizer_clean $1/err && ! kill -0 $2 2>/dev/null
}

# Open files must still be there at restart, and one the process only
