# container.sh - whole containers, as issue 15 asks them shown: (a) one
# built with unshare and pivot_root serving on its own loopback, (b) one
# run by runc, (c) one migrated between two "hosts" (network namespaces)
# through a pipe, a client's TCP connection to it surviving the move.
t container_a
t container_runc
t container_migrate

# The server of (a) and (c): counts the requests it answers on PORT (a
# connection each, or a line each on a kept connection), from files it
# keeps in its tmpfs.
CT_SERVER='
import os, socket, sys, threading
os.closerange(3, 1024)	# nothing of the test runner'"'"'s
port, state = int(sys.argv[1]), sys.argv[2]
n = int(open(state).read()) if os.path.exists(state) else 0
lock = threading.Lock()
def answer():
    global n
    with lock:
        n += 1
        open(state, "w").write(str(n))
        return ("%d %s\n" % (n, socket.gethostname())).encode()
def serve(c):
    f = c.makefile("rb")
    for line in f:
        c.sendall(answer())
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", port))
s.listen(8)
print("READY", os.getpid(), flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
'

# One request from inside PID's network namespace: the answer line.
ct_ask() {	# PID PORT
	nsenter -t $1 -n $PYTHON -c '
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
c.sendall(b"hi\n")
print(c.makefile().readline().strip())' $2
}

# (a): a container with its own pid, mount, uts, ipc and net namespaces,
# pivot_root'ed into a tmpfs holding ro binds of the host's /usr and
# /etc, its files in a tmpfs, its own /proc, a hostname, its loopback
# up, and a server on port 8080 as pid 1, run as uid 1000.  Prints its
# host pid when it serves.  WRAPPER runs unshare (in a user namespace:
# userns.sh).
ct_a_start() {	# DIR [WRAPPER...]
	local d=$1 r=$1/root i pid
	shift
	mkdir -p $r
	printf '%s' "$CT_SERVER" > $d/server.py
	"$@" unshare --mount --propagation private --pid --fork --uts --ipc --net bash -c '
		r='$r'
		mount -t tmpfs -o mode=755 tmpfs $r &&
		mkdir $r/usr $r/etc $r/proc $r/data $r/old &&
		ln -s usr/bin $r/bin && ln -s usr/lib $r/lib && ln -s usr/lib64 $r/lib64 &&
		mount --bind /usr $r/usr && mount -o remount,bind,ro $r/usr &&
		mount --bind /etc $r/etc && mount -o remount,bind,ro $r/etc &&
		mount -t tmpfs -o size=8m,mode=700 tmpfs $r/data &&
		cp '$d'/server.py $r/data/ && chown -R 1000:1000 $r/data &&
		mount -t proc proc $r/proc &&
		hostname ct-a && ip link set lo up &&
		cd $r && pivot_root . old && umount -l /old && rmdir /old &&
		cd / && exec setsid setpriv --reuid 1000 --regid 1000 --clear-groups \
			python3 /data/server.py 8080 /data/count' > $d/out 2>&1 < /dev/null &
	for ((i = 0; i < 1000; i++)); do
		grep -q READY $d/out 2>/dev/null && break
		sleep 0.01
	done
	pid=$(pgrep -f '^python3 /data/server.py 8080' | while read p; do
		grep -q "CKPT_TEST_TAG=$CKPT_TEST_TAG" /proc/$p/environ 2> /dev/null && echo $p
	done | head -1)
	[ -n "$pid" ] || { cat $d/out >&2; return 1; }
	echo $pid
}

test_container_a() {
	local d=$WORK/ct-a init root copy a rc=0
	mkdir -p $d
	init=$(ct_a_start $d) || return 1
	for i in 1 2 3; do a=$(ct_ask $init 8080); done
	[ "$a" = "3 ct-a" ] || { note "before: '$a'"; kill -9 $init; return 1; }
	# a copy while the original runs on: each in its own namespaces
	ckpt checkpoint -o $d/copy.img $init 2> $d/err || { cat $d/err; kill -9 $init; return 1; }
	ckpt restart --detach $d/copy.img > $d/copy.pid 2>> $d/err < /dev/null || { cat $d/err; kill -9 $init; return 1; }
	copy=$(head -1 $d/copy.pid)
	a=$(ct_ask $copy 8080)
	[ "$a" = "4 ct-a" ] && [ "$(ct_ask $init 8080)" = "4 ct-a" ] && [ "$(ct_ask $copy 8080)" = "5 ct-a" ] ||
		{ note "copy: '$a'"; rc=1; }
	kill -9 $copy
	a=$(ct_ask $init 8080)
	[ "$a" = "5 ct-a" ] || { note "the original after the copy: '$a'"; kill -9 $init; return 1; }
	ckpt checkpoint --kill -o $d/img $init 2>> $d/err || { cat $d/err; kill -9 $init; return 1; }
	gone $init || return 1
	# (its stdio, the host's /dev/null and a log, are restart's: not a
	# pipe that $(...) would wait on)
	ckpt restart --detach $d/img > $d/rpid 2> $d/rerr < /dev/null || { cat $d/rerr; return 1; }
	root=$(head -1 $d/rpid)
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$root/status)" = 1 ] || { note "not pid 1"; rc=1; }
	a=$(ct_ask $root 8080)
	[ "$a" = "6 ct-a" ] || { note "after: '$a'"; rc=1; }
	# from inside its namespace only
	$PYTHON -c 'import socket; socket.create_connection(("127.0.0.1", 8080), timeout=2)' 2> /dev/null &&
		{ note "reached from outside its namespace"; rc=1; }
	[ "$(cat /proc/$root/root/data/count)" = 6 ] || rc=1
	grep -q " / / .* - tmpfs " /proc/$root/mountinfo && grep -q " /usr ro" /proc/$root/mountinfo ||
		{ note "mounts: $(cat /proc/$root/mountinfo)"; rc=1; }
	kill -9 $root
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# (b): a container run by runc from a busybox-static rootfs, its own pid,
# mount (pivot_root, proc, tmpfs /dev, devpts, mqueue, sysfs, cgroups,
# masked and read-only paths), net, ipc and uts namespaces, serving
# HTTP on its loopback (busybox httpd, a CGI script counting requests).
# Checkpointed from the host by its init's pid, ended, restarted: pid 1
# of a new pid namespace, serving and counting on.
ct_runc_bundle() {	# DIR
	local d=$1 r=$1/rootfs c
	mkdir -p $r/bin $r/proc $r/dev $r/sys $r/tmp $r/www/cgi-bin
	cp /bin/busybox $r/bin/
	for c in sh cat echo httpd expr sleep; do ln -sf busybox $r/bin/$c; done
	cat > $r/www/cgi-bin/count <<'SH'
#!/bin/sh
n=$(cat /tmp/count 2>/dev/null || echo 0)
n=$(expr $n + 1)
echo $n > /tmp/count
printf 'Content-Type: text/plain\r\n\r\n%s\n' "$n"
SH
	chmod 755 $r/www/cgi-bin/count
	(cd $d && runc spec) || return 1
	$PYTHON - $d/config.json <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/www"]
c["root"]["readonly"] = False
c["hostname"] = "ct-runc"
json.dump(c, open(p, "w"), indent=1)
PY
}

# GET http://127.0.0.1:8080/PATH from inside PID's network namespace.
ct_http() {	# PID PATH
	nsenter -t $1 -n $PYTHON -c '
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:8080" + sys.argv[1], timeout=5).read().decode().strip())' $2
}

# runc creates and starts container ID of bundle DIR, its loopback up:
# its init's pid once it has answered twice.
ct_runc_serving() {	# ID DIR
	local id=$1 d=$2 init a i
	(cd $d && runc create $id < /dev/null > /dev/null 2>&1) || { note "runc create failed" >&2; return 1; }
	init=$(runc state $id | $PYTHON -c 'import json, sys; print(json.load(sys.stdin)["pid"])')
	nsenter -t $init -n ip link set lo up
	runc start $id || { runc delete -f $id; return 1; }
	for ((i = 0; i < 200; i++)); do
		a=$(ct_http $init /cgi-bin/count 2> /dev/null) && break
		sleep 0.05
	done
	a=$(ct_http $init /cgi-bin/count)
	[ "$a" = 2 ] || { note "before: '$a'" >&2; runc delete -f $id; return 1; }
	echo $init
}

# Container ID (init INIT) checkpointed --kill into DIR/img, runc
# delete'd, restarted --detach: the restored root's pid.
ct_runc_moved() {	# ID DIR INIT
	local id=$1 d=$2
	ckpt checkpoint --kill -o $d/img $3 2> $d/err || { cat $d/err >&2; runc delete -f $id; return 1; }
	gone $3 || return 1
	runc delete -f $id > /dev/null 2>&1
	ckpt restart --detach $d/img > $d/rpid 2> $d/rerr < /dev/null || { cat $d/rerr >&2; return 1; }
	head -1 $d/rpid
}

# The groups restart made again for container ID, once its root is gone.
ct_runc_groups_gone() {	# ID
	local i
	for ((i = 0; i < 200; i++)); do
		rmdir /sys/fs/cgroup/*/$1 2> /dev/null
		ls -d /sys/fs/cgroup/*/$1 > /dev/null 2>&1 || break
		sleep 0.05
	done
}

test_container_runc() {
	local d=$WORK/ct-runc id=ckpt-test-$$ init root a rc=0
	mkdir -p $d
	ct_runc_bundle $d || return 1
	init=$(ct_runc_serving $id $d) || return 1
	root=$(ct_runc_moved $id $d $init) || return 1
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$root/status)" = 1 ] || { note "not pid 1"; rc=1; }
	[ "$(nsenter -t $root -u hostname)" = ct-runc ] || rc=1
	a=$(ct_http $root /cgi-bin/count)
	[ "$a" = 3 ] || { note "after: '$a'"; rc=1; }
	# in runc's groups, which restart made again
	grep -qx $root /sys/fs/cgroup/pids/$id/cgroup.procs || { note "not in its cgroup"; rc=1; }
	kill -9 $root
	ct_runc_groups_gone $id
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# (c): migration.  Two "hosts" (network namespaces A and B, each held by
# a sleeping process) and a client (C) on one LAN (a bridge in L).  The
# container (its own pid, uts and net namespaces; a veth to host A, its
# address 10.77.0.2 routed by A) serves on port 8080; the client holds a
# TCP connection to it.  It is checkpointed on A and restarted on B
# through a pipe; B's end of the veth is set up again, the client's
# route follows; the client's connection goes on, counting on.
declare -gA CT_HOST=()

ct_net() {	# HOST COMMAND...: in that host's network namespace
	local h=$1
	shift
	nsenter -t ${CT_HOST[$h]} -n "$@"
}

ct_mig_cleanup() {
	local h
	for h in "${!CT_HOST[@]}"; do kill -9 ${CT_HOST[$h]} 2> /dev/null; done
	CT_HOST=()
}

ct_mig_lan() {	# DIR
	local h ip
	for h in A B C L; do
		unshare -n sleep 1000 &
		CT_HOST[$h]=$!
	done
	sleep 0.2
	ct_net L ip link add br0 type bridge && ct_net L ip link set br0 up || return 1
	for h in A:1 B:2 C:10; do
		ip=${h#*:} h=${h%:*}
		ct_net L ip link add p$h type veth peer name eth0 netns ${CT_HOST[$h]} &&
		ct_net L ip link set p$h master br0 up &&
		ct_net $h ip link set lo up && ct_net $h ip link set eth0 up &&
		ct_net $h ip addr add 192.168.77.$ip/24 dev eth0 || return 1
	done
	ct_net A sysctl -qw net.ipv4.ip_forward=1 && ct_net B sysctl -qw net.ipv4.ip_forward=1 &&
	ct_net C ip route add 10.77.0.0/24 via 192.168.77.1
}

# The container's host end: up, routing 10.77.0.0/24 to it.
ct_mig_host() {	# HOST
	ct_net $1 ip addr add 10.77.0.1/24 dev vct && ct_net $1 ip link set vct up
}

test_container_migrate() {
	local d=$WORK/ct-mig init root cl a rc=0
	mkdir -p $d
	printf '%s' "$CT_SERVER" > $d/server.py
	ct_mig_lan || { ct_mig_cleanup; return 1; }
	ct_net A unshare --pid --fork --uts --net sh -c '
		hostname ct-m; ip link set lo up; exec setsid python3 "$0" 8080 "$1"/count' \
		$d/server.py $d > $d/out 2>&1 < /dev/null &
	wait_for $d/out READY || { ct_mig_cleanup; return 1; }
	init=$(pgrep -f "server.py 8080 $d/count" | while read p; do
		[ "$(awk '/^NSpid/ { print $NF }' /proc/$p/status)" = 1 ] && echo $p; done)
	ct_net A ip link add vct type veth peer name eth0 netns $init &&
	nsenter -t $init -n sh -c 'ip addr add 10.77.0.2/24 dev eth0 && ip link set eth0 up &&
		ip route add default via 10.77.0.1' && ct_mig_host A ||
		{ kill -9 $init; ct_mig_cleanup; return 1; }
	# the client: one connection, a line now, another after the move
	ct_net C $PYTHON -c '
import os, socket, sys, time
c = socket.create_connection(("10.77.0.2", 8080), timeout=10)
f = c.makefile()
c.sendall(b"one\n"); print(f.readline().strip(), flush=True)
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
c.settimeout(30)
c.sendall(b"two\n"); print(f.readline().strip(), flush=True)' $d/moved > $d/client 2>&1 &
	cl=$!
	wait_for $d/client "ct-m" || { cat $d/client; kill -9 $init $cl; ct_mig_cleanup; return 1; }
	# the move, through a pipe
	ct_net A "$CKPT" checkpoint --kill --tcp-established -o - $init 2> $d/err |
		ct_net B "$CKPT" restart --detach - > $d/root 2> $d/rerr
	root=$(cat $d/root)
	[ -n "$root" ] || { cat $d/err $d/rerr; kill -9 $init $cl; ct_mig_cleanup; return 1; }
	ct_mig_host B && ct_net C ip route replace 10.77.0.0/24 via 192.168.77.2 || rc=1
	touch $d/moved
	wait $cl || rc=1
	cat $d/client
	[ "$(tail -1 $d/client)" = "2 ct-m" ] || { note "client: $(cat $d/client)"; rc=1; }
	# and a new connection reaches it on B
	a=$(ct_net C $PYTHON -c '
import socket
c = socket.create_connection(("10.77.0.2", 8080), timeout=10)
c.sendall(b"three\n"); print(c.makefile().readline().strip())')
	[ "$a" = "3 ct-m" ] || { note "new connection: '$a'"; rc=1; }
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$root/status)" = 1 ] || rc=1
	# it is in B's network, A's end of the veth went with the original
	ct_net B ip link show vct > /dev/null && ! ct_net A ip link show vct 2> /dev/null ||
		{ note "the veth's host end"; rc=1; }
	kill -9 $root
	ct_mig_cleanup
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}
