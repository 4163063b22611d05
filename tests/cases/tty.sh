# tty.sh - bytes queued in ptys, refused or kept; --shell-job; a
# session's terminal whose master is outside the tree (a container's
# console), its new master sent to --console-socket.
t refuse_pty_data
t refuse_pty_stopped
t pty_queued
t shell_job                timeout 150
t tty_console

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
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
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
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
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
	ckpt checkpoint -o $d/img0 $pid 2> $d/err0 || { cat $d/err0; kill $pid; return 1; }
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err || { cat $d/err; kill $pid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q '^TTY_DATA .*to=master bytes=8002' $d/info &&
		grep -q '^TTY_DATA .*to=slave bytes=11' $d/info &&
		grep -q '^TTY_DATA .*to=master bytes=11' $d/info &&
		grep -q '^TTY_DATA .*to=slave bytes=31 partial=13' $d/info &&
		[ "$(grep -c '^TTY_DATA' $d/info)" = 9 ] ||
		{ grep TTY $d/info; return 1; }
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img < /dev/null > $d/restart.out 2>&1
	local rc=$?
	cat $d/out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && sanitizer_clean $d/err0 $d/err $d/restart.out
}

# --shell-job: a job of a shell on one pty, restarted as a job of a shell
# on another (tests/aux/shelljob.py says all it checks).
test_shell_job() {
	timeout -k 5 $RESTART_TIMEOUT $PYTHON tests/aux/shelljob.py "$CKPT" $WORK/shelljob
}

# A console: a python holder (as a runtime) keeps the master of a pty
# whose slave is the stdio and controlling terminal of a session leader
# (a shell printing ticks with its terminal's size).
console_start() {	# DIR: sets $pid
	local d=$1
	$PYTHON - $d/pid $d/out1 <<'PY' &
import fcntl, os, pty, struct, sys, termios
m, s = pty.openpty()
fcntl.ioctl(m, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 99, 0, 0))
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(s, fd)
    os.closerange(3, 1024)
    os.execv("/bin/sh", ["sh", "-c",
             "n=0; while :; do n=$((n+1)); echo tick $n $(stty size); sleep 0.1; done"])
os.close(s)		# its end when the session's last slave goes
open(sys.argv[1], "w").write(str(pid))
out = open(sys.argv[2], "ab", buffering=0)
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        os._exit(0)
    out.write(d)
PY
	for ((i = 0; i < 200; i++)); do grep -q "tick 2" $d/out1 2> /dev/null && break; sleep 0.05; done
	pid=$(cat $d/pid)
	[ -n "$pid" ] && grep -q "tick 2 33 99" $d/out1
}

# A console's receiver (as runc's --console-socket): SOCKET, what its
# master reads goes to OUT.
console_socket() {	# SOCKET OUT
	$PYTHON - $1 $2 <<'PY' &
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
msg, anc, _, _ = c.recvmsg(256, socket.CMSG_SPACE(4))
fd = array.array("i", anc[0][2][:4])[0]
out = open(sys.argv[2], "ab", buffering=0)
out.write(b"GOT " + msg + b"\n")
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        os._exit(0)
    out.write(d)
PY
	for ((i = 0; i < 100; i++)); do [ -S $1 ] && return 0; sleep 0.05; done
	return 1
}

# Checkpointed --kill; its restart wants a console socket (refused
# without, nothing left); with one the session has its terminal again,
# size and all, and ticks on into the new master.
test_tty_console() {
	local d=$WORK/console pid root n rc=0
	mkdir -p $d
	console_start $d || { cat $d/out1; return 1; }
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $pid; return 1; }
	ckpt info $d/img | grep -q "^TTY .*kind=orphan .*sid=$pid .*rows=33 cols=99" || { note "no TTY"; rc=1; }
	gone $pid || return 1
	ckpt restart --detach $d/img > /dev/null 2> $d/rerr && { note "restarted without a console"; rc=1; }
	grep -q "restart it with --console-socket PATH" $d/rerr || { cat $d/rerr; rc=1; }
	gone $pid || { note "left a process"; return 1; }
	console_socket $d/sock $d/out2 || return 1
	ckpt restart --detach --console-socket $d/sock $d/img > $d/rpid 2> $d/rerr < /dev/null ||
		{ cat $d/rerr; return 1; }
	root=$(head -1 $d/rpid)
	for ((i = 0; i < 100; i++)); do grep -q "tick" $d/out2 2> /dev/null && break; sleep 0.05; done
	n=$(awk '/^tick/ { print $2; exit }' $d/out2)
	grep -q "^GOT " $d/out2 && [ -n "$n" ] && [ "$n" -gt 2 ] && grep -q "tick $n 33 99" $d/out2 ||
		{ note "the console: $(head -3 $d/out2)"; rc=1; }
	[ "$(awk '{ print $6 }' /proc/$root/stat)" = $pid ] && [ "$(awk '{ print $7 }' /proc/$root/stat)" != 0 ] ||
		{ note "its session or terminal: $(cat /proc/$root/stat)"; rc=1; }
	kill -9 $root
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}
