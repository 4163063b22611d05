# ipcns.sh - a container's own ipc namespace (issue 15): its SysV
# message queues with their messages, semaphore sets, POSIX message
# queues with their messages, a SysV segment no process attaches, and
# its sysctls (made by tests/aux/ipcns.py inside it), checkpointed --kill
# from the host and restarted: the same, seen from inside the new
# namespace.  What cannot be made again is refused, naming it, and the
# container runs on.
t ipcns_container
t ipcns_container_join
t ipcns_checkpoint_leaves
t ipcns_container_shm
t refuse_ipcns_mq_fd
t refuse_ipcns_mq_notify
t refuse_ipcns_shm_outside
t refuse_ipcns_shm_rmid_forced

IPCNS_PY=$ROOT/tests/aux/ipcns.py

# A container (its own pid and ipc namespaces, the holder its init with
# a child) whose ipc namespace ipcns.py filled; what it holds, as seen
# from inside, in DIR/before.
ipcns_start() {	# DIR; sets up, init
	mkdir -p $1
	unshare --fork --pid --ipc sh -c '"$0" "$1" make && "$0" "$1" show > "$2/before" &&
		exec "$3" child "$4"' $PYTHON $IPCNS_PY $1 "$AUX/holder" $1/go > $1/out 2>&1 < /dev/null &
	up=$!
	wait_for $1/out READY || { cat $1/out; kill -9 $up; return 1; }
	init=$(pgrep -P $up)
}

test_ipcns_container() {
	local d=$WORK/ipcns up init root r rc=0
	ipcns_start $d || return 1
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	ckpt info $d/img > $d/info || return 1
	for r in IPC_NS IPC_MSQ IPC_MSG IPC_SEM IPC_MQ IPC_MQ_MSG SYSV_SHM SYSV_DATA; do
		grep -q "^$r " $d/info || { note "no $r in the image"; rc=1; }
	done
	grep -q "^IPC_MQ .*name=ckq" $d/info && grep -q "^IPC_SEM .*values=5,0,32767" $d/info ||
		{ note "ckpt info: $(grep '^IPC_' $d/info)"; rc=1; }
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	[ "$(readlink /proc/$root/ns/ipc)" != "$(readlink /proc/self/ns/ipc)" ] ||
		{ note "in restart's ipc namespace"; rc=1; }
	nsenter -t $root -i $PYTHON $IPCNS_PY show > $d/after 2>&1 || rc=1
	diff -u $d/before $d/after || rc=1
	touch $d/go
	wait_for $d/out PASS || rc=1
	gone $root || { kill -9 $root; rc=1; }
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# SysV segments in a container: one its init attaches, one it attaches
# and has marked for deletion, one no process attaches; after --kill and
# restart the init finds its attaches with their bytes, the marked one
# still marked (it goes with the init's detach), the other in the
# namespace with its bytes.
test_ipcns_container_shm() {
	local d=$WORK/ipcns-shm up init root rc=0
	mkdir -p $d
	unshare --fork --pid --ipc $PYTHON -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
go = sys.argv[1]
a = libc.shmget(0x1111, 8192, 0o1600)
b = libc.shmget(0x2222, 4096, 0o1600)
c = libc.shmget(0x3333, 4096, 0o1640)
pa, pb, pc = libc.shmat(a, None, 0), libc.shmat(b, None, 0), libc.shmat(c, None, 0)
ctypes.memmove(pa + 5000, b"attached", 8)
ctypes.memmove(pb, b"marked", 6)
ctypes.memmove(pc, b"alone", 5)
libc.shmdt(ctypes.c_void_p(pc))
assert libc.shmctl(b, 0, None) == 0                  # IPC_RMID
print("READY", os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
ok = ctypes.string_at(pa + 5000, 8) == b"attached" and ctypes.string_at(pb, 6) == b"marked"
ok = ok and libc.shmget(0x1111, 0, 0) == a and libc.shmget(0x2222, 0, 0) < 0
pc = libc.shmat(libc.shmget(0x3333, 0, 0), None, 0)
ok = ok and ctypes.string_at(pc, 5) == b"alone"
libc.shmdt(ctypes.c_void_p(pc))
libc.shmdt(ctypes.c_void_p(pb))
ok = ok and all(l.split()[1] != str(b) for l in open("/proc/sysvipc/shm").readlines()[1:])
print("PASS" if ok else "FAIL", flush=True)' $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { cat $d/out; kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	[ "$(ckpt info $d/img | grep -c '^SYSV_SHM ')" = 3 ] || { note "not 3 segments"; rc=1; }
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' || rc=1
	cat $d/out
	grep -q '^PASS' $d/out || rc=1
	gone $root || { kill -9 $root; rc=1; }
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# A checkpoint without --kill leaves the namespace as it was (the POSIX
# queue's messages, read and put back, in their order), and the
# container runs on.
test_ipcns_checkpoint_leaves() {
	local d=$WORK/ipcns-leaves up init rc=0
	ipcns_start $d || return 1
	ckpt checkpoint -o $d/img $init 2> $d/err || { cat $d/err; rc=1; }
	nsenter -t $init -i $PYTHON $IPCNS_PY show > $d/after 2>&1 || rc=1
	diff -u $d/before $d/after || rc=1
	touch $d/go
	wait $up || rc=1
	grep -q '^PASS' $d/out || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err
}

# --join-ns ipc:PATH: the container comes back in that ipc namespace, as
# it is: one queue of its own, none of the image's.
test_ipcns_container_join() {
	local d=$WORK/ipcns-join up init root other rc=0
	ipcns_start $d || return 1
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	unshare --ipc sh -c 'ipcmk -Q > /dev/null && exec sleep 60' &
	other=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink /proc/$other/ns/ipc)" != "$(readlink /proc/self/ns/ipc)" ] &&
			[ "$(readlink /proc/$other/exe)" = /usr/bin/sleep ] && break
		sleep 0.01
	done
	nsenter -t $other -i ipcs -q > $d/joined-before
	root=$(ckpt restart --detach --join-ns ipc:/proc/$other/ns/ipc $d/img 2> $d/rerr) ||
		{ cat $d/rerr; kill $other; return 1; }
	[ "$(readlink /proc/$root/ns/ipc)" = "$(readlink /proc/$other/ns/ipc)" ] ||
		{ note "not in the joined namespace"; rc=1; }
	nsenter -t $other -i ipcs -q > $d/joined-after
	diff -u $d/joined-before $d/joined-after || rc=1
	[ "$(nsenter -t $other -i ipcs -s | grep -c 0x)" = 0 ] || { note "a semaphore set made"; rc=1; }
	touch $d/go
	wait_for $d/out PASS || rc=1
	gone $root || { kill -9 $root; rc=1; }
	kill $other
	wait $other 2>/dev/null
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# A container whose init is ipcns.py's CODE (python, after `import
# ctypes, os, sys, time; libc`), which prints READY then waits for
# DIR/go and prints PASS: refused at checkpoint, in one line matching
# RE, and it runs on.  SETUP, if any, runs (in the background) once it
# is READY, with $init its host pid.
ipcns_refused() {	# NAME CODE RE [SETUP]
	local d=$WORK/ipcns-$1 up init helper=
	mkdir -p $d
	unshare --fork --pid --ipc $PYTHON -c 'import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
go = sys.argv[1]
'"$2"'
print("READY", os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
print("PASS", flush=True)' $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { cat $d/out; kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	if [ -n "${4:-}" ]; then
		eval "$4" > $d/helper 2>&1 &
		helper=$!
		wait_for $d/helper HELD || { cat $d/helper; kill -9 $up $helper; return 1; }
	fi
	ckpt checkpoint --kill -o $d/img $init 2> $d/err
	[ $? = 1 ] || { note "checkpoint did not fail"; kill -9 $up $helper; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -Eq "$3" $d/err && sanitizer_clean $d/err ||
		{ kill -9 $up $helper; return 1; }
	[ "$(awk '/TracerPid/ {print $2}' /proc/$init/status)" = 0 ] || { kill -9 $up $helper; return 1; }
	touch $d/go
	[ -n "$helper" ] && wait $helper
	wait $up && grep -q '^PASS' $d/out
}

# A POSIX queue open in a process of the tree: its descriptor would not
# be restored.
test_refuse_ipcns_mq_fd() {
	ipcns_refused mq_fd '
q = libc.mq_open(b"/fq", 0o102, 0o600, None)
assert q >= 0' \
		"^ckpt: .*pid 1: fd [0-9]+ is POSIX message queue /fq, not supported"
}

# A POSIX queue with a notification registered (by a process outside the
# container, in its ipc namespace): putting a message back after reading
# it would fire it.
test_refuse_ipcns_mq_notify() {
	ipcns_refused mq_notify '
class A(ctypes.Structure):
    _fields_ = [("l", ctypes.c_long * 8)]
a = A((ctypes.c_long * 8)(0, 4, 16, 0))
q = libc.mq_open(b"/nq", 0o102, 0o600, ctypes.byref(a))
assert q >= 0 and libc.mq_send(q, b"x", 1, 0) == 0
os.close(q)' \
		"^ckpt: .*pid 1: ipc namespace ipc:\[[0-9]+\]: POSIX message queue /nq: a process outside the container is notified of its messages \(mq_notify\), not supported" \
		'nsenter -t $init -i $PYTHON -c "
import ctypes, os, time
libc = ctypes.CDLL(None)
q = libc.mq_open(b\"/nq\", 0o2)
ev = (ctypes.c_int * 16)(0, 0, 1)     # sigev_notify = SIGEV_NONE
assert libc.mq_notify(q, ev) == 0
print(\"HELD\", flush=True)
while not os.path.exists(\"$d/go\"):
    time.sleep(0.01)"'
}

# A segment attached by a process outside the tree (in the container's
# ipc namespace, not its pid namespace): its holder would lose it.
test_refuse_ipcns_shm_outside() {
	ipcns_refused shm_outside '
assert libc.shmget(0x7777, 4096, 0o1600) >= 0' \
		"^ckpt: .*pid 1: ipc namespace ipc:\[[0-9]+\]: SysV shared memory id [0-9]+ is attached only by processes outside the tree, not supported" \
		'nsenter -t $init -i $PYTHON -c "
import ctypes, os, time
libc = ctypes.CDLL(None)
libc.shmat.restype = ctypes.c_void_p
assert libc.shmat(libc.shmget(0x7777, 0, 0), None, 0) not in (None, 2**64 - 1)
print(\"HELD\", flush=True)
while not os.path.exists(\"$d/go\"):
    time.sleep(0.01)"'
}

# kernel.shm_rmid_forced and a segment no process attaches: ckpt's own
# detach (at checkpoint, and at restart once the processes have theirs)
# would remove it.
test_refuse_ipcns_shm_rmid_forced() {
	ipcns_refused shm_rmid_forced '
open("/proc/sys/kernel/shm_rmid_forced", "w").write("1")
assert libc.shmget(0x7778, 4096, 0o1600) >= 0' \
		"^ckpt: .*pid 1: ipc namespace ipc:\[[0-9]+\]: SysV shared memory id [0-9]+ is attached by no process, and kernel.shm_rmid_forced is 1: not supported"
}
