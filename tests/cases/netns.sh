# netns.sh - the content of a container's own network namespace (the
# netns kind): devices, addresses, routes, sysctls, iptables.  The
# netns_container* tests checkpoint a container (tests/cases/ns.sh) and
# restart it; the other netns_* tests drive the kind's save and make
# directly (tests/unit/netns_test: a namespace saved to a file, made
# again in a fresh one).  Both compare what `ip`, sysctl and
# iptables-save see before and after.
t netns_container          needs iptables
t netns_container_veth_outside
t netns_container_listener
t netns_container_join
t netns_container_refuse_tun
t netns_container_no_iptables_restore needs iptables
t netns_roundtrip          needs iptables
t netns_nft                needs nft
t netns_veth_outside
t netns_ifindex_taken
t netns_refuse_tun
t netns_refuse_macvlan_outside
t netns_refuse_unsaved
t netns_refuse_no_iptables_save needs iptables

NETNS_DRV=$ROOT/build/test/unit/netns_test

# What the namespace of PID looks like, sorted (the kernel lists some
# routes in the order they were made) and without iptables' counters.
netns_snapshot() {	# PID
	nsenter -t $1 -n sh -c '
		ip -o link | sed -e "s/ qdisc [^ ]*//" -e "s/ state [A-Z]*//"
		ip -d -o link show type bridge | grep -oE " (forward_delay|hello_time|max_age|ageing_time|stp_state|priority|mcast_snooping|mcast_querier|group_fwd_mask|nf_call_iptables) [0-9a-fx]+"
		for p in $(ip -o link show type bridge_slave | cut -d: -f2 | cut -d@ -f1); do
			ip -d -o link show $p | grep -oE " (priority|cost|hairpin|guard|root_block|fastleave|learning|flood|proxy_arp|mcast_router|mcast_fast_leave|mcast_flood|bcast_flood|mcast_to_unicast|neigh_suppress|isolated) [0-9a-z]+" | sed "s/^/$p/"
		done
		ip -o addr
		ip route show table all
		ip -6 route show table all
		sysctl -a 2>/dev/null | grep -E "^net\.(ipv4|ipv6|core|unix)\." | grep -v stable_secret
		iptables-save 2>/dev/null | grep -v "^#"
		ip6tables-save 2>/dev/null | grep -v "^#"' |
		sed -e 's/\[[0-9]*:[0-9]*\]/[N:N]/' -e 's/expires [0-9]*sec/expires/' \
		    -e 's/_lft [0-9]*sec/_lft N/g' | sort
}

# The snapshot of PID's namespace once it has settled: a device's
# carrier (IFF_RUNNING) is said by the kernel's link watch, a second or
# more later.  Into FILE once two in a row agree.
netns_settled() {	# PID FILE
	local i
	netns_snapshot $1 > $2.prev
	for ((i = 0; i < 20; i++)); do
		sleep 0.5
		netns_snapshot $1 > $2
		cmp -s $2 $2.prev && return 0
		mv $2 $2.prev
	done
}

# PID's namespace is as WANT says, within 10 s (its snapshot in FILE).
netns_same() {	# PID WANT FILE
	local i
	for ((i = 0; i < 20; i++)); do
		netns_snapshot $1 > $3
		cmp -s $2 $3 && return 0
		sleep 0.5
	done
	diff $2 $3
	return 1
}

# A namespace to fill: a process of its own that sleeps; $nspid.
netns_new() {
	unshare -n sleep 600 &
	nspid=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink /proc/$nspid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && return 0
		sleep 0.01
	done
	return 1
}

# Devices, addresses, routes, sysctls and rules of every kind the netns
# kind saves, as a script for sh -e.  (br0's STP keeps its carrier off for
# twice its forward delay, 40 s: in both namespaces while they are
# compared.)
netns_fill_script() {
	cat <<'EOF'
# no duplicate address detection: addresses are not tentative for a
# while, in either namespace (and the sysctl goes to the devices made)
sysctl -qw net.ipv6.conf.default.accept_dad=0
ip link set lo up
ip link add v0 type veth peer name v1
ip link set v0 address 02:00:00:00:00:10 mtu 1400
ip link add br0 type bridge stp_state 1 forward_delay 2000 ageing_time 1000 priority 100 mcast_snooping 0 group_fwd_mask 0x4000
ip link set v1 master br0
ip link set v1 type bridge_slave cost 7 priority 5 learning off hairpin on mcast_router 2 isolated on
ip link add v2 type veth peer name v3
ip link add mv0 link v2 type macvlan mode bridge
ip link set v3 promisc on
for d in v0 v1 br0 v2 mv0; do ip link set $d up; done
ip addr add 10.1.0.1/24 dev v0
ip addr add 10.1.0.9/24 dev v0
ip addr add 10.2.0.1/16 brd + dev br0 label br0:x
ip addr add 192.168.5.5/32 peer 192.168.5.6 dev v2
ip addr add 10.7.0.2/24 dev mv0
ip -6 addr add 2001:db8::1/64 dev v0 nodad
ip -6 addr add 2001:db8:5::1/64 dev v0 nodad valid_lft 5000 preferred_lft 4000
ip route add default via 10.1.0.254
ip route add 172.16.0.0/12 via 10.2.0.254 metric 50 mtu 1300
ip route add blackhole 10.99.0.0/16
ip route add 10.50.0.0/16 dev v2 table 100
ip -6 route add 2001:db8:1::/48 via 2001:db8::ff
sysctl -qw net.ipv4.ip_forward=1
# after the namespace-wide value, which spread to every device
sysctl -qw net.ipv4.conf.v2.forwarding=0
sysctl -qw net.ipv6.conf.all.forwarding=1
sysctl -qw net.ipv6.conf.v2.forwarding=0
sysctl -qw net.ipv4.conf.v0.rp_filter=2
sysctl -qw net.ipv4.conf.default.arp_announce=1
sysctl -qw net.ipv6.conf.v0.hop_limit=33
sysctl -qw net.ipv4.ip_local_port_range="20000 30000"
sysctl -qw net.core.somaxconn=77
sysctl -qw net.unix.max_dgram_qlen=33
iptables -A INPUT -p tcp --dport 22 -j DROP
iptables -t nat -A POSTROUTING -o v0 -j MASQUERADE
ip6tables -A OUTPUT -p udp --dport 53 -j ACCEPT
EOF
}
netns_fill() {	# PID
	netns_fill_script > $WORK/fill.sh
	nsenter -t $1 -n sh -ex $WORK/fill.sh
}

# Saved in one namespace, made again in a fresh one: the same, ifindexes
# and all (lifetimes aside: they count down).
test_netns_roundtrip() {
	local a b rc=0
	netns_new || return 1; a=$nspid
	netns_new || return 1; b=$nspid
	netns_fill $a > $WORK/fill.out 2>&1 || { cat $WORK/fill.out; return 1; }
	$NETNS_DRV save $WORK/img /proc/$a/ns/net || rc=1
	$NETNS_DRV show $WORK/img > $WORK/info 2>&1
	grep -q '^NET_LINK .*name=mv0 .*kind=macvlan' $WORK/info &&
		grep -q '^NET_ADDR .*local=10.2.0.1 .*label=br0:x' $WORK/info &&
		grep -q '^NET_ROUTE .*dst=172.16.0.0' $WORK/info &&
		grep -q '^NET_BRIDGE .*forward_delay=2000 .*stp_state=1 priority=100' $WORK/info &&
		grep -q '^NET_BRPORT .*cost=7 priority=5 .*hairpin=1 .*learning=0 .*isolated=1 .*mcast_router=2' $WORK/info &&
		grep -q '^NET_SYSCTL .*path=ipv4/ip_forward value=1' $WORK/info &&
		grep -q '^NET_IPTABLES .*family=6' $WORK/info || { note "ckpt info:"; cat $WORK/info; rc=1; }
	$NETNS_DRV restore $WORK/img /proc/$b/ns/net 2> $WORK/err || { cat $WORK/err; rc=1; }
	netns_settled $a $WORK/a
	netns_same $b $WORK/a $WORK/b || rc=1
	kill $a $b
	grep -q "2001:db8:5::1/64 .*valid_lft N" $WORK/b && grep -q "^3: v0@v1" $WORK/b &&
		grep -q "inet 10.2.0.1/16 brd 10.2.255.255 scope global br0:x" $WORK/b || { note "not in b"; rc=1; }
	[ $rc = 0 ] && sanitizer_clean $WORK/err
}

# PID's namespace's nftables tables of nft's own, one by one (iptables'
# are iptables-save's; the order of tables made by each is not kept).
nft_tables() {	# PID
	nsenter -t $1 -n nft list tables | sort | while read -r _ fam name; do
		case $fam:$name in ip:filter|ip6:filter|ip:nat|ip:mangle|ip:raw) continue ;; esac
		nsenter -t $1 -n nft list table $fam $name
	done
}

# nftables tables of nft's own (sets, named counters with their counts,
# base chains of several families), beside an iptables rule: saved in
# one namespace, made again in a fresh one, the same ruleset.
test_netns_nft() {
	local a b rc=0
	netns_new || return 1; a=$nspid
	netns_new || return 1; b=$nspid
	cat > $WORK/rules.nft <<'EOF'
table inet ckpt_fw {
	set blocked {
		type ipv4_addr
		elements = { 10.1.1.1, 10.2.2.2 }
	}
	counter hits {
		packets 5 bytes 300
	}
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr @blocked drop
		tcp dport 8080 counter name "hits" accept
	}
}
table netdev ckpt_ingress {
	chain early {
		type filter hook ingress device "lo" priority 0; policy accept;
		udp dport 9999 drop
	}
}
EOF
	nsenter -t $a -n nft -f $WORK/rules.nft || { kill $a $b; return 1; }
	command -v iptables > /dev/null && nsenter -t $a -n iptables -A INPUT -p udp --dport 53 -j ACCEPT
	nft_tables $a > $WORK/a
	$NETNS_DRV save $WORK/img /proc/$a/ns/net || rc=1
	$NETNS_DRV show $WORK/img | grep -q '^NET_IPTABLES .*family=1' || { note "no nft record"; rc=1; }
	$NETNS_DRV restore $WORK/img /proc/$b/ns/net 2> $WORK/err || { cat $WORK/err; rc=1; }
	nft_tables $b > $WORK/b
	diff $WORK/a $WORK/b || rc=1
	grep -q "packets 5 bytes 300" $WORK/b || { note "the counter's counts"; rc=1; }
	! command -v iptables > /dev/null || nsenter -t $b -n iptables -S INPUT | grep -q "udp --dport 53 -j ACCEPT" ||
		{ note "the iptables rule"; rc=1; }
	kill $a $b
	[ $rc = 0 ] && sanitizer_clean $WORK/err
}

# A veth whose peer is outside (in the namespace the driver runs in, as
# in restart's caller's): made again with that end there, under its
# name and address, down.
test_netns_veth_outside() {
	local a b o rc=0 mac
	netns_new || return 1; o=$nspid
	netns_new || return 1; a=$nspid
	netns_new || return 1; b=$nspid
	nsenter -t $o -n ip link add h0 address 02:00:00:00:00:aa type veth peer name c0 netns /proc/$a/ns/net || return 1
	nsenter -t $a -n sh -c 'ip link set c0 up; ip addr add 10.3.0.2/24 dev c0'
	nsenter -t $o -n $NETNS_DRV save $WORK/img /proc/$a/ns/net || rc=1
	$NETNS_DRV show $WORK/img | grep '^NET_LINK .*name=c0 .*peer_outside=h0 peer_address=02:00:00:00:00:aa' || rc=1
	kill $a
	for ((i = 0; i < 300; i++)); do nsenter -t $o -n ip link show h0 > /dev/null 2>&1 || break; sleep 0.01; done
	nsenter -t $o -n $NETNS_DRV restore $WORK/img /proc/$b/ns/net 2> $WORK/err || { cat $WORK/err; rc=1; }
	nsenter -t $o -n ip -o link show h0 | grep -q "h0@.*link/ether 02:00:00:00:00:aa" || { note "no h0 outside"; rc=1; }
	nsenter -t $b -n ip -o addr show c0 | grep -q "10.3.0.2/24" || { note "no c0 inside"; rc=1; }
	kill $o $b
	[ $rc = 0 ] && sanitizer_clean $WORK/err
}

netns_refused() {	# SETUP PATTERN
	local a
	netns_new || return 1; a=$nspid
	nsenter -t $a -n sh -c "$1" || { kill $a; return 1; }
	$NETNS_DRV save $WORK/img /proc/$a/ns/net 2> $WORK/err
	local rc=$?
	kill $a
	cat $WORK/err
	[ $rc = 1 ] && [ "$(wc -l < $WORK/err)" = 1 ] && grep -q "$2" $WORK/err
}

# A device of a kind ckpt cannot make: named with its kind.
test_netns_refuse_tun() {
	netns_refused "ip tuntap add tun7 mode tun" \
		"net namespace net:\[[0-9]*\]: device tun7 of kind tun is not supported"
}

# A macvlan on a device of another namespace.
test_netns_refuse_macvlan_outside() {
	local o
	netns_new || return 1; o=$nspid
	nsenter -t $o -n ip link add low0 type veth peer name low1 || { kill $o; return 1; }
	netns_refused "nsenter -t $o -n ip link add mvx link low0 type macvlan && nsenter -t $o -n ip link set mvx netns /proc/\$\$/ns/net" \
		"device mvx is a macvlan whose lower device is in another namespace"
	local rc=$?
	kill $o
	return $rc
}

# What a namespace holds that ckpt does not save: each refused, named.
test_netns_refuse_unsaved() {
	local rc=0 c
	local -a cases=(
		"ip link add v0 type veth peer name v1; ip link set v0 alias x|device v0 has an alias"
		"ip link add v0 type veth peer name v1; ip link property add dev v0 altname vv0|device v0 has an alias, an alternative name"
		"ip link add v0 type veth peer name v1; ip link set v0 group 5|device v0 has an alias, an alternative name or a group"
		"ip link add v0 type veth peer name v1; ip neigh add 10.0.0.5 lladdr 02:00:00:00:00:01 dev v0 nud permanent|a permanent neighbour entry on v0"
		"ip rule add from 10.0.0.0/8 table 100|an IPv4 policy routing rule (priority 32765, table 100)"
		"ip -6 rule del table main|an IPv6 default policy rule removed"
		"ip link add v0 type veth peer name v1; ip link set v0 up; ip addr add 10.9.0.1/24 dev v0; ip route add 10.50.0.0/16 nexthop via 10.9.0.2 nexthop via 10.9.0.3|a route (IPv4, table 254, /16) has several next hops"
	)
	command -v tc > /dev/null && cases+=(
		"ip link add v0 type veth peer name v1; tc qdisc add dev v0 root tbf rate 1mbit burst 32kbit latency 400ms|a queueing discipline (tbf) on v0"
		"ip link add v0 type veth peer name v1; tc qdisc add dev v0 ingress|a queueing discipline (ingress) on v0")
	command -v nft > /dev/null && cases+=(
		"iptables -A INPUT -p udp -j ACCEPT && nft add rule ip filter INPUT ip saddr '{ 1.2.3.4, 5.6.7.8 }' drop|nftables rules that iptables-save or nft would change (table ip filter, chain INPUT)")
	for c in "${cases[@]}"; do
		note "${c%%|*}"
		netns_refused "${c%%|*}" "${c#*|}.*which ckpt does not save" || rc=1
	done
	return $rc
}

# A container (its own pid, uts and net namespaces) whose init set up
# the namespace as netns_fill does: checkpointed --kill, restarted
# --detach, its namespace is as it was; the holder PASSes.
test_netns_container() {
	local d=$WORK/netns-ct up init root rc=0
	mkdir -p $d
	netns_fill_script > $d/fill.sh
	unshare --fork --pid --uts --net sh -c 'sh -e "$2" > "$2.out" 2>&1 || exit 1; exec "$0" child "$1"' \
		"$AUX/holder" $d/go $d/fill.sh > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY 20 || { cat $d/fill.sh.out; kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	netns_settled $init $d/before
	step "checkpoint"
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q "^NS .*own=pid,net,uts " $d/info && grep -q "^NET_LINK .*name=mv0 .*kind=macvlan" $d/info &&
		grep -q "^NET_BRIDGE " $d/info && grep -q "^NET_IPTABLES .*family=6" $d/info ||
		{ note "no net namespace in the image"; cat $d/info; return 1; }
	step "restart"
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	netns_same $root $d/before $d/after || rc=1
	[ "$(readlink /proc/$root/ns/net)" != "$(readlink /proc/self/ns/net)" ] || { note "in our net namespace"; rc=1; }
	grep -q "10.2.0.1/16 brd 10.2.255.255 scope global br0:x" $d/after &&
		grep -q "^net.ipv4.ip_forward = 1" $d/after && grep -q "^-A INPUT -p tcp -m tcp --dport 22 -j DROP" $d/after ||
		{ note "not in the restarted namespace"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	cat $d/out
	netns_forged $d/img || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# The image of netns_container forged, every checksum valid: `ckpt info`
# and restart refuse it, saying why (tests/bad_images.sh forges the
# records one by one into an image that is no container's).
netns_forged() {	# IMG
	forged_refused $1 <<'EOF2'
NS without its net|the root's net namespace is not its own|edit $img $f -r NS --set-u32 0=0x11
NET_LINK kind 9|bad NET_LINK|edit $img $f -r 220#1 --set-u32 4=9
NET_LINK a veth's peer dropped|bad NET_LINK v1: its peer|drop $img $f -r 220#2
NET_BRPORT of a device with no master|bad NET_BRPORT|edit $img $f -r 220#1 --set-u32 16=0
NET_LINK a bridge port's bridge dropped|bad NET_BRIDGE|drop $img $f -r 220#3
NET_ADDR ifindex 99|ifindex 99 is no NET_LINK|edit $img $f -r 221#1 --set-u32 8=99
NET_ROUTE oif 99|ifindex 99 is no NET_LINK|edit $img $f -r 222#1 --set-u32 16=99
NET_BRIDGE twice|bad NET_BRIDGE|dup -r 225#0 $img $f
NET_IPTABLES twice|bad NET_IPTABLES|dup -r 224#0 $img $f
NET_SYSCTL path ../|bad NET_SYSCTL|edit $img $f -r 223#0 --set-u32 8=0x2f2e2e2f
EOF2
}

# A container whose veth has its other end outside (h0, in a namespace
# of the test's, from which ckpt restarts it): restart makes the pair
# again, h0 in its caller's namespace with its name and address, down.
test_netns_container_veth_outside() {
	local d=$WORK/netns-ctout o up init root rc=0
	mkdir -p $d
	netns_new || return 1; o=$nspid
	unshare --fork --pid --uts --net sh -c 'while ! [ -e "$1.net" ]; do sleep 0.01; done; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	for ((i = 0; i < 500; i++)); do init=$(pgrep -P $up) && break; sleep 0.01; done
	nsenter -t $o -n ip link add h0 address 02:00:00:00:00:aa type veth peer name c0 netns $init &&
		nsenter -t $init -n sh -c 'ip link set c0 up && ip addr add 10.3.0.2/24 dev c0' ||
		{ kill -9 $up $o; return 1; }
	touch $d/go.net
	wait_for $d/out READY 20 || { kill -9 $up $o; return 1; }
	step "checkpoint"
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up $o; return 1; }
	wait $up
	ckpt info $d/img | grep "^NET_LINK .*name=c0 .*peer_outside=h0 peer_address=02:00:00:00:00:aa" || rc=1
	for ((i = 0; i < 300; i++)); do nsenter -t $o -n ip link show h0 > /dev/null 2>&1 || break; sleep 0.01; done
	step "restart"
	root=$(nsenter -t $o -n timeout -k 5 $RESTART_TIMEOUT "$CKPT" restart --detach $d/img 2> $d/rerr) ||
		{ cat $d/rerr; kill $o; return 1; }
	nsenter -t $o -n ip -o link show h0 | grep "h0@.*state DOWN .*link/ether 02:00:00:00:00:aa .*link-netnsid" ||
		{ note "no h0 in restart's caller's namespace"; nsenter -t $o -n ip -o link; rc=1; }
	nsenter -t $root -n ip -o addr show c0 | grep -q "10.3.0.2/24" || { note "no c0 in the container"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	kill $o
	cat $d/out
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# A device ckpt cannot make again: the checkpoint fails, naming the
# container's pid, its namespace and the device's kind; it runs on.
test_netns_container_refuse_tun() {
	local d=$WORK/netns-cttun up
	mkdir -p $d
	unshare --fork --pid --uts --net sh -c 'ip tuntap add tun7 mode tun || exit 1; exec "$0" plain "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	container_refused $d $up $(pgrep -P $up) \
		"pid 1: net namespace net:\[[0-9]+\]: device tun7 of kind tun is not supported"
}

# Rules, and no iptables-save to save them (hidden in a mount namespace
# of the driver's own): refused; none, and no iptables-save: saved.
# Rules saved, and no iptables-restore to make them again: refused.
test_netns_refuse_no_iptables_save() {
	local a b rc=0 hide
	: > $WORK/noexec
	# (both may be links to one xtables binary)
	hide="for b in iptables-save ip6tables-save; do
		p=\$(command -v \$b) && { mount --bind $WORK/noexec \$(readlink -f \$p) || exit 1; }; done"
	netns_new || return 1; a=$nspid
	unshare -m sh -c "$hide; ! command -v iptables-save > /dev/null || exit 1
		$NETNS_DRV save $WORK/img /proc/$a/ns/net" 2> $WORK/err0 || { cat $WORK/err0; rc=1; }
	nsenter -t $a -n iptables -A INPUT -j ACCEPT || rc=1
	unshare -m sh -c "$hide; $NETNS_DRV save $WORK/img /proc/$a/ns/net" 2> $WORK/err
	[ $? = 1 ] && grep -q "net namespace net:\[[0-9]*\]: it has iptables tables and there is no iptables-save to save them" $WORK/err ||
		{ cat $WORK/err; rc=1; }
	# saved, then made again where there is no iptables-restore
	netns_new || return 1; b=$nspid
	$NETNS_DRV save $WORK/img /proc/$a/ns/net || rc=1
	hide=${hide//-save/-restore}
	unshare -m sh -c "$hide; $NETNS_DRV restore $WORK/img /proc/$b/ns/net" 2> $WORK/err
	[ $? = 1 ] && grep -q "the image has iptables rules and there is no iptables-restore here" $WORK/err ||
		{ cat $WORK/err; rc=1; }
	kill $a $b
	return $rc
}

# Made again where the saved ifindexes are taken: the devices get others,
# and the bridge port, addresses and routes follow them by name.
test_netns_ifindex_taken() {
	local a b rc=0
	netns_new || return 1; a=$nspid
	netns_new || return 1; b=$nspid
	nsenter -t $a -n sh -ex -c '
		ip link add v0 type veth peer name v1
		ip link add br0 type bridge
		ip link set v1 master br0
		for d in v0 v1 br0; do ip link set $d up; done
		ip addr add 10.1.0.1/24 dev v0
		ip addr add 10.2.0.1/24 dev br0
		ip route add 172.16.0.0/12 via 10.2.0.254' > $WORK/fill.out 2>&1 &&
	nsenter -t $b -n sh -ex -c 'ip link add z0 type veth peer name z1; ip link add z2 type veth peer name z3' \
		>> $WORK/fill.out 2>&1 || { cat $WORK/fill.out; kill $a $b; return 1; }
	$NETNS_DRV save $WORK/img /proc/$a/ns/net || rc=1
	$NETNS_DRV restore $WORK/img /proc/$b/ns/net 2> $WORK/err || { cat $WORK/err; rc=1; }
	nsenter -t $b -n sh -c 'ip -o link; ip -o addr; ip route' > $WORK/b
	kill $a $b
	cat $WORK/b
	grep -q "^[67]: v1@v0: .* master br0 " $WORK/b && grep -q "^8: br0:" $WORK/b &&
		grep -q "v0 *inet 10.1.0.1/24" $WORK/b && grep -q "br0 *inet 10.2.0.1/24" $WORK/b &&
		grep -q "^172.16.0.0/12 via 10.2.0.254 dev br0" $WORK/b || rc=1
	[ $rc = 0 ] && sanitizer_clean $WORK/err
}

# A container's image with iptables rules, restarted where there is no
# iptables-restore (hidden in a mount namespace): refused before any
# process exists; where there is, it comes back with them.
test_netns_container_no_iptables_restore() {
	local d=$WORK/netns-ctipt up init root rc=0
	mkdir -p $d
	unshare --fork --pid --uts --net sh -c 'iptables -A INPUT -p udp -j DROP || exit 1; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	step "restart, no iptables-restore"
	unshare -m sh -c 'for b in iptables-restore ip6tables-restore; do
			p=$(command -v $b) && { mount --bind /dev/null $(readlink -f $p) || exit 1; }; done
		exec timeout -k 5 '$RESTART_TIMEOUT' "$0" restart --detach "$1"' "$CKPT" $d/img > $d/rout 2> $d/rerr
	[ $? = 125 ] && [ "$(wc -l < $d/rerr)" = 1 ] &&
		grep -q "the image has iptables rules and there is no iptables-restore here" $d/rerr ||
		{ note "restart: exit $?"; cat $d/rerr; rc=1; }
	pgrep -f "holder child $d/go" && { note "a process of it is left"; rc=1; }
	step "restart"
	root=$(ckpt restart --detach $d/img 2> $d/rerr2) || { cat $d/rerr2; return 1; }
	nsenter -t $root -n iptables-save | grep -q "^-A INPUT -p udp -j DROP" || rc=1
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr $d/rerr2
}

# A TCP listener bound to an address of the container's own: restart
# makes the address before the socket is bound again (the netns kind
# before the files), and a client in the namespace reaches it.
test_netns_container_listener() {
	local d=$WORK/netns-ctlisten up init root rc=0
	mkdir -p $d
	cat > $d/listen.py <<'PY'
import os, socket, sys, time
go = sys.argv[1]
s = socket.socket()
s.bind(("10.1.0.1", 8080))
s.listen(4)
print("READY", os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
s.settimeout(10)
c, _ = s.accept()
print("PASS" if c.recv(16) == b"hi" else "FAIL", flush=True)
PY
	unshare --fork --pid --uts --net sh -c 'ip link set lo up && ip link add v0 type veth peer name v1 &&
		ip link set v0 up && ip link set v1 up && ip addr add 10.1.0.1/24 dev v0 || exit 1
		exec "$0" "$1" "$2"' $PYTHON $d/listen.py $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	touch $d/go
	nsenter -t $root -n $PYTHON -c 'import socket; socket.create_connection(("10.1.0.1", 8080), 5).sendall(b"hi")' || rc=1
	wait_for $d/out '^PASS' 20 || rc=1
	cat $d/out
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# restart --join-ns net:PATH: the container's root in that namespace,
# left as it is (its saved devices not made there).
test_netns_container_join() {
	local d=$WORK/netns-ctjoin o up init root rc=0
	mkdir -p $d
	netns_new || return 1; o=$nspid
	unshare --fork --pid --uts --net sh -c 'ip link add v0 type veth peer name v1 || exit 1; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up $o; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up $o; return 1; }
	wait $up
	root=$(ckpt restart --detach --join-ns net:/proc/$o/ns/net $d/img 2> $d/rerr) || { cat $d/rerr; kill $o; return 1; }
	[ "$(readlink /proc/$root/ns/net)" = "$(readlink /proc/$o/ns/net)" ] || { note "not in the namespace joined"; rc=1; }
	nsenter -t $o -n ip -o link | grep -q "v0" && { note "v0 made in the namespace joined"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	kill $o
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}
