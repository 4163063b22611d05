# ns.sh - namespaces are not saved yet (issue 15): a tree in namespaces
# other than ckpt's is refused at checkpoint, naming the process and the
# namespace, and runs on as before; checkpointed from inside its
# namespaces it is saved as any other.
t refuse_ns_uts
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

test_refuse_ns_uts() { ns_refused uts "--uts" uts; }
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
