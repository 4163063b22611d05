# anonfd.sh - pidfds, fanotify marks and namespace fds that cannot be restored are
# refused at checkpoint with one line naming pid, fd and what they are
# on, and the target runs on untouched.  (What is restored is checked by
# the state tests state_pidfd, state_fanotify and state_nsfs_fd.)
t refuse_pidfd_outside
t refuse_nsfs_outside
t refuse_fanotify_deleted

# A python3 target holding the fd fd that CODE opens, until DIR/go
# exists; sets the caller's $pid.
anonfd_holder() {	# DIR CODE
	mkdir -p "$1"
	$PYTHON -c "
import os, time
$2
print('READY', os.getpid(), fd, flush=True)
while not os.path.exists('$1/go'):
    time.sleep(0.01)
print('PASS', flush=True)
" > "$1/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$1/out" READY 20
}

anonfd_refused() {	# NAME CODE PATTERN
	local d=$WORK/$1
	anonfd_holder $d "$2" || return 1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; cat $d/err; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $pid fd [0-9]*: $3" $d/err || return 1
	sanitizer_clean $d/err || return 1
	kill -0 $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

test_refuse_pidfd_outside() {
	local other rc
	sleep 60 &
	other=$!
	anonfd_refused pidfd "fd = os.pidfd_open($other)" \
		"pidfd on pid $other, a process outside the tree"
	rc=$?
	kill $other
	wait $other 2>/dev/null
	return $rc
}

test_refuse_nsfs_outside() {
	local other rc i
	unshare --net sleep 60 &
	other=$!
	for ((i = 0; i < 500; i++)); do
		[ "$(readlink /proc/$other/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.01
	done
	anonfd_refused nsfs "fd = os.open('/proc/$other/ns/net', os.O_RDONLY)" \
		"an fd on namespace net:\[[0-9]*\], which no process of the tree is in"
	rc=$?
	kill $other
	wait $other 2>/dev/null
	return $rc
}


# a mark on an inode whose name is gone (kept by an open fd): nothing to
# mark again at restart
test_refuse_fanotify_deleted() {
	anonfd_refused fanotify "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
fd = libc.fanotify_init(0, os.O_RDONLY)
keep = open('$WORK/gone', 'w')
assert fd >= 0 and libc.fanotify_mark(fd, 1, 0x20, -100, b'$WORK/gone') == 0
os.unlink('$WORK/gone')" "fanotify inode mark with no path to it"
}
