#!/usr/bin/env bash
# run.sh - the whole test suite, run by `make test` (after building).
# Ends with "N passed, N failed"; exits non-zero if anything failed.
# usage: tests/run.sh [NAME-FILTER]   (VERBOSE=1: show every test's log)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
CKPT=$ROOT/build/test/ckpt
# a restored process that hangs must fail its test, not the whole run:
# timeout's SIGTERM reaches it through restart's signal forwarding
RESTART_TIMEOUT=90
PROGS=$ROOT/build/test/progs
PROGS32=$ROOT/build/test/progs32	# the same built 32-bit, and tests/progs32
AUX=$ROOT/build/test/aux
FILTER=${1:-}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99

# Descriptors this shell inherited are not the tests' business; a target
# holding one of them would be refused as holding an unknown fd.
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

PASSED=0
FAILED=0
FAILS=()
WORK=$(mktemp -d /tmp/ckpt-tests.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT

PYTHON=/usr/bin/python3
[ -x $PYTHON ] || PYTHON=python3

note() { printf '    %s\n' "$*"; }

result() {	# NAME STATUS
	if [ "$2" = 0 ]; then
		PASSED=$((PASSED + 1))
		printf 'ok   %s\n' "$1"
	else
		FAILED=$((FAILED + 1))
		FAILS+=("$1")
		printf 'FAIL %s\n' "$1"
	fi
}

want() {	# NAME: run test_NAME unless filtered out
	[ -z "$FILTER" ] || [[ "$1" == *$FILTER* ]] || return 0
	local st
	"test_$1" > "$WORK/$1.log" 2>&1
	st=$?
	result "$1" $st
	[ $st = 0 ] && [ -z "${VERBOSE:-}" ] || sed 's/^/    | /' "$WORK/$1.log" | tail -25
}

wait_for() {	# FILE PATTERN [SECONDS]
	local i
	for ((i = 0; i < ${3:-10} * 100; i++)); do
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

# checkpoint --kill PID into DIR/img; reap it (we are its parent).
checkpoint_kill() {	# DIR PID
	"$CKPT" checkpoint --kill -o "$1/img" $2 || return 1
	wait $2 2>/dev/null
	gone $2
}

# The protocol of tests/README.md for one program.
state_test() {	# PROG
	local prog=$1 d pid rpid rc
	d=$(mktemp -d "$WORK/$(basename "$prog").XXXX")
	chmod 755 "$d"
	TP_TMPDIR=$d "$prog" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY || { kill -9 $pid; return 1; }
	sleep 0.3
	# PROG.flags, if there is one: more checkpoint options it needs
	if ! "$CKPT" checkpoint --kill $(cat "$ROOT/tests/progs/$(basename "$prog").flags" 2>/dev/null) \
			-o "$d/img" $pid 2> "$d/ckpt.err"; then
		cat "$d/ckpt.err" "$d/out"
		kill -9 $pid 2>/dev/null
		return 1
	fi
	wait $pid 2>/dev/null
	gone $pid || { echo "pid $pid still there after --kill"; return 1; }
	timeout $RESTART_TIMEOUT "$CKPT" restart "$d/img" > "$d/restart.out" 2>&1 &
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

for p in "$PROGS"/*; do
	name=state_$(basename "$p")
	eval "test_$name() { state_test '$p'; }"
done
for p in "$PROGS32"/*; do
	name=state32_$(basename "$p")
	eval "test_$name() { state_test '$p'; }"
done

# --- whole-tool tests ------------------------------------------------------

# python3 writing a counter, checkpointed mid-run and restarted: the output
# is exactly that of an uninterrupted run.
test_python_counter() {
	local d=$WORK/py pid n=400
	mkdir -p $d
	$PYTHON tests/aux/counter.py $n $d/ref
	$PYTHON tests/aux/counter.py $n $d/out < /dev/null > /dev/null 2>&1 &
	pid=$!
	wait_for $d/out '^50$' || return 1
	checkpoint_kill $d $pid || return 1
	note "checkpointed at line $(wc -l < $d/out) of $n"
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img || return 1
	cmp $d/ref $d/out
}

# checkpoint -o - | restart -: the image as a stream, both ways.
test_stream() {
	local d=$WORK/stream pid
	start_holder plain $d 4 || return 1
	"$CKPT" checkpoint --kill -o - $pid > $d/img.pipe 2> $d/err || { cat $d/err; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	cat $d/img.pipe | "$CKPT" info - > /dev/null || return 1
	( sleep 0.5; touch $d/go ) &
	cat $d/img.pipe | timeout $RESTART_TIMEOUT "$CKPT" restart - || return 1
	grep -q '^PASS' $d/out
}

# `ckpt info` shows every record, for people and as JSON for scripts.
test_info() {
	local d=$WORK/info pid
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	"$CKPT" info $d/img > $d/info.txt || return 1
	grep -q "^TASK .*pid=$pid" $d/info.txt && grep -q "image complete and verified" $d/info.txt || return 1
	"$CKPT" info --json $d/img | $PYTHON -c '
import json, sys
d = json.load(sys.stdin)
types = [r["type"] for r in d["records"]]
assert d["complete"] and types[0] == "HEAD", types
for t in ("TASK", "THREAD", "REGS", "XSTATE", "MM", "VMA", "PAGES", "SIGHAND", "CREDS", "FILE", "FD"):
    assert t in types, t
print(len(types), "records")'
}

# Without --kill the process runs on unharmed, and the image still works.
test_checkpoint_no_kill() {
	local d=${1:-$WORK/nokill} pid rpid
	start_holder plain $d 8 || return 1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	sleep 0.1
	touch $d/go
	wait $pid || { cat $d/out; return 1; }
	grep -q '^PASS' $d/out || return 1
	rm $d/go
	: > $d/out
	"$CKPT" restart --detach $d/img > $d/pid || return 1
	[ "$(cat $d/pid)" = $pid ] || return 1
	sleep 0.2
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# A checkpoint that leaves a forked tree running leaves its copy-on-write
# pages shared (reading them must not give each process its own copy).
test_checkpoint_keeps_cow() {
	local d=$WORK/keepcow pid all before after
	mkdir -p $d
	TP_TMPDIR=$d "$PROGS/cow" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	sleep 0.3
	all="$pid $(pgrep -P $pid | head -1)"
	before=$($PYTHON "$ROOT/tests/aux/cow_frames.py" $all)
	"$CKPT" checkpoint -o $d/img $pid || { kill -9 $pid; return 1; }
	after=$($PYTHON "$ROOT/tests/aux/cow_frames.py" $all)
	note "pages shared by parent and child: $before before, $after after"
	touch $d/go
	wait $pid
	[ "$before" -gt 1000 ] && [ "$after" = "$before" ]
}

# The same for a 32-bit process: let go, it runs on in its own mode.
test_checkpoint_no_kill32() {
	local HOLDER_BIN=$AUX/holder32
	test_checkpoint_no_kill $WORK/nokill32
}

# --detach prints the pid, returns at once, and the process is init's.
test_restart_detach() {
	local d=$WORK/detach pid ppid
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	[ "$("$CKPT" restart --detach $d/img)" = $pid ] || return 1
	ppid=$(awk '{print $4}' /proc/$pid/stat)
	note "restored pid $pid has parent $ppid"
	[ "$ppid" != $$ ] || return 1
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# restart's exit status is the process's; signals sent to restart reach it.
test_restart_status_and_signals() {
	local d=$WORK/status pid rpid rc
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	"$CKPT" restart $d/img &
	rpid=$!
	sleep 0.3
	kill -TERM $rpid
	wait $rpid
	rc=$?
	note "restart exited $rc after SIGTERM"
	[ $rc = 143 ]
}

# A checkpoint --kill followed at once by restart meets a zombie holding
# the pid (its parent has not reaped it yet): restart waits for it.
test_zombie_pid_wait() {
	local d=$WORK/zombie pid
	start_holder plain $d || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid || return 1
	# this shell is the parent: it reaps only after restart has begun
	( sleep 0.5; touch $d/go ) &
	"$CKPT" restart $d/img &
	local rpid=$!
	sleep 0.2
	wait $pid 2>/dev/null
	wait $rpid || return 1
	grep -q '^PASS' $d/out
}

# A process stopped by SIGSTOP (a ^Z'd job) is checkpointed as it is, left
# stopped, and comes back stopped.
test_stopped_process() {
	local d=$WORK/stopped pid
	start_holder plain $d || return 1
	kill -STOP $pid
	sleep 0.1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	grep -q '^State:.*T (stopped)' /proc/$pid/status || return 1
	kill -9 $pid
	wait $pid 2>/dev/null
	gone $pid || return 1
	[ "$("$CKPT" restart --detach $d/img)" = $pid ] || return 1
	grep -q '^State:.*T (stopped)' /proc/$pid/status || return 1
	kill -CONT $pid
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# --pidns: restart in a new pid namespace, where the saved pids are free
# even while the original still runs.
test_pidns() {
	local d=$WORK/pidns pid rpid inner
	start_holder plain $d || return 1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	timeout $RESTART_TIMEOUT "$CKPT" restart --pidns $d/img &
	rpid=$!
	for ((i = 0; i < 300; i++)); do
		inner=$(pgrep -f "holder plain $d/go" | grep -vx $pid | head -1)
		[ -n "$inner" ] && break
		sleep 0.01
	done
	[ -n "$inner" ] || return 1
	note "restored as $inner outside: $(grep NSpid /proc/$inner/status)"
	grep -q "^NSpid:.*[[:space:]]$pid\$" /proc/$inner/status || return 1
	touch $d/go
	# both exit 0 only if they PASS (they write over each other's line:
	# each has its own description of the output file at one offset)
	wait $rpid && wait $pid
}

# The same for a tree whose session and group are outside it (the test
# runner's): in the namespace they are the namespace init's.
test_pidns_tree() {
	local d=$WORK/pidns-tree pid rpid kids rc=0
	start_holder child $d || return 1
	kids=$(pgrep -P $pid)	# the holder's idle child: ended below
	"$CKPT" checkpoint -o $d/img $pid || rc=1
	if [ $rc = 0 ]; then
		timeout $RESTART_TIMEOUT "$CKPT" restart --pidns $d/img > $d/restart.out 2>&1 &
		rpid=$!
		sleep 1
		kill -0 $rpid 2>/dev/null || rc=1
		touch $d/go
		wait $rpid || rc=1
	fi
	touch $d/go
	wait $pid || rc=1
	kill -9 $kids 2>/dev/null
	[ $rc = 0 ] || cat $d/restart.out
	return $rc
}

# A pid held by a live process is a clear error; nothing is touched.
test_pid_in_use() {
	local d=$WORK/inuse pid err
	start_holder plain $d || return 1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	"$CKPT" restart $d/img 2> $d/err
	[ $? = 125 ] || return 1
	cat $d/err
	grep -q "pid $pid is in use" $d/err || return 1
	[ "$(wc -l < $d/err)" = 1 ] || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# Checkpoints that must fail leave the target running exactly as before.
refused_checkpoint() {	# MODE EXPECT-IN-MESSAGE [STATES]
	# STATES: what the holder's State may be after (default: running or
	# sleeping; a parent in vfork() sleeps uninterruptibly)
	local d=$WORK/refuse-$1 pid
	start_holder $1 $d || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
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
	"$CKPT" restart $d/img 2> $d/err2
	[ $? = 125 ] && grep -q "failed checkpoint" $d/err2 || { cat $d/err2; return 1; }
	sleep 0.05
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}
test_refuse_unknown_fd() { refused_checkpoint iouring 'fd [0-9]*: unsupported kind of file anon_inode:\[io_uring\]'; }
test_refuse_vfork() { refused_checkpoint vfork 'pid [0-9]* does not stop: it is in vfork()' D; }
test_refuse_shared_memory() { refused_checkpoint vmsibling 'share their memory (CLONE_VM), and neither has it from its parent'; }
test_refuse_socket() { refused_checkpoint netlink 'fd [0-9]*: unsupported kind of file socket:'; }
test_refuse_future_write() { refused_checkpoint futurewrite 'a writable mapping of a memfd sealed with F_SEAL_FUTURE_WRITE'; }
test_refuse_deleted_with_links() { refused_checkpoint linkeddel 'sub/file (deleted): its name was removed, but 1 other links'; }

# A deleted file comes back in its directory: without it, restart fails
# clearly before any process exists; with it back, it works.
test_deleted_dir_gone() {
	local d=$WORK/deleted-dir pid
	start_holder deleted $d || return 1
	checkpoint_kill $d $pid || return 1
	rm -rf $d/sub
	"$CKPT" restart $d/img 2> $d/err
	[ $? = 125 ] || { cat $d/err; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "sub/file, $d/sub, is gone" $d/err || return 1
	! kill -0 $pid 2>/dev/null || return 1
	mkdir $d/sub
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img && grep -q '^PASS' $d/out
}

# Input queued for the slave of a pty in packet mode is refused (its
# put-back is checked by its echo, which packet mode would garble), and
# still there for the target after.
test_refuse_pty_data() {
	local d=$WORK/ptydata pid
	mkdir -p $d
	$PYTHON -c '
import fcntl, os, sys, termios, time
m, s = os.openpty()
t = termios.tcgetattr(s)
t[3] &= ~termios.ECHO
termios.tcsetattr(s, termios.TCSANOW, t)
fcntl.ioctl(m, termios.TIOCPKT, b"\1\0\0\0")
os.write(m, b"queued\n")
print("READY", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
print("PASS" if os.read(s, 100) == b"queued\n" else "FAIL", flush=True)' $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; return 1; }
	cat $d/err
	grep -q "pid $pid fd [0-9]*: 7 bytes queued for the slave of a pty in packet mode, in pty" $d/err || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# Output queued for the master of a pty stopped by ^S (tcflow TCOOFF)
# could not be put back: refused before it is read, and after the
# checkpoint the output is still there and the pty still stopped.
test_refuse_pty_stopped() {
	local d=$WORK/ptystop pid
	mkdir -p $d
	$PYTHON -c '
import os, select, sys, termios, time
m, s = os.openpty()
os.write(s, b"hello\n")
termios.tcflow(s, termios.TCOOFF)
print("READY", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
os.set_blocking(s, False)
try:
    os.write(s, b"x")
    stopped = False
except BlockingIOError:
    stopped = True
termios.tcflow(s, termios.TCOON)
got = b""
while select.select([m], [], [], 0.3)[0]:
    got += os.read(m, 100)
print("PASS" if stopped and got.startswith(b"hello\r\n") else "FAIL %r %r" % (stopped, got), flush=True)' $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; return 1; }
	cat $d/err
	grep -q "pid $pid fd [0-9]*: 7 bytes queued for the master, its slave stopped (^S) or full, in pty" $d/err || return 1
	touch $d/go
	wait $pid; cat $d/out; grep -q '^PASS' $d/out
}

# Bytes queued in a pty inside the tree: output the master has not read
# (8000 bytes, more than the line discipline holds, and a newline that
# OPOST made CRLF); input a non-canonical slave has not read (its echo
# is queued for the master too); input of a canonical slave: a line, a
# line ended by ^D and a line being typed, with their echo.  A plain
# checkpoint reads them out and puts them back; after checkpoint --kill
# and restart each is there once: no second CR, no second echo, the
# same lines, and the line being typed can be finished.
test_pty_queued() {
	local d=$WORK/ptyq pid rpid
	mkdir -p $d
	$PYTHON -c '
import fcntl, os, select, struct, sys, termios, time
def drain(fd):
    got = b""
    while select.select([fd], [], [], 0.3)[0]:
        got += os.read(fd, 65536)
    return got
m1, s1 = os.openpty()
out = bytes(65 + i % 26 for i in range(8000)) + b"\n"
os.set_blocking(s1, False)
assert os.write(s1, out) == len(out)
m2, s2 = os.openpty()
t = termios.tcgetattr(s2)
t[0] = 0
t[3] = termios.ECHO
termios.tcsetattr(s2, termios.TCSANOW, t)
os.write(m2, b"typed-ahead")
m3, s3 = os.openpty()
os.write(m3, b"first line\nsecond\x04third-partial")
m4, s4 = os.openpty()
t = termios.tcgetattr(s4)
t[3] &= ~termios.ECHO
t[6][termios.VEOL2] = b"%"
termios.tcsetattr(s4, termios.TCSANOW, t)
os.write(m4, b"foo%bar\na\x16\x04b\nc\x16\x15d")
m5, s5 = os.openpty()
t = termios.tcgetattr(s5)
t[0] = t[3] = 0
t[6][termios.VMIN] = 5
termios.tcsetattr(s5, termios.TCSANOW, t)
os.write(m5, b"ab")
m6, s6 = os.openpty()
t = termios.tcgetattr(s6)
t[0] = t[3] = 0
termios.tcsetattr(s6, termios.TCSANOW, t)
os.write(s6, b"out6")
os.write(m6, b"in6")
fcntl.ioctl(m6, 0x40045431, struct.pack("i", 1))   # TIOCSPTLCK
time.sleep(0.1)
print("READY", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
fails = []
got = drain(m1)
if got != out[:-1] + b"\r\n":
    fails.append("master 1: %d bytes, %r..." % (len(got), got[-8:]))
got = drain(s2)
if got != b"typed-ahead":
    fails.append("slave 2: %r" % got)
got = drain(m2)
if got != b"typed-ahead":
    fails.append("master 2 (the echo): %r" % got)
got = drain(m3)
if got != b"first line\r\nsecondthird-partial":
    fails.append("master 3 (the echo): %r" % got)
got = [os.read(s3, 100), os.read(s3, 100)]
os.write(m3, b" done\n")
got.append(os.read(s3, 100))
if got != [b"first line\n", b"second", b"third-partial done\n"]:
    fails.append("slave 3 (canonical): %r" % got)
os.write(m4, b"e\n")
got = [os.read(s4, 100) for _ in range(4)]
if got != [b"foo%", b"bar\n", b"a\x04b\n", b"c\x15de\n"]:
    fails.append("slave 4 (VEOL2, quoted ^D and ^U): %r" % got)
os.set_blocking(s5, False)
try:
    got = os.read(s5, 100)
except BlockingIOError:
    got = b"nothing"
if got != b"ab":
    fails.append("slave 5 (VMIN 5): %r" % got)
got = (drain(m6), drain(s6))
if got != (b"out6", b"in6"):
    fails.append("locked pty 6: %r" % (got,))
print("\n".join("FAIL " + f for f in fails) or "PASS", flush=True)' $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	"$CKPT" checkpoint -o $d/img0 $pid 2> $d/err0 || { cat $d/err0; kill $pid; return 1; }
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err || { cat $d/err; kill $pid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	"$CKPT" info $d/img > $d/info || return 1
	grep -q '^TTY_DATA .*to=master bytes=8002' $d/info &&
		grep -q '^TTY_DATA .*to=slave bytes=11' $d/info &&
		grep -q '^TTY_DATA .*to=master bytes=11' $d/info &&
		grep -q '^TTY_DATA .*to=slave bytes=31 partial=13' $d/info &&
		[ "$(grep -c '^TTY_DATA' $d/info)" = 9 ] ||
		{ grep TTY $d/info; return 1; }
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img < /dev/null > $d/restart.out 2>&1
	local rc=$?
	cat $d/out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && sanitizer_clean $d/err0 $d/err $d/restart.out
}

test_refuse_lease() { refused_checkpoint lease 'fd [0-9]*: a LEASE READ lock (or lease) on .*/lease, not supported'; }

# A pipe above stdio whose other end is outside the tree: refused, saying so.
test_refuse_outside_pipe() {
	local d=$WORK/outpipe pid
	mkdir -p $d
	# (a process substitution's writer would be the holder's own child)
	true | "$AUX/holder" plain $d/go 3<&0 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
	local rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "pid $pid fd 3: .*a pipe whose other end is outside the tree" $d/err || return 1
	kill -0 $pid || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}
# an epoll is refused with what it watches, and when what it watches is
# out of reach (its fd closed, the file kept open outside the tree)
test_refuse_epoll_target() { refused_checkpoint epollring 'fd [0-9]*: unsupported kind of file anon_inode:\[io_uring\]'; }
test_refuse_epoll_gone() { refused_checkpoint epollgone 'epoll watches fd [0-9]*, which is closed while its file lives on outside'; }
test_refuse_epoll_later() { refused_checkpoint epolllater 'epoll watches fd [0-9]*, whose file only a later process (pid [0-9]*) holds'; }

# A Redis-like server (tests/aux/kvserver.c) whose clients are outside
# the tree (tests/aux/kvclient.py) and keep their connections: what they
# sent before the checkpoint is answered once, the server's queued bytes
# arrive once and in order, a half-closed connection stays half-open, the
# listener takes new clients.  MODE kill: checkpoint --kill and restart
# (a FIN or RST from the killed server fails the client); MODE live: a
# checkpoint without --tcp-established is refused, one failing (on a
# full disk) and one succeeding without --kill leave the server serving
# as before.  MODE keepalive: kill, and a client sends keepalive probes
# while the server is gone, which only the network lock keeps from being
# answered with a RST.  The lock's rules (for the server's port) are
# there while the server is gone, and none after a failed checkpoint,
# one without --kill, or the restart.
kv_test() {	# MODE
	local d=$WORK/kv_$1 pid cpid rpid= port
	mkdir -p $d
	"$AUX/kvserver" $d/go > $d/srv.out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/srv.out '^PORT' || return 1
	port=$(awk '/^PORT/{print $2}' $d/srv.out)
	$PYTHON tests/aux/kvclient.py $port $d/srv.out $([ $1 = keepalive ] && echo keepalive) \
		> $d/cli.out 2>&1 &
	cpid=$!
	wait_for $d/cli.out '^SENT' || { cat $d/cli.out; kill -9 $pid; return 1; }
	if [ $1 = live ]; then
		"$CKPT" checkpoint -o $d/img0 $pid 2> $d/err0
		grep -q 'TCP connection to 127.0.0.1:.*--tcp-established' $d/err0 ||
			{ cat $d/err0; kill -9 $pid; return 1; }
		# one failing late, once its connections are in repair mode
		if "$CKPT" checkpoint --tcp-established -o /dev/full $pid 2> $d/err1; then
			echo "a checkpoint to /dev/full succeeded"; kill -9 $pid; return 1
		fi
		lock_rules $port "after a failed checkpoint" || { kill -9 $pid; return 1; }
		"$CKPT" checkpoint --tcp-established -o $d/img $pid 2> $d/err ||
			{ cat $d/err; kill -9 $pid; return 1; }
		lock_rules $port "after a checkpoint without --kill" ||
			{ kill -9 $pid; return 1; }
	else
		"$CKPT" checkpoint --kill --tcp-established -o $d/img $pid 2> $d/err ||
			{ cat $d/err; kill -9 $pid; return 1; }
		wait $pid 2>/dev/null
		gone $pid || return 1
		[ $1 = kill ] || sleep 3	# probes come meanwhile
		[ "$(lock_rules $port)" = 4 ] ||
			{ echo "not 4 lock rules while the server is gone"; lock_rules $port; return 1; }
		timeout $RESTART_TIMEOUT "$CKPT" restart $d/img > $d/restart.out 2>&1 &
		rpid=$!
		for ((i = 0; i < 500; i++)); do
			kill -0 $pid 2>/dev/null && break
			sleep 0.01
		done
	fi
	touch $d/go
	wait $cpid
	local crc=$? rrc=0
	if [ -n "$rpid" ]; then wait $rpid; rrc=$?; else wait $pid; rrc=$?; fi
	cat $d/cli.out $d/srv.out ${rpid:+$d/restart.out}
	sanitizer_clean $d/err ${rpid:+$d/restart.out} || return 1
	[ $crc = 0 ] && [ $rrc = 0 ] && grep -q '^PASS' $d/cli.out && ! grep -q FAIL $d/srv.out &&
		lock_rules $port "after the restart"
}
# lock_rules PORT WHEN: none of the network lock's rules for the server's
# PORT are left; lock_rules PORT: how many there are.
lock_rules() {
	local n
	n=$(iptables -w -S CKPT-LOCK 2>/dev/null | grep -c -- "--dport $1 -j DROP")
	[ $# = 1 ] && { echo $n; return 0; }
	[ "$n" = 0 ] || { echo "$n network lock rules left $2:"; iptables -w -S CKPT-LOCK; return 1; }
}
test_tcp_peer_outside() { kv_test kill; }
test_tcp_netlock() { kv_test keepalive; }
test_tcp_checkpoint_live() { kv_test live; }
# Connections being opened (SYN_SENT) to a listener outside the tree that
# drops their SYNs (its accept queue is full): after restart they open,
# the one of a non-blocking connect() and the one of a thread blocked in
# connect(), once the listener makes room.  No --tcp-established needed.
test_tcp_connecting() {
	local d=$WORK/connecting pid rpid lpid
	mkdir -p $d
	$PYTHON - $d > $d/lst.out 2>&1 <<'PY' &
import os, socket, sys, time
d = sys.argv[1]
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(0)
filler = socket.create_connection(l.getsockname())  # fills the queue
print("PORT", l.getsockname()[1], flush=True)
while not os.path.exists(d + "/accept"):
    time.sleep(0.01)
l.listen(8)     # room for both: two in a full queue race and may lose data
l.settimeout(20)
got = []
for _ in range(3):
    c, _ = l.accept()
    c.settimeout(20)
    if c.getpeername() != filler.getsockname():
        got.append(c.recv(16).decode() or "-")
print("GOT", "".join(sorted(got)).replace("\n", ""), flush=True)
PY
	lpid=$!
	wait_for $d/lst.out '^PORT' || return 1
	"$AUX/connecting" $(awk '/^PORT/{print $2}' $d/lst.out) > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out '^READY' || { cat $d/out; kill $lpid; return 1; }
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err ||
		{ cat $d/err; kill -9 $pid $lpid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	"$CKPT" info $d/img | grep -c '^FILE .*state=SYN_SENT' | grep -qx 2 ||
		{ echo "not two SYN_SENT sockets in the image"; kill $lpid; return 1; }
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img > $d/restart.out 2>&1 &
	rpid=$!
	sleep 0.3
	touch $d/accept
	wait $rpid
	local rc=$?
	wait $lpid
	cat $d/out $d/lst.out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && grep -q '^GOT AB$' $d/lst.out &&
		sanitizer_clean $d/err $d/restart.out
}
test_refuse_unix_fds() { refused_checkpoint unixfds 'fd [0-9]*: unix socket has file descriptors in flight (SCM_RIGHTS)'; }

# A unix socket connected to a process outside the tree is refused, naming
# pid, fd and peer, unless --external-unix: then it comes back with its
# peer gone and the data that was queued for it, or, a datagram socket
# connected to a path (a syslog client's), connected to it again.  Stdio
# so connected is the caller's (inherited) either way.
unix_external() {	# DIR: python holds the other ends until DIR/done
	local d=$1 pid rc rpid
	wait_for $d/out READY || return 1
	pid=$(head -1 $d/py.out)
	"$CKPT" checkpoint -o $d/img $pid 2> $d/err
	rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] || return 1
	grep -Eq "pid $pid fd (3: unix dgram socket connected to socket:\\[[0-9]+\\] \\($d/log.sock\\)|9: unix stream socket connected to socket:\\[[0-9]+\\] \\(unnamed\\)) outside the tree" $d/err || return 1
	grep -q '^State:.*[SR]' /proc/$pid/status || return 1
	"$CKPT" checkpoint --kill --external-unix -o $d/img $pid 2> $d/err || { cat $d/err; return 1; }
	gone $pid || return 1
	"$CKPT" info $d/img > $d/info || return 1
	grep -q "^UNIX_SK .*state=peer-gone.*bytes=12" $d/info || return 1
	grep -q "^FILE .*kind=inherit.*path=socket:" $d/info || return 1
	grep -q "^UNIX_SK .*type=dgram state=remote .*name=$d/log.sock" $d/info || return 1
	( sleep 0.5; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img < /dev/null > $d/restart.out 2>&1 &
	rpid=$!
	for ((i = 0; i < 300; i++)); do
		[ -e /proc/$pid/fd/9 ] && break
		sleep 0.01
	done
	readlink /proc/$pid/fd/9 | grep -q '^socket:' || { echo "fd 9 is not a socket"; return 1; }
	wait $rpid || { cat $d/restart.out; return 1; }
	grep -q '^PASS' $d/out && sanitizer_clean $d/err $d/restart.out || return 1
	wait_for $d/got after 5	# the log server heard from the restored process
}
test_unix_external() {
	local d=$WORK/unixext st py
	mkdir -p $d
	$PYTHON - "$AUX/holder" $d > $d/py.out 2>&1 <<'PY' &
import os, socket, subprocess, sys, threading, time
holder, d = sys.argv[1], sys.argv[2]
a, b = socket.socketpair()
i, j = socket.socketpair()
log = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
log.bind(d + "/log.sock")
def serve():
    while True:
        open(d + "/got", "ab").write(log.recv(100) + b"\n")
threading.Thread(target=serve, daemon=True).start()
os.dup2(b.fileno(), 9)
os.environ["CKPT_TEST_LOG"] = d + "/log.sock"
p = subprocess.Popen([holder, "unixlog", d + "/go"], pass_fds=[9], stdin=j,
                     stdout=open(d + "/out", "w"), stderr=subprocess.STDOUT)
print(p.pid, flush=True)
threading.Thread(target=p.wait, daemon=True).start()
a.sendall(b"from-outside")
while os.path.isdir(d) and not os.path.exists(d + "/done"):
    time.sleep(0.05)
PY
	py=$!
	unix_external $d
	st=$?
	[ $st = 0 ] || kill -9 "$(head -1 $d/py.out)" 2>/dev/null	# no holder left behind
	touch $d/done
	wait $py
	return $st
}

# A checkpoint without --kill reads the data queued on unix sockets without
# consuming it, and puts back the target's own peek offset: the programs
# of the state tests find everything as they left it, running on.
test_unix_no_kill() {
	local p d pid
	for p in unix_stream unix_dgram unix_listen; do
		d=$WORK/nokill-$p
		mkdir -p $d
		TP_TMPDIR=$d "$PROGS/$p" $d/go > $d/out 2>&1 < /dev/null &
		pid=$!
		wait_for $d/out READY || return 1
		sleep 0.3
		"$CKPT" checkpoint -o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $pid; return 1; }
		touch $d/go
		wait $pid || { cat $d/out; return 1; }
		grep -q '^PASS' $d/out && sanitizer_clean $d/err || return 1
	done
}

# A listener's socket file left by the killed process is bound anew at
# restart; a regular file in its place fails the restart before any
# process exists.
test_unix_path_in_way() {
	local d=$WORK/unixway pid
	mkdir -p $d
	TP_TMPDIR=$d "$PROGS/unix_listen" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	checkpoint_kill $d $pid || { kill -9 $pid; return 1; }
	[ -S $d/listen.sock ] || { echo "no stale socket file"; return 1; }
	rm $d/listen.sock
	echo data > $d/listen.sock
	"$CKPT" restart $d/img > $d/restart.out 2>&1
	[ $? = 125 ] || { cat $d/restart.out; return 1; }
	cat $d/restart.out
	grep -q "unix socket $d/listen.sock: in the way, not a socket" $d/restart.out || return 1
	! kill -0 $pid 2>/dev/null && [ "$(cat $d/listen.sock)" = data ]
}

# A 64-bit program running 32-bit code (a far jump) is refused clearly,
# and runs on untraced.
test_refuse_mode_switch() {
	local d=$WORK/farjump pid rc
	start_holder farjump $d || return 1
	sleep 0.1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
	rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] || return 1
	grep -q "pid $pid: tid $pid runs 32-bit code in a 64-bit program" $d/err || return 1
	kill -0 $pid && grep -q '^State:.*S' /proc/$pid/status || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	kill -9 $pid
	wait $pid 2>/dev/null
	return 0
}

# --skip-unsupported leaves such fds out instead.
test_skip_unsupported() {
	local d=$WORK/skip pid
	start_holder iouring $d || return 1
	"$CKPT" checkpoint --kill --skip-unsupported -o $d/img $pid 2> $d/err || return 1
	grep -q "skipping unsupported" $d/err || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img && grep -q '^PASS' $d/out
}

# A process ptrace'd by someone else cannot be held: EPERM, clearly.
test_refuse_traced() {
	local d=$WORK/traced pid tpid
	start_holder plain $d || return 1
	"$AUX/tracer" $pid > $d/tracer.out &
	tpid=$!
	wait_for $d/tracer.out TRACING || return 1
	"$CKPT" checkpoint -o $d/img $pid 2> $d/err
	local rc=$?
	kill $tpid; wait $tpid 2>/dev/null
	cat $d/err
	[ $rc = 1 ] && grep -q "cannot trace pid $pid" $d/err || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# The target dies while its image is being written: a clear failure.
test_target_dies_midway() {
	local d=$WORK/dies pid cpid
	start_holder plain $d 256 || return 1
	mkfifo $d/fifo
	"$CKPT" checkpoint -o - $pid > $d/fifo 2> $d/err &
	cpid=$!
	exec 7< $d/fifo
	head -c 100000 <&7 > /dev/null	# ckpt is now blocked mid-image
	kill -9 $pid
	cat <&7 > $d/rest
	exec 7<&-
	wait $cpid
	local rc=$?
	cat $d/err
	[ $rc = 1 ] && grep -q "pid $pid" $d/err && sanitizer_clean $d/err
}

# A restart that fails part-way leaves nothing behind and says why.
test_restart_fails_cleanly() {
	local d=$WORK/rfail pid
	mkdir -p $d
	cp "$AUX/holder" $d/holder-copy
	$d/holder-copy plain $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	checkpoint_kill $d $pid || return 1
	rm $d/holder-copy	# the executable is gone now
	"$CKPT" restart $d/img 2> $d/err
	[ $? = 125 ] || return 1
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q holder-copy $d/err || return 1
	! kill -0 $pid 2>/dev/null
}

# A big image's page checksums are checked while the tree is built
# (pageverify.c): a flipped byte deep in its page data still fails the
# restart with one line, the process built meanwhile never runs (it
# would print, its GO file is there) and is gone; the good image then
# restarts.
test_restart_bad_pages() {
	local d=$WORK/badpages pid size
	start_holder plain $d 48 || return 1
	checkpoint_kill $d $pid || return 1
	touch $d/go
	cp $d/img $d/good
	size=$(stat -c %s $d/img)
	$PYTHON -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x20]))' $d/img $((size * 3 / 4)) || return 1
	refused_restart $d $pid "record PAGES at offset [0-9]*: checksum mismatch (corrupt image)" ||
		return 1
	[ "$(grep -vc READY $d/out)" = 0 ] || { echo "the process ran:"; cat $d/out; return 1; }
	cp $d/good $d/img
	"$CKPT" restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# restart must refuse, exit 125, with one line naming PATTERN, leaving
# no process behind.
refused_restart() {	# DIR PID PATTERN
	timeout 20 "$CKPT" restart $1/img > $1/rout 2> $1/err
	local rc=$?
	note "$(cat $1/err)"
	[ $rc = 125 ] && [ "$(wc -l < $1/err)" = 1 ] && grep -q "$3" $1/err || return 1
	sanitizer_clean $1/err && ! kill -0 $2 2>/dev/null
}

# Open files must still be there at restart, and one the process only
# reads must be unchanged; one it writes to may have changed (see reg.c).
test_open_file_changed() {
	local d=$WORK/filechanged pid
	mkdir -p $d
	echo hello > $d/ro
	start_holder files $d || return 1
	checkpoint_kill $d $pid || return 1
	cp -p $d/ro $d/ro.orig
	echo more >> $d/ro
	refused_restart $d $pid "open file $d/ro changed since the checkpoint" || return 1
	cp -p $d/ro.orig $d/ro
	touch -d '2001-01-01' $d/ro
	refused_restart $d $pid "open file $d/ro changed" || return 1
	cp -p $d/ro.orig $d/ro
	rm $d/ro
	refused_restart $d $pid "open file $d/ro: No such file" || return 1
	cp -p $d/ro.orig $d/ro
	mv $d/rw $d/rw.orig
	mkdir $d/rw
	refused_restart $d $pid "open file $d/rw is no longer the same kind" || return 1
	rmdir $d/rw
	mv $d/rw.orig $d/rw
	echo "written by someone" >> $d/rw
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img && grep -q '^PASS' $d/out
}

# Locks the process held are taken again at restart; one taken meanwhile
# by another process (a POSIX lock, a flock, or the original's own locks
# when a copy is restarted beside it) fails the restart naming the file.
test_lock_conflict() {
	local d=$WORK/lockconflict pid other
	start_holder lock $d || return 1
	"$CKPT" checkpoint -o $d/img.live $pid || return 1
	timeout 20 "$CKPT" restart --pidns $d/img.live > $d/rout 2> $d/err
	local rc=$?
	note "beside the original: $(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "$d/lock is locked by another process" $d/err || return 1
	checkpoint_kill $d $pid || return 1
	$PYTHON -c 'import fcntl, sys, time
f = open(sys.argv[1], "r+"); fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 15)
print("LOCKED", flush=True); time.sleep(100)' $d/lock > $d/py.out &
	other=$!
	wait_for $d/py.out LOCKED || return 1
	refused_restart $d $pid "$d/lock is locked by another process (pid $other)" || return 1
	kill $other; wait $other 2>/dev/null
	flock -o $d/lock sleep 100 &
	other=$!
	sleep 0.2
	refused_restart $d $pid "$d/lock is locked by another process: cannot take its flock" || return 1
	kill $other; wait $other 2>/dev/null
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img && grep -q '^PASS' $d/out
}

# A FIFO's data is put back once: a FIFO that holds data at restart is
# still open elsewhere (here the original, beside which a copy is
# restarted), and restart refuses it rather than doubling the data.
test_fifo_open_elsewhere() {
	local d=$WORK/fifoelsewhere pid
	start_holder fifo $d || return 1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	timeout 20 "$CKPT" restart --pidns $d/img > $d/rout 2> $d/err
	local rc=$?
	note "$(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "FIFO $d/fifo already holds 4 bytes" $d/err || return 1
	kill -9 $pid; wait $pid 2>/dev/null
	gone $pid || return 1
	( sleep 0.3; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img || return 1
	grep -q '^PASS' $d/out
}

# A process left in a session whose leader has exited comes back in it,
# with its parent (a stand-in leader forks it with CLONE_PARENT).  And a
# failure once the processes exist (the stand-in's pid taken by another
# process) removes every one of them.
test_orphan_session() {
	local d=$WORK/orphansession pid kid sid rpid
	start_holder orphansession $d || return 1
	kid=$(cat /proc/$pid/task/*/children | tr -d " ")
	sid=$(awk '{print $6}' /proc/$kid/stat)
	[ -n "$kid" ] && [ "$sid" != "$(awk '{print $6}' /proc/$pid/stat)" ] || return 1
	checkpoint_kill $d $pid || return 1
	gone $kid || return 1
	sleep 2	# init reaps the orphaned grandchild
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img &
	rpid=$!
	for ((i = 0; i < 300; i++)); do
		[ -e /proc/$kid/stat ] && break
		sleep 0.01
	done
	note "restored $kid: $(awk '{print "ppid",$4,"pgrp",$5,"sid",$6}' /proc/$kid/stat)"
	[ "$(awk '{print $4, $6}' /proc/$kid/stat)" = "$pid $sid" ] || return 1
	touch $d/go
	wait $rpid || return 1
	gone $kid || return 1
	sleep 2
	# now with the session leader's pid in use: restart fails part-way
	rm $d/go
	local hold last
	last=$(cat /proc/sys/kernel/ns_last_pid)
	for ((i = 0; i < 20; i++)); do
		echo $((sid - 1)) > /proc/sys/kernel/ns_last_pid
		sleep 100 &
		hold=$!
		[ $hold = $sid ] && break
		kill $hold
	done
	echo $last > /proc/sys/kernel/ns_last_pid	# new pids far from the tree's
	[ "$hold" = $sid ] || { note "could not take pid $sid: skipped the failing half"; return 0; }
	"$CKPT" restart $d/img 2> $d/err
	local rc=$?
	kill $hold; wait $hold 2>/dev/null
	note "with pid $sid taken: $(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $sid is in use" $d/err || return 1
	for p in $pid $kid; do
		! kill -0 $p 2>/dev/null || { echo "pid $p left behind"; return 1; }
	done
}

# --shell-job: a job of a shell on one pty, restarted as a job of a shell
# on another (tests/aux/shelljob.py says all it checks).
test_shell_job() {
	timeout $RESTART_TIMEOUT $PYTHON tests/aux/shelljob.py "$CKPT" $WORK/shelljob
}

# The demo, non-interactively.
test_demo() {
	"$CKPT" demo > $WORK/demo.out 2>&1 || { cat $WORK/demo.out; return 1; }
	grep -q "finished all 30 steps" $WORK/demo.out
}

# seccomp: a filter that hands calls to a supervisor is refused, the
# target left as it was.
test_refuse_seccomp_usernotif() { refused_checkpoint usernotif 'seccomp filter 0 (0 is the oldest) returns SECCOMP_RET_USER_NOTIF'; }

# A process under a seccomp filter, checkpointed without --kill: ckpt's
# calls inside it are not filtered, and once let go its filter applies
# again (the holder checks); the image restarts with the filter.
test_seccomp_no_kill() {
	local d=$WORK/seccomp-nokill pid
	start_holder seccomp $d || return 1
	"$CKPT" checkpoint -o $d/img $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	grep -q '^Seccomp:.*2' /proc/$pid/status || return 1
	touch $d/go
	wait $pid || { cat $d/out; return 1; }
	grep -q '^PASS' $d/out || return 1
	rm $d/go
	: > $d/out
	"$CKPT" restart --detach $d/img > $d/pid || return 1
	[ "$(cat $d/pid)" = $pid ] || return 1
	grep '^Seccomp\|^NoNewPrivs' /proc/$pid/status
	grep -q '^Seccomp:.*2' /proc/$pid/status &&
		grep -q '^NoNewPrivs:.*1' /proc/$pid/status || return 1
	touch $d/go
	gone $pid || return 1
	cat $d/out
	grep -q '^PASS' $d/out
}

# Strict mode (read, write, exit, sigreturn only): restored strict, with
# its state; it reads and writes, and any other call kills it.
test_seccomp_strict() {
	local d=$WORK/strict pid wpid rc
	mkdir -p $d
	# its stdin a pipe from outside the tree (restart gives it its own)
	{ printf cc; while [ ! -e $d/done ]; do sleep 0.05; done; } |
		"$AUX/strict" > $d/out 2>&1 &
	pid=$!
	wait_for $d/out READY || { touch $d/done; return 1; }
	grep -q '^Seccomp:.*1' /proc/$pid/status || { touch $d/done; return 1; }
	sleep 0.1
	"$CKPT" checkpoint --kill -o $d/img $pid
	rc=$?
	touch $d/done	# (wait waits for the whole pipeline)
	wait $pid 2>/dev/null
	[ $rc = 0 ] && gone $pid || return 1
	# one more count, then PASS with the count (3) and exit
	printf cx | timeout $RESTART_TIMEOUT "$CKPT" restart $d/img || return 1
	grep -q '^PASS 3' $d/out || { cat $d/out; return 1; }
	# again, seen strict while it runs; then a forbidden call kills it
	{
		for ((i = 0; i < 500; i++)); do
			grep -q '^Seccomp:.*1' /proc/$pid/status 2>/dev/null && break
			sleep 0.01
		done
		grep '^Seccomp:' /proc/$pid/status > $d/status
		printf k
	} | timeout $RESTART_TIMEOUT "$CKPT" restart $d/img
	rc=$?
	cat $d/status
	note "restart exit $rc after a forbidden call"
	grep -q '^Seccomp:.*1' $d/status && [ $rc = 137 ]
}

test_bad_images() { bash tests/bad_images.sh "$CKPT" "$AUX/holder" "$WORK/bad" "$AUX/holder32"; }

# SysV shared memory (tests/progs/sysvshm.c, its segments listed in
# DIR/shm_ids): start it and checkpoint it --kill; SHM_KEY is its key.
SHM_KEY=0x636b7353
sysv_start() {	# DIR; sets $pid
	mkdir -p $1
	TP_TMPDIR=$1 "$PROGS/sysvshm" $1/go > $1/out 2>&1 < /dev/null &
	pid=$!
	wait_for $1/out READY || return 1
	checkpoint_kill $1 $pid
}

# a segment with KEY (0: IPC_PRIVATE), or with id ID if one is given
sysv_make() {	# KEY [ID]
	$PYTHON - "$@" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
nid = "/proc/sys/kernel/shm_next_id"
if len(sys.argv) > 2:
    open(nid, "w").write(sys.argv[2])
got = libc.shmget(int(sys.argv[1], 0), 4096, 0o1600)
if len(sys.argv) > 2:
    open(nid, "w").write("-1")
print(got)
sys.exit(got < 0)
PY
}

sysv_cleanup() {	# DIR [IDS...]: whatever the test made, gone
	local id
	for id in $(cat $1/shm_ids 2>/dev/null) "${@:2}"; do ipcrm -m $id 2>/dev/null; done
	ipcrm -M $SHM_KEY 2>/dev/null
	return 0
}

# The segments removed after the checkpoint: restart makes them again
# with their ids and content (the program checks both).  First a restart
# that fails after making them (its flock is taken): they go again.
test_sysvshm_recreated() {
	local d=$WORK/sysvgone pid rc other id
	sysv_start $d || { sysv_cleanup $d; return 1; }
	for id in $(cat $d/shm_ids); do ipcrm -m $id || return 1; done
	flock -o $d/lock sleep 100 &
	other=$!
	sleep 0.2
	refused_restart $d $pid "$d/lock is locked by another process"
	rc=$?
	kill $other; wait $other 2>/dev/null
	for id in $(cat $d/shm_ids); do
		awk -v id=$id '$2 == id { f = 1 } END { exit !f }' /proc/sysvipc/shm &&
			{ note "segment $id left behind"; rc=1; }
	done
	[ $rc = 0 ] || { sysv_cleanup $d; return 1; }
	( sleep 0.5; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img > $d/rout 2>&1
	rc=$?
	cat $d/out $d/rout
	sysv_cleanup $d
	[ $rc = 0 ] && grep -q '^PASS' $d/out && sanitizer_clean $d/rout
}

# Another segment has the key, or the id, of a saved one that is gone:
# the restart is refused naming it, no segment is made or removed.
test_sysvshm_conflict() {
	local d=$WORK/sysvconflict pid other before ida idb rc
	sysv_start $d || { sysv_cleanup $d; return 1; }
	read ida idb < $d/shm_ids
	ipcrm -m $ida && ipcrm -m $idb || { sysv_cleanup $d; return 1; }
	other=$(sysv_make $SHM_KEY) || { sysv_cleanup $d; return 1; }
	before=$(ipcs -m | sort)
	refused_restart $d $pid "SysV shared memory key $SHM_KEY is used by another segment (id $other), not the image's id $ida"
	rc=$?
	[ "$(ipcs -m | sort)" = "$before" ] || { note "segments changed"; rc=1; }
	ipcrm -m $other
	other=$(sysv_make 0 $idb) || { sysv_cleanup $d; return 1; }
	[ $rc = 0 ] && refused_restart $d $pid "SysV shared memory id $idb is taken by another segment" || rc=1
	ipcrm -m $other
	[ $rc = 0 ] || { sysv_cleanup $d; return 1; }
	( sleep 0.5; touch $d/go ) &
	timeout $RESTART_TIMEOUT "$CKPT" restart $d/img > $d/rout 2>&1
	rc=$?
	cat $d/out
	sysv_cleanup $d
	[ $rc = 0 ] && grep -q '^PASS' $d/out
}

# A target in another IPC namespace: its segments are not ours to see
# or make again; the checkpoint is refused and it runs on untouched.
test_sysvshm_other_ipcns() {
	local d=$WORK/sysvns pid
	mkdir -p $d
	TP_TMPDIR=$d unshare --ipc "$PROGS/sysvshm" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	"$CKPT" checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $pid; return 1; }
	cat $d/err
	grep -q "pid $pid: area 0x[0-9a-f]*: SysV shared memory of another IPC namespace is not supported" $d/err &&
		[ "$(wc -l < $d/err)" = 1 ] || { kill -9 $pid; return 1; }
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

test_unit() {
	local u rc=0
	for u in build/test/unit/*; do
		[ -x "$u" ] || continue
		"$u" || rc=1
	done
	return $rc
}

echo "ckpt test suite: $(date -u +%FT%TZ), $(uname -r)"
want unit
for p in "$PROGS"/*; do want "state_$(basename "$p")"; done
for p in "$PROGS32"/*; do want "state32_$(basename "$p")"; done
want python_counter
want stream
want info
want checkpoint_no_kill
want checkpoint_keeps_cow
want checkpoint_no_kill32
want restart_detach
want restart_status_and_signals
want zombie_pid_wait
want stopped_process
want pidns
want pidns_tree
want pid_in_use
want refuse_unknown_fd
want refuse_socket
want refuse_outside_pipe
want refuse_lease
want refuse_deleted_with_links
want refuse_future_write
want deleted_dir_gone
want refuse_epoll_target
want refuse_epoll_gone
want refuse_epoll_later
want refuse_mode_switch
want refuse_shared_memory
want refuse_vfork
want refuse_pty_data
want pty_queued
want refuse_pty_stopped
want refuse_unix_fds
want unix_external
want unix_no_kill
want unix_path_in_way
want skip_unsupported
want tcp_peer_outside
want tcp_checkpoint_live
want tcp_netlock
want tcp_connecting
want refuse_traced
want target_dies_midway
want restart_fails_cleanly
want restart_bad_pages
want orphan_session
want shell_job
want open_file_changed
want lock_conflict
want fifo_open_elsewhere
want sysvshm_recreated
want sysvshm_conflict
want sysvshm_other_ipcns
want refuse_seccomp_usernotif
want seccomp_no_kill
want seccomp_strict
want bad_images
want demo
# CUDA processes need a GPU and nvcc: `make test-gpu` runs tests/gpu/
if [ ! -e /dev/nvidiactl ]; then
	echo "skip gpu: no NVIDIA GPU here (/dev/nvidiactl absent)"
else
	echo "skip gpu: not part of this suite; make test-gpu runs the GPU tests"
fi

[ ${#FAILS[@]} = 0 ] || echo "failed: ${FAILS[*]}"
echo "$PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
