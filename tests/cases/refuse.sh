# refuse.sh - checkpoints that must fail, and leave the target running
# exactly as before (refused_checkpoint, tests/lib.sh), and a target that
# dies while its image is written.
t refuse_unknown_fd
t refuse_vfork
t refuse_shared_memory
t refuse_socket
t refuse_future_write
t refuse_shm_open_later
t refuse_deleted_with_links
t deleted_dir_gone
t lease_holder
t refuse_outside_pipe
t refuse_epoll_target
t refuse_epoll_gone
t refuse_epoll_later
t refuse_mode_switch       needs ia32
t skip_unsupported
t refuse_traced
t refuse_deep_path
t target_dies_midway
t restart_fails_cleanly

test_refuse_unknown_fd() { refused_checkpoint iouring 'fd [0-9]*: unsupported kind of file anon_inode:\[io_uring\]'; }
test_refuse_vfork() { refused_checkpoint vfork 'pid [0-9]* does not stop: it is in vfork()' D; }
test_refuse_shared_memory() { refused_checkpoint vmsibling 'share their memory (CLONE_VM), and neither has it from its parent'; }
test_refuse_socket() { refused_checkpoint vsock 'fd [0-9]*: unsupported kind of file socket:'; }
test_refuse_future_write() { refused_checkpoint futurewrite 'a writable mapping of a memfd sealed with F_SEAL_FUTURE_WRITE'; }
test_refuse_shm_open_later() { refused_checkpoint shmlater 'open as a file or mapped privately by a process saved after it'; }
test_refuse_deleted_with_links() { refused_checkpoint linkeddel 'sub/file (deleted): its name was removed, but 1 other links to it remain, none in'; }

# A file mapped from a path deeper than PATH_MAX (300 directories of
# 250-letter names: its line in /proc/PID/smaps is 75 KB, more than the
# 64 KiB piece ckpt reads smaps in, which grows for it): refused, naming
# the area, and left running.
test_refuse_deep_path() {
	local d=$WORK/deep pid
	mkdir -p $d
	"$PYTHON" -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(300):
    os.mkdir("d" * 250, dir_fd=fd)
    nfd = os.open("d" * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open("f", os.O_RDWR | os.O_CREAT, 0o600, dir_fd=fd)
os.write(f, b"x" * 4096)
# (not the mmap module: it keeps an fd of the file open)
m = libc.mmap(None, 4096, 1, 2, f, 0)	# PROT_READ, MAP_PRIVATE
os.close(f)
os.close(fd)
print("READY", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
print("PASS" if ctypes.string_at(m, 1) == b"x" else "FAIL", flush=True)
' $d $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; cat $d/err; return 1; }
	note "$(cut -c1-150 $d/err)..."
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $pid: area 0x[0-9a-f]* maps $d/ddd" $d/err &&
		sanitizer_clean $d/err || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# A deleted file comes back in its directory: without it, restart fails
# clearly before any process exists; with it back, it works.
test_deleted_dir_gone() {
	local d=$WORK/deleted-dir pid
	start_holder deleted $d || return 1
	checkpoint_kill $d $pid || return 1
	rm -rf $d/sub
	ckpt restart $d/img 2> $d/err
	[ $? = 125 ] || { cat $d/err; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "sub/file, $d/sub, is gone" $d/err || return 1
	! kill -0 $pid 2>/dev/null || return 1
	mkdir $d/sub
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img && grep -q '^PASS' $d/out
}

# A read lease, refused before leases were restored: now the holder
# comes back with it (tests/progs/lease.c checks the rest).
test_lease_holder() {
	local d=$WORK/lease pid
	start_holder lease $d || return 1
	checkpoint_kill $d $pid || return 1
	( for ((i = 0; i < 300; i++)); do
		grep -qs "LEASE  ACTIVE    READ" /proc/$pid/fdinfo/* && break
		sleep 0.01
	  done
	  grep -s LEASE /proc/$pid/fdinfo/* > $d/leases
	  touch $d/go ) &
	ckpt restart $d/img && grep -q '^PASS' $d/out || return 1
	cat $d/leases
	grep -q "LEASE  ACTIVE    READ" $d/leases
}

# A pipe above stdio whose other end is outside the tree: refused, saying so.
test_refuse_outside_pipe() {
	local d=$WORK/outpipe pid keep
	mkdir -p $d
	# the writer is this shell, outside the tree: a pipe whose writer had
	# exited (true | holder) would be the tree's, its write end closed
	exec {keep}> >(exec "$AUX/holder" plain $d/go 3<&0 > $d/out 2>&1 < /dev/null)
	pid=$!
	wait_for $d/out READY || { exec {keep}>&-; return 1; }
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	local rc=$?
	exec {keep}>&-
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

# A 64-bit program running 32-bit code (a far jump) is refused clearly,
# and runs on untraced.
test_refuse_mode_switch() {
	local d=$WORK/farjump pid rc
	start_holder farjump $d || return 1
	sleep 0.1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
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
	ckpt checkpoint --kill --skip-unsupported -o $d/img $pid 2> $d/err || return 1
	grep -q "skipping unsupported" $d/err || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img && grep -q '^PASS' $d/out
}

# A process ptrace'd by someone else cannot be held: EPERM, clearly.
test_refuse_traced() {
	local d=$WORK/traced pid tpid
	start_holder plain $d || return 1
	"$AUX/tracer" $pid > $d/tracer.out &
	tpid=$!
	wait_for $d/tracer.out TRACING || return 1
	ckpt checkpoint -o $d/img $pid 2> $d/err
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
	ckpt_bg checkpoint -o - $pid > $d/fifo 2> $d/err &
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
	ckpt restart $d/img 2> $d/err
	[ $? = 125 ] || return 1
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q holder-copy $d/err || return 1
	! kill -0 $pid 2>/dev/null
}
