# inet.sh - internet sockets of every kind with their options.
t inet_opts_netns

# tests/progs/inet_opts (also run as state_inet_opts) in a network
# namespace of its own (unshare --net), where root may make ping sockets
# (net.ipv4.ping_group_range is the namespace's) and nothing else sends
# to its raw sockets: checkpointed, killed and restarted there, and there
# it must have its ping sockets (INET_NEED_PING).
test_inet_opts_netns() {
	local d=$WORK/inetns rc
	mkdir -p $d
	chmod 755 $d
	step "inet_opts checkpointed and restarted in a network namespace"
	timeout -k 5 $RESTART_TIMEOUT unshare --net bash -c '
		ip link set lo up || exit 1
		echo "0 0" > /proc/sys/net/ipv4/ping_group_range || exit 1
		INET_NEED_PING=1 '"$PROGS"'/inet_opts '$d'/go > '$d'/out 2>&1 < /dev/null &
		pid=$!
		for ((i = 0; i < 1000; i++)); do grep -q READY '$d'/out && break; sleep 0.01; done
		"'"$CKPT"'" checkpoint --kill -o '$d'/img $pid 2> '$d'/ckpt.err || exit 1
		wait $pid
		"'"$CKPT"'" restart '$d'/img > '$d'/restart.out 2>&1 & rpid=$!
		for ((i = 0; i < 500; i++)); do kill -0 $pid 2>/dev/null && break; sleep 0.01; done
		touch '$d'/go
		wait $rpid'
	rc=$?
	cat $d/out $d/ckpt.err $d/restart.out 2>/dev/null
	sanitizer_clean $d/restart.out $d/ckpt.err || return 1
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out &&
		grep -q 'proto=ping' <(ckpt info $d/img)
}
