# tcp.sh - TCP connections whose peer is outside the tree, and the
# network lock (iptables chain CKPT-LOCK, global: one test at a time).
t tcp_peer_outside         needs iptables tcp_repair  group iptables
t tcp_netlock              needs iptables tcp_repair  group iptables
t tcp_checkpoint_live      needs iptables tcp_repair  group iptables
t tcp_connecting           needs iptables tcp_repair  group iptables
t tcp_closing_states       needs iptables tcp_repair  group iptables
t tcp_close_in_flight      needs iptables tcp_repair  group iptables
t tcp_accept_queue         needs iptables tcp_repair  group iptables

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
		ckpt checkpoint -o $d/img0 $pid 2> $d/err0
		grep -q 'TCP connection to 127.0.0.1:.*--tcp-established' $d/err0 ||
			{ cat $d/err0; kill -9 $pid; return 1; }
		# one failing late, once its connections are in repair mode
		if ckpt checkpoint --tcp-established -o /dev/full $pid 2> $d/err1; then
			echo "a checkpoint to /dev/full succeeded"; kill -9 $pid; return 1
		fi
		lock_rules $port "after a failed checkpoint" || { kill -9 $pid; return 1; }
		ckpt checkpoint --tcp-established -o $d/img $pid 2> $d/err ||
			{ cat $d/err; kill -9 $pid; return 1; }
		lock_rules $port "after a checkpoint without --kill" ||
			{ kill -9 $pid; return 1; }
	else
		ckpt checkpoint --kill --tcp-established -o $d/img $pid 2> $d/err ||
			{ cat $d/err; kill -9 $pid; return 1; }
		wait $pid 2>/dev/null
		gone $pid || return 1
		[ $1 = kill ] || sleep 3	# probes come meanwhile
		[ "$(lock_rules $port)" = 4 ] ||
			{ echo "not 4 lock rules while the server is gone"; lock_rules $port; return 1; }
		ckpt_bg restart $d/img > $d/restart.out 2>&1 &
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
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err ||
		{ cat $d/err; kill -9 $pid $lpid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	ckpt info $d/img | grep -c '^FILE .*state=SYN_SENT' | grep -qx 2 ||
		{ echo "not two SYN_SENT sockets in the image"; kill $lpid; return 1; }
	ckpt_bg restart $d/img > $d/restart.out 2>&1 &
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
# Connections in CLOSING, LAST_ACK and CLOSE_WAIT whose peer is outside
# the tree, and a pair in CLOSE (tests/aux/tcp_states.c): each comes back
# in its state, the peer's FIN read after its bytes, ours sent after our
# bytes, which the peer takes (it drops segments that do not ACK its
# FIN); the CLOSE pair reads EOF and writes EPIPE.  No lock rule is left.
test_tcp_closing_states() {
	local d=$WORK/closing_states pid rpid rc port
	mkdir -p $d
	"$AUX/tcp_states" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out '^READY' || { cat $d/out; kill -9 $pid; return 1; }
	ckpt checkpoint --kill --tcp-established -o $d/img $pid 2> $d/err ||
		{ cat $d/err; kill -9 $pid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	port=$(ckpt info $d/img | grep -o 'state=LISTEN local=[^ ]*' | sed 's/.*://')
	for st in CLOSING LAST_ACK CLOSE_WAIT; do
		ckpt info $d/img | grep -q "state=$st " || { echo "no $st in the image"; return 1; }
	done
	ckpt_bg restart $d/img > $d/restart.out 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		kill -0 $pid 2>/dev/null && break
		sleep 0.01
	done
	touch $d/go
	wait $rpid
	rc=$?
	cat $d/out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out &&
		lock_rules "$port" "after the restart" && sanitizer_clean $d/err $d/restart.out
}
# A listener with a connection waiting to be accepted, its client in the
# tree, and an accepted connection (tests/aux/tcp_pending.c).
# MODE queued: checkpoint --kill --tcp-established: the waiting one is in
# the accept queue again after restart (its client connected again).
# MODE closed: a client from outside the tree waits too, so the
# checkpoint is refused without --skip-in-flight (the target runs on);
# checkpoint --tcp-close saves the connections closed, without repair
# mode or lock; restart --tcp-close of an image made with
# --tcp-established --skip-in-flight brings them back closed, the
# waiting ones gone.  Either way the listener accepts a new client.
pending_test() {	# MODE
	local d=$WORK/pending_$1 pid rpid rc port opid=
	mkdir -p $d
	"$AUX/tcp_pending" $d/go $1 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out '^READY' || { cat $d/out; kill -9 $pid; return 1; }
	port=$(awk '/^READY/ { print $3 }' $d/out)
	if [ $1 = closed ]; then
		$PYTHON -c 'import socket, sys, time; s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); time.sleep(30)' \
			$port < /dev/null > /dev/null 2>&1 &
		opid=$!
		sleep 0.3
		step "refused without --skip-in-flight"
		if ckpt checkpoint --tcp-established -o $d/img0 $pid 2> $d/err0; then
			echo "a connection waiting to be accepted was not refused"; kill -9 $pid $opid; return 1
		fi
		grep -q '2 connections wait to be accepted on port .*1 of them .*--skip-in-flight' $d/err0 &&
			kill -0 $pid || { cat $d/err0; kill -9 $pid $opid; return 1; }
		step "checkpoint --tcp-close"
		ckpt checkpoint --tcp-close --skip-in-flight -o $d/img1 $pid 2> $d/err1 ||
			{ cat $d/err1; kill -9 $pid $opid; return 1; }
		[ "$(ckpt info $d/img1 | grep -c 'kind=inet .*state=CLOSE ')" = 3 ] &&
			[ "$(lock_rules $port)" = 0 ] && grep -q 'dropped (--skip-in-flight)' $d/err1 ||
			{ cat $d/err1; ckpt info $d/img1; kill -9 $pid $opid; return 1; }
		kill $opid
		wait $opid 2>/dev/null
	fi
	step "checkpoint --kill"
	ckpt checkpoint --kill --tcp-established $([ $1 = closed ] && echo --skip-in-flight) \
		-o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $pid; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	ckpt_bg restart $([ $1 = closed ] && echo --tcp-close) $d/img > $d/restart.out 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		kill -0 $pid 2>/dev/null && break
		sleep 0.01
	done
	touch $d/go
	wait $rpid
	rc=$?
	cat $d/out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out &&
		lock_rules "$port" "after the restart" &&
		sanitizer_clean $d/err $d/restart.out $(ls $d/err0 $d/err1 2>/dev/null)
}
test_tcp_accept_queue() { pending_test queued; }
test_tcp_close_in_flight() { pending_test closed; }
