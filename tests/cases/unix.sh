# unix.sh - unix sockets: a listener only in flight and a file in flight
# of a kind ckpt cannot save refused, peers
# outside the tree, a checkpoint that consumes nothing (fds in flight
# too), a file in the way of a socket.
t refuse_unix_fds
t refuse_unix_fds_kind needs userfaultfd
t unix_external
t unix_no_kill
t unix_path_in_way

# A listening unix socket in flight (SCM_RIGHTS) that no fd of the tree
# holds is refused, naming pid, fd and the socket: the target runs on
# untraced, its message and fd still in flight; the image says why.
test_refuse_unix_fds() {
	local d=$WORK/unixfds pid rc
	mkdir -p $d
	$PYTHON - $d > $d/out 2>&1 < /dev/null <<'PY' &
import os, socket, sys, time
d = sys.argv[1]
a, b = socket.socketpair()
name = b"\0ckpt-test-scm-listen-%d" % os.getpid()
x = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
x.bind(name)
x.listen(1)
socket.send_fds(a, [b"with-fd"], [x.fileno()])
x.close()
print("READY", os.getpid(), flush=True)
while not os.path.exists(d + "/go"):
    time.sleep(0.02)
msg, fds, flags, addr = socket.recv_fds(b, 100, 4, socket.MSG_DONTWAIT)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(name)
ok = msg == b"with-fd" and len(fds) == 1
print("PASS" if ok else "FAIL", flush=True)
PY
	pid=$!
	wait_for $d/out READY || return 1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] || return 1
	grep -q "pid $pid fd [0-9]*: a listening unix socket (socket:\[[0-9]*\]) in flight on this unix socket (SCM_RIGHTS), held by no fd of the tree: not supported" $d/err || return 1
	sanitizer_clean $d/err && kill -0 $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	ckpt restart $d/img 2> $d/err2
	[ $? = 125 ] && grep -q "failed checkpoint" $d/err2 || { cat $d/err2; return 1; }
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# A file in flight of a kind ckpt cannot save (a userfaultfd) is refused,
# even with --skip-unsupported (the reader counts on its fds), naming the
# socket's pid and fd and the file; nothing in flight is lost.
test_refuse_unix_fds_kind() {
	local d=$WORK/unixfdskind pid rc
	mkdir -p $d
	$PYTHON - $d > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, socket, sys, time
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
ring = libc.syscall(323, os.O_CLOEXEC | os.O_NONBLOCK)	# userfaultfd
a, b = socket.socketpair()
socket.send_fds(a, [b"ring"], [ring])
os.close(ring)
print("READY", os.getpid(), flush=True)
while not os.path.exists(d + "/go"):
    time.sleep(0.02)
msg, fds, flags, addr = socket.recv_fds(b, 100, 4, socket.MSG_DONTWAIT)
ok = msg == b"ring" and len(fds) == 1 and os.readlink("/proc/self/fd/%d" % fds[0]) == "anon_inode:[userfaultfd]"
print("PASS" if ok else "FAIL", flush=True)
PY
	pid=$!
	wait_for $d/out READY || return 1
	ckpt checkpoint --kill --skip-unsupported -o $d/img $pid 2> $d/err
	rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] || return 1
	grep -q "pid $pid fd [0-9]*: a file in flight on this unix socket (SCM_RIGHTS) is of an unsupported kind: anon_inode:\[userfaultfd\]" $d/err || return 1
	sanitizer_clean $d/err && kill -0 $pid || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# A unix socket connected to a process outside the tree is refused, naming
# pid, fd and peer, unless --external-unix: then it comes back with its
# peer gone and the data that was queued for it, or, a datagram socket
# connected to a path (a syslog client's), connected to it again.  Stdio
# so connected is the caller's (inherited) either way.
unix_external() {	# DIR: python holds the other ends until DIR/done
	local d=$1 pid rc rpid
	wait_for $d/out READY || return 1
	pid=$(head -1 $d/py.out)
	ckpt checkpoint -o $d/img $pid 2> $d/err
	rc=$?
	cat $d/err
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] || return 1
	grep -Eq "pid $pid fd (3: unix dgram socket connected to socket:\\[[0-9]+\\] \\($d/log.sock\\)|9: unix stream socket connected to socket:\\[[0-9]+\\] \\(unnamed\\)) outside the tree" $d/err || return 1
	grep -q '^State:.*[SR]' /proc/$pid/status || return 1
	ckpt checkpoint --kill --external-unix -o $d/img $pid 2> $d/err || { cat $d/err; return 1; }
	gone $pid || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q "^UNIX_SK .*state=peer-gone.*bytes=12" $d/info || return 1
	grep -q "^FILE .*kind=inherit.*path=socket:" $d/info || return 1
	grep -q "^UNIX_SK .*type=dgram state=remote .*name=$d/log.sock" $d/info || return 1
	ckpt_bg restart $d/img < /dev/null > $d/restart.out 2>&1 &
	rpid=$!
	# While restart builds the process (it is traced), its fd 9 may be
	# one of ckpt's own, a socket too: wait until it is let go, and only
	# then look, and let the program go.
	for ((i = 0; i < 500; i++)); do
		[ "$(awk '/^TracerPid/ { print $2 }' /proc/$pid/status 2>/dev/null)" = 0 ] &&
			readlink /proc/$pid/fd/9 2>/dev/null | grep -q '^socket:' && break
		sleep 0.01
	done
	readlink /proc/$pid/fd/9 | grep -q '^socket:' || { echo "fd 9 is not a socket"; touch $d/go; return 1; }
	touch $d/go
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
	for p in unix_stream unix_dgram unix_listen unix_scm; do
		d=$WORK/nokill-$p
		mkdir -p $d
		TP_TMPDIR=$d "$PROGS/$p" $d/go > $d/out 2>&1 < /dev/null &
		pid=$!
		wait_for $d/out READY || return 1
		sleep 0.3
		ckpt checkpoint -o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $pid; return 1; }
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
	ckpt restart $d/img > $d/restart.out 2>&1
	[ $? = 125 ] || { cat $d/restart.out; return 1; }
	cat $d/restart.out
	grep -q "unix socket $d/listen.sock: in the way, not a socket" $d/restart.out || return 1
	! kill -0 $pid 2>/dev/null && [ "$(cat $d/listen.sock)" = data ]
}
