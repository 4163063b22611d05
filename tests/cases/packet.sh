# packet.sh - packet and netlink sockets (their state: the state tests
# packet_sock and netlink_sock): what ckpt refuses to lose, leaving the
# target as it was (tests/aux/sockhold.c), and a restart refused when a
# netlink socket's portid is taken meanwhile.
t refuse_netlink_queued
t refuse_packet_tx_pending
t refuse_packet_ring_part
t netlink_portid_taken

test_refuse_netlink_queued() {
	HOLDER_BIN=$AUX/sockhold refused_checkpoint nlqueued 'fd [0-9]*: netlink socket has messages waiting to be read'
}
test_refuse_packet_tx_pending() {
	HOLDER_BIN=$AUX/sockhold refused_checkpoint txpending 'fd [0-9]*: packet socket has 1 frames in its TX ring waiting to be sent'
}
test_refuse_packet_ring_part() {
	HOLDER_BIN=$AUX/sockhold refused_checkpoint ringpart 'area 0x[0-9a-f]* maps part of the rings of packet socket fd [0-9]*'
}

# Another socket took the portid: restart says so and leaves nothing;
# once it is free again the same image restarts.
test_netlink_portid_taken() {
	local d=$WORK/portid pid port hpid rpid
	HOLDER_BIN=$AUX/sockhold start_holder nlbound $d || return 1
	port=$((pid + 0x30000))
	checkpoint_kill $d $pid || return 1
	"$PYTHON" -c "
import socket, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
s.bind(($port, 0))
print('bound', flush=True)
time.sleep(60)" > $d/py.out &
	hpid=$!
	wait_for $d/py.out bound || return 1
	refused_restart $d $pid "netlink socket .*: its portid $port is taken by another socket" || return 1
	kill $hpid
	wait $hpid 2>/dev/null
	ckpt_bg restart $d/img > $d/restart.out 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		kill -0 $pid 2>/dev/null && break
		sleep 0.01
	done
	touch $d/go
	wait $rpid || { cat $d/restart.out; return 1; }
	grep -q '^PASS' $d/out && sanitizer_clean $d/restart.out
}
