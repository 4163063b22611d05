# ns.sh - namespaces (issue 15).  A container (the init of its own pid
# namespace) is checkpointed from outside, by its host pid, and comes
# back as pid 1 of a new pid namespace with its own namespaces made
# again; a root's own uts namespace is saved and made again in any
# tree; what is not saved yet (a user namespace, nested ones but pid
# namespaces made in the tree, a process in another pid namespace that
# is not its init) is refused at
# checkpoint, naming the process and the namespace, and runs on as
# before; checkpointed from inside its namespaces it is saved as any
# other.
t ns_uts
t refuse_ns_uts_child
t refuse_ns_ipc
t refuse_ns_pid
t ns_from_inside
t ns_container
t ns_container_join
t ns_container_time
t ns_container_cgroup needs cgroup group cgroup
t ns_container_killpoints timeout 300
t refuse_container_nested

# unshare(1) runs the holder in namespaces of its own: refused, named.
ns_refused() {	# NAME UNSHARE-OPTIONS TYPE
	local d=$WORK/ns-$1 pid i
	mkdir -p $d
	if [ "$3" = pid ]; then	# the holder as pid 2 there: no container
		unshare $2 sh -c '"$0" plain "$1" & wait' "$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	else
		unshare $2 "$AUX/holder" plain $d/go > $d/out 2>&1 < /dev/null &
	fi
	wait_for $d/out READY || return 1
	# the holder, not unshare (nor the sh it forks with --pid --fork)
	pid=$(awk '/READY/ { print $2 }' $d/out)
	[ "$3" = pid ] && pid=$(pgrep -f "holder plain $d/go" | tail -1)
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
test_refuse_ns_pid() { ns_refused pid "--pid --fork" pid; }

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

# In a container ROOT (its host pid): pid 1 of a pid namespace not ours,
# named HOST, with a child in the same namespaces.
container_ok() {	# ROOT HOST
	local child
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$1/status)" = 1 ] || { note "root: $(grep NSpid /proc/$1/status)"; return 1; }
	[ "$(readlink /proc/$1/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] || { note "in our pid namespace"; return 1; }
	[ "$(nsenter -t $1 -u hostname)" = "$2" ] || { note "hostname: $(nsenter -t $1 -u hostname)"; return 1; }
	child=$(pgrep -P $1 | head -1)
	[ -n "$child" ] && [ "$(readlink /proc/$child/ns/pid)" = "$(readlink /proc/$1/ns/pid)" ] &&
		[ "$(readlink /proc/$child/ns/uts)" = "$(readlink /proc/$1/ns/uts)" ] ||
		{ note "child $child not in the container's namespaces"; return 1; }
}

# A container made by unshare (its own pid and uts namespaces, a
# hostname, the holder as its init with a child), checkpointed --kill by
# its host pid and restarted with --detach: pid 1 of a new pid namespace,
# its hostname and child with it.  Checkpointed again and restarted
# without --detach, restart's exit is the init's.
test_ns_container() {
	local d=$WORK/ns-container up init root rpid p rc=0
	mkdir -p $d
	unshare --fork --pid --uts sh -c 'hostname ckpt-ct; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q "^NS .*own=pid,uts " $d/info && grep -q "^TASK .*pid=1 " $d/info ||
		{ note "no container in the image"; return 1; }
	# without its NS record, a container's image is refused
	$PYTHON tests/forge.py drop $d/img $d/img.forged -r NS > /dev/null || return 1
	ckpt info $d/img.forged > /dev/null 2> $d/ferr
	[ $? = 1 ] && grep -q "needs its NS record" $d/ferr || { cat $d/ferr; rc=1; }
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	container_ok $root ckpt-ct || rc=1
	ckpt checkpoint --kill -o $d/img2 $root 2>> $d/err || { cat $d/err; kill -9 $root; return 1; }
	gone $root || return 1
	ckpt_bg restart $d/img2 > $d/rout 2>&1 &
	rpid=$!
	root=
	for ((i = 0; i < 500; i++)); do
		for p in $(pgrep -f "holder child $d/go"); do
			[ "$(awk '/^NSpid/ { print $NF }' /proc/$p/status 2>/dev/null)" = 1 ] && root=$p
		done
		[ -n "$root" ] && break
		sleep 0.01
	done
	sleep 0.5	# built and let go
	container_ok $root ckpt-ct || rc=1
	touch $d/go
	wait $rpid || { note "restart exit $?"; rc=1; }
	grep -q '^PASS' $d/out || rc=1
	cat $d/out $d/rout
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr $d/rout
}

# A container refused at checkpoint (runs on as before, untouched): its
# init is pid INIT; the message matches RE.
container_refused() {	# DIR UNSHARE-PID INIT RE
	local d=$1
	ckpt checkpoint --kill -o $d/img $3 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $2; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -Eq "$4" $d/err && sanitizer_clean $d/err ||
		{ kill -9 $2; return 1; }
	[ "$(awk '/TracerPid/ {print $2}' /proc/$3/status)" = 0 ] || { kill -9 $2; return 1; }
	touch $d/go
	wait $2 && grep -q '^PASS' $d/out
}

# A process of the container made a pid namespace for its children
# (unshare(CLONE_NEWPID)) and forked none since: no init to make it
# again with, refused (one with its init is saved: pidns_nested.sh).
test_refuse_container_nested() {
	local d=$WORK/ns-nested up
	mkdir -p $d
	unshare --fork --pid $PYTHON - $d/go > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
go = sys.argv[1]
k = os.fork()
if k == 0:
    libc.unshare(0x20000000)     # CLONE_NEWPID: its children's
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
	up=$!
	wait_for $d/out CHILD || { kill -9 $up; return 1; }
	wait_for $d/out READY || { kill -9 $up; return 1; }
	container_refused $d $up $(pgrep -P $up) \
		"pid 2 made a pid namespace for its children \(unshare\(CLONE_NEWPID\)\) and forked none into it yet: not supported"
}

# --join-ns uts:PATH: the container comes back in that uts namespace, as
# it is (its hostname, not the saved one); an image that is no
# container's, or a TYPE that is not one, is refused with a message.
test_ns_container_join() {
	local d=$WORK/ns-join up init root other rc=0
	mkdir -p $d
	unshare --uts sh -c 'hostname joined-host; exec sleep 60' &
	other=$!
	unshare --fork --pid --uts sh -c 'hostname ckpt-ct; exec "$0" child "$1"' \
		"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up $other; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up $other; return 1; }
	wait $up
	gone $init || { kill -9 $other; return 1; }
	ckpt restart --detach --join-ns bogus:/x $d/img 2> $d/e1
	[ $? = 125 ] && grep -q "TYPE one of net, ipc, uts, mnt, time" $d/e1 || { cat $d/e1; rc=1; }
	ckpt restart --detach --join-ns uts:/proc/$other/ns/net $d/img 2> $d/e2
	[ $? = 125 ] && grep -q "not a uts namespace" $d/e2 || { cat $d/e2; rc=1; }
	root=$(ckpt restart --detach --join-ns uts:/proc/$other/ns/uts $d/img 2> $d/rerr) ||
		{ cat $d/rerr; kill -9 $other; return 1; }
	container_ok $root joined-host || rc=1
	[ "$(readlink /proc/$root/ns/uts)" = "$(readlink /proc/$other/ns/uts)" ] || { note "not the joined namespace"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	kill -9 $other
	wait $other 2>/dev/null
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr $d/e1 $d/e2
}

# A container's own time namespace (its boot clock 2000 s ahead of
# ours): it comes back in a new one whose clocks go on from what they
# read at the checkpoint, though restart comes 5 s later.
test_ns_container_time() {
	local d=$WORK/ns-time up init root saved now child rc=0
	mkdir -p $d
	unshare --fork --pid --uts --time --boottime 2000 --monotonic 1000000 \
		"$AUX/holder" child $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	ckpt info $d/img > $d/info || return 1
	grep "^NS" $d/info
	saved=$(sed -n 's/^NS_TIME .*boottime_ns=\([0-9]*\).*/\1/p' $d/info)
	[ -n "$saved" ] && grep -q "^NS .*own=pid,uts,time" $d/info || { note "no time namespace saved"; return 1; }
	sleep 5
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	now=$(nsenter -t $root -T cat /proc/uptime | awk '{ printf "%d", $1 * 1000 }')
	saved=$((saved / 1000000))
	note "boot clock: $saved ms at the checkpoint, $now ms after restart"
	[ $((now - saved)) -ge 0 ] && [ $((now - saved)) -lt 5000 ] || rc=1
	[ "$(readlink /proc/$root/ns/time)" != "$(readlink /proc/self/ns/time)" ] || { note "in our time namespace"; rc=1; }
	child=$(pgrep -P $root | head -1)
	[ "$(readlink /proc/$child/ns/time)" = "$(readlink /proc/$root/ns/time)" ] || { note "child not in it"; rc=1; }
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	container_forged $d/img || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# An image forged, every checksum valid: `ckpt info` and restart refuse
# it, saying why.  Cases on stdin, a line each: NAME|PATTERN|forge.py
# arguments, where $img is IMG and $f the forged image.
forged_refused() {	# IMG
	local img=$1 f=$1.forged rc=0 name args pat
	while IFS='|' read -r name pat args; do
		eval "$PYTHON tests/forge.py $args" > /dev/null || { note "forge: $name"; rc=1; continue; }
		ckpt info $f > /dev/null 2> $f.err
		[ $? = 1 ] && grep -q "$pat" $f.err && sanitizer_clean $f.err ||
			{ note "$name: $(cat $f.err)"; rc=1; }
		ckpt restart --detach $f > /dev/null 2> $f.err
		[ $? = 125 ] && grep -q "$pat" $f.err || { note "$name (restart): $(cat $f.err)"; rc=1; }
	done
	return $rc
}

# A container's image (with its own time namespace) forged.
container_forged() {	# IMG
	forged_refused $1 <<'EOF2'
no NS|bad NS_TIME|drop $img $f -r NS
NS own user, no NS_USER|NS_USER|edit $img $f -r NS --set-u32 0=0x71 --set-u32 4=0x8e
NS own and shared|bad NS record|edit $img $f -r NS --set-u32 4=0x1
NS without pid|bad NS record|edit $img $f -r NS --set-u32 0=0x50
NS twice|bad NS record|dup -r NS $img $f
no NS_TIME|and NS_UTS, NS_TIME|drop $img $f -r NS_TIME
NS_TIME past 2^62|bad NS_TIME|edit $img $f -r NS_TIME --set-u64 8=0x4000000000000001
NS_TIME negative|bad NS_TIME|edit $img $f -r NS_TIME --set-u64 0=0xffffffffffffffff
HEAD not container|bad task count, pid or flags|edit $img $f -r HEAD --set flags=0
EOF2
}

# A container in groups of its own with limits (pids.max, a memory
# limit) and its own cgroup namespace rooted there: the groups removed
# after the checkpoint, restart makes them again with their limits, the
# container in them, its namespace's root there again.
test_ns_container_cgroup() {
	local d=$WORK/ns-cgroup g=ckpt-ct.$$ up init root c rc=0
	local pids=/sys/fs/cgroup/pids/$g mem=/sys/fs/cgroup/memory/$g
	mkdir -p $d $pids $mem
	echo 77 > $pids/pids.max && echo 67108864 > $mem/memory.limit_in_bytes || { rmdir $pids $mem; return 1; }
	sh -c 'echo $$ > '$pids'/cgroup.procs && echo $$ > '$mem'/cgroup.procs &&
		exec unshare --fork --pid --cgroup "$0" child "$1"' "$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	init=$(pgrep -P $up)
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	gone $init || return 1
	rmdir $pids $mem || return 1
	grep -q "^NS .*own=pid,cgroup " <(ckpt info $d/img) || { note "no cgroup namespace"; rc=1; }
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	[ "$(cat $pids/pids.max 2>/dev/null)" = 77 ] || { note "pids.max: $(cat $pids/pids.max)"; rc=1; }
	[ "$(cat $mem/memory.limit_in_bytes 2>/dev/null)" = 67108864 ] || { note "memory limit"; rc=1; }
	for c in $root $(pgrep -P $root); do
		grep -qx "$c" $pids/cgroup.procs && grep -qx "$c" $mem/cgroup.procs || { note "$c not in its groups"; rc=1; }
	done
	# seen from inside its cgroup namespace, it is at the root
	[ "$(nsenter -t $root -C cat /proc/$root/cgroup | grep ':pids:')" = "$(grep -o '^[0-9]*:pids:' /proc/self/cgroup)/" ] ||
		{ note "namespace root: $(nsenter -t $root -C cat /proc/$root/cgroup)"; rc=1; }
	[ "$(readlink /proc/$root/ns/cgroup)" != "$(readlink /proc/self/ns/cgroup)" ] || rc=1
	touch $d/go
	wait_for $d/out '^PASS' 20 || rc=1
	for ((c = 0; c < 200; c++)); do rmdir $pids $mem 2> /dev/null && break; sleep 0.05; done
	[ ! -d $pids ] && [ ! -d $mem ] || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# The engine killed at points of a container's checkpoint (the first,
# the last and two between; with and without --kill): the checkpoint
# fails, and the container runs on untouched, untraced, its state whole.
test_ns_container_killpoints() {
	local d=$WORK/ns-kp up init n k opt kill_from rc=0
	mkdir -p $d
	ct_kp_start() {
		rm -f $d/go $d/out
		unshare --fork --pid --uts sh -c 'hostname ckpt-kp; exec "$0" child "$1"' \
			"$AUX/holder" $d/go > $d/out 2>&1 < /dev/null &
		up=$!
		wait_for $d/out READY || return 1
		init=$(pgrep -P $up)
	}
	for opt in "" --kill; do
		ct_kp_start || return 1
		CKPT_TEST_POINTS=1 "$CKPT" checkpoint $opt -o $d/img $init 2> $d/points ||
			{ cat $d/points; kill -9 $up; return 1; }
		n=$(grep -c '^testpoint ' $d/points)
		# from where --kill starts killing (the image safe), ckpt's
		# death ends the container
		kill_from=$(grep -E '^testpoint [0-9]+ killing$' $d/points | cut -d' ' -f2)
		touch $d/go
		wait $up
		[ "$n" -gt 4 ] || { note "$n test points"; return 1; }
		for k in 1 $((n / 3)) $((2 * n / 3)) $n; do
			ct_kp_start || { rc=1; continue; }
			CKPT_TEST_KILL_AT=$k "$CKPT" checkpoint $opt -o $d/img $init > $d/err 2>&1
			[ $? != 0 ] || { note "point $k $opt: the checkpoint did not fail"; rc=1; }
			grep -q "killed at point $k" $d/err || { note "point $k: $(cat $d/err)"; rc=1; }
			if [ -n "$opt" ] && [ -n "$kill_from" ] && [ $k -ge $kill_from ]; then
				wait $up
				gone $init || { note "point $k $opt: the container left running"; rc=1; }
				continue
			fi
			kill -0 $init 2> /dev/null && [ "$(awk '/TracerPid/ { print $2 }' /proc/$init/status)" = 0 ] ||
				{ note "point $k $opt: the container is gone or held"; rc=1; }
			[ "$(nsenter -t $init -u hostname)" = ckpt-kp ] && [ -n "$(pgrep -P $init)" ] ||
				{ note "point $k $opt: its hostname or child"; rc=1; }
			touch $d/go
			wait_for $d/out '^PASS' 20 || { note "point $k $opt: $(cat $d/out)"; rc=1; }
			wait $up
		done
	done
	return $rc
}
