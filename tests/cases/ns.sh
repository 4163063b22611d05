# ns.sh - namespaces (issue 15).  A root's own uts namespace is saved
# and made again; the others are not saved yet: a tree in them is
# refused at checkpoint, naming the process and the namespace, and runs
# on as before; checkpointed from inside its namespaces it is saved as
# any other.
t ns_uts
t refuse_ns_uts_child
t refuse_ns_ipc
t refuse_ns_pid
t ns_from_inside

# unshare(1) runs the holder in namespaces of its own: refused, named.
ns_refused() {	# NAME UNSHARE-OPTIONS TYPE
	local d=$WORK/ns-$1 pid i
	mkdir -p $d
	unshare $2 "$AUX/holder" plain $d/go > $d/out 2>&1 < /dev/null &
	wait_for $d/out READY || return 1
	# the holder, not unshare (which forks it with --pid --fork)
	pid=$(awk '/READY/ { print $2 }' $d/out)
	[ "$3" = pid ] && pid=$(pgrep -P $! | head -1)
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $pid; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "pid $pid is in its own $3 namespace ($3:\[[0-9]*\])" $d/err || { kill -9 $pid; return 1; }
	sanitizer_clean $d/err || return 1
	kill -0 $pid && [ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	touch $d/go
	for ((i = 0; i < 500; i++)); do grep -q '^PASS' $d/out && return 0; sleep 0.01; done
	return 1
}

test_refuse_ns_ipc() { ns_refused ipc "--ipc" ipc; }
test_refuse_ns_pid() { ns_refused pid "--pid --fork --mount-proc" pid; }

# The same holder checkpointed and restarted by a ckpt inside its uts
# namespace: the namespace is ckpt's own, and nothing is lost.
test_ns_from_inside() {
	local d=$WORK/ns-inside
	mkdir -p $d
	timeout -k 5 $RESTART_TIMEOUT unshare --uts bash -c '
		hostname ckpt-test-inside
		"'"$AUX"'/holder" plain '$d'/go > '$d'/out 2>&1 < /dev/null &
		pid=$!
		for ((i = 0; i < 1000; i++)); do grep -q READY '$d'/out && break; sleep 0.01; done
		"'"$CKPT"'" checkpoint --kill -o '$d'/img $pid 2> '$d'/ckpt.err || exit 1
		wait $pid
		"'"$CKPT"'" restart '$d'/img > '$d'/restart.out 2>&1 & rpid=$!
		for ((i = 0; i < 500; i++)); do kill -0 $pid 2>/dev/null && break; sleep 0.01; done
		touch '$d'/go
		wait $rpid'
	local rc=$?
	cat $d/out $d/ckpt.err $d/restart.out 2>/dev/null
	sanitizer_clean $d/restart.out $d/ckpt.err || return 1
	[ $rc = 0 ] && grep -q '^PASS' $d/out
}

# A root in a uts namespace of its own (a container's hostname), with a
# child: restart makes a new namespace with the saved names, both in it;
# restart's own hostname is untouched.
test_ns_uts() {
	local d=$WORK/ns-uts child rc=0 host
	mkdir -p $d
	host=$(hostname)
	unshare --uts sh -c 'hostname ckpt-uts-test; domainname ckpt-dom; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	checkpoint_kill $d $pid || { kill -9 $pid; return 1; }
	ckpt info $d/img | grep -q "^NS_UTS .*nodename=ckpt-uts-test" || { note "no NS_UTS in the image"; rc=1; }
	# --detach returns once the tree is built and let go: its
	# namespaces are then what they will be
	ckpt restart --detach $d/img > $d/rout 2>&1 || { cat $d/rout; return 1; }
	child=$(pgrep -P $pid | head -1)
	[ "$(nsenter -t $pid -u hostname)" = ckpt-uts-test ] || { note "hostname: $(nsenter -t $pid -u hostname)"; rc=1; }
	[ "$(nsenter -t $pid -u domainname)" = ckpt-dom ] || { note "domainname: $(nsenter -t $pid -u domainname)"; rc=1; }
	[ "$(readlink /proc/$pid/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] || { note "in restart's uts namespace"; rc=1; }
	[ -n "$child" ] && [ "$(readlink /proc/$child/ns/uts)" = "$(readlink /proc/$pid/ns/uts)" ] ||
		{ note "the child is not in the root's namespace"; rc=1; }
	[ "$(hostname)" = "$host" ] || { note "restart's hostname changed"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	cat $d/out $d/rout
	[ $rc = 0 ] && sanitizer_clean $d/rout
}

# A child in another uts namespace than its root's: not saved, refused.
test_refuse_ns_uts_child() {
	local d=$WORK/ns-utschild child
	mkdir -p $d
	$PYTHON - $d/go > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
go = sys.argv[1]
k = os.fork()
if k == 0:
    libc.unshare(0x04000000)     # CLONE_NEWUTS
    print("CHILD", os.getpid(), flush=True)
    while not os.path.exists(go):
        time.sleep(0.01)
    os._exit(0)
print("READY", os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
os.waitpid(k, 0)
print("PASS")
PY
	pid=$!
	wait_for $d/out CHILD || return 1
	wait_for $d/out READY || return 1
	child=$(awk '/CHILD/ { print $2 }' $d/out)
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $pid; return 1; }
	cat $d/err
	grep -q "pid $child is in its own uts namespace" $d/err || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}
