#!/usr/bin/env bash
# killpoints_tcp.sh - ckpt killed while it holds TCP connections in repair
# mode behind the network lock: the keeper puts them back.
# usage: tests/killpoints_tcp.sh CKPT KVSERVER KVCLIENT WORKDIR
#
# kvserver (tests/aux) with kvclient.py connected from outside its tree;
# a live checkpoint --tcp-established is SIGKILLed at about POINTS test
# points spread over it (CKPT_TEST_KILL_AT, test build only).  Each time
# the client's exchange must still pass and no lock rule may be left.
# Prints one line per failing case and "killpoints_tcp: N cases ok, M failed".
set -u
CKPT=$1
SERVER=$2
CLIENT=$3
W=$4
POINTS=${POINTS:-8}
PYTHON=/usr/bin/python3
OK=0
FAILED=0
mkdir -p "$W"
. "$(dirname "$0")/killlib.sh"

rules() {	# PORT: how many lock rules the server's port has
	iptables -w -S CKPT-LOCK 2>/dev/null | grep -c -- "--dport $1 -j DROP"
}

start() {	# DIR: sets pid, cpid, port
	rm -rf "$1"
	mkdir -p "$1"
	"$SERVER" "$1/go" > "$1/srv.out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$1/srv.out" '^PORT' || return 1
	port=$(awk '/^PORT/{print $2}' "$1/srv.out")
	$PYTHON "$CLIENT" $port "$1/srv.out" > "$1/cli.out" 2>&1 &
	cpid=$!
	wait_for "$1/cli.out" '^SENT'
}

finish() {	# DIR: the exchange goes on and passes
	sleep 0.3	# the client is not quite done when it says SENT
	touch "$1/go"
	timeout 60 tail --pid=$cpid -s 0.05 -f /dev/null
	{ wait $cpid; } 2>/dev/null && grep -q '^PASS' "$1/cli.out"
}

d=$W/count
start "$d" || { echo "killpoints_tcp: the server did not start"; exit 1; }
CKPT_TEST_POINTS=1 timeout 60 "$CKPT" checkpoint --tcp-established -o "$d/img" $pid 2> "$d/points"
n=$(grep -c '^testpoint ' "$d/points")
finish "$d" || { echo "FAIL: a whole live checkpoint broke the exchange"; FAILED=$((FAILED + 1)); }
kill -9 $pid 2>/dev/null
{ wait $pid; } 2>/dev/null
step=$(( n / POINTS > 0 ? n / POINTS : 1 ))
for ((k = 1; k <= n; k += step)); do
	d=$W/k$k
	why=
	start "$d" || why="did not start"
	if [ -z "$why" ]; then
		CKPT_TEST_KILL_AT=$k timeout 60 "$CKPT" checkpoint --tcp-established \
			-o "$d/img" $pid > /dev/null 2> "$d/ckpt.err" &
		{ wait $!; } 2> /dev/null
		grep -q "killed at point $k " "$d/ckpt.err" || why="ckpt not killed at point $k"
	fi
	# the keeper's undoing takes a moment
	for ((i = 0; i < 300; i++)); do
		[ "$(rules $port)" = 0 ] && break
		sleep 0.01
	done
	[ -z "$why" ] && [ "$(rules $port)" != 0 ] && why="$(rules $port) lock rules left"
	[ -z "$why" ] && ! finish "$d" && why="the exchange broke: $(tail -2 "$d/cli.out" | tr "\n" " ") server: $(grep State /proc/$pid/status) $(cat /proc/$pid/wchan) $(tail -3 "$d/srv.out" | tr "\n" " ")"
	kill -9 $pid $cpid 2>/dev/null
	{ wait $pid $cpid; } 2>/dev/null
	while [ "$(rules $port)" != 0 ]; do
		iptables -w -D CKPT-LOCK $(iptables -w -S CKPT-LOCK | grep -- "--dport $port -j DROP" |
			head -1 | sed 's/^-A CKPT-LOCK //') || break
	done
	if [ -n "$why" ]; then
		echo "FAIL point $k $(sed -n 's/.*killed at point [0-9]* \((.*)\)$/\1/p' "$d/ckpt.err"): $why"
		FAILED=$((FAILED + 1))
	else
		OK=$((OK + 1))
		rm -rf "$d"
	fi
done
echo "killpoints_tcp: $OK cases ok, $FAILED failed"
[ $FAILED = 0 ]
