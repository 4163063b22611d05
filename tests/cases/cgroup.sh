# cgroup.sh - cgroups after restart (tests/progs/cgroup.c: membership of
# processes and threads, the groups' files, a cgroup namespace; also run
# as the state tests state_cgroup and state32_cgroup).
t cgroup_recreated         needs cgroup group cgroup
t cgroup_refuse_outside_ns needs cgroup group cgroup

# Whatever the program made in name=ckpt_test and pids, gone (it removes
# its groups itself once it has checked them).
cg_remove() {	# DIR PID
	local m=$1/cgmnt top=ckpt-test.$2
	mkdir -p $m
	unshare -m sh -c "mount -t cgroup -o none,name=ckpt_test none $m &&
		for g in a/empty a b c ''; do rmdir $m/$top/\$g 2>/dev/null; done
		test ! -e $m/$top" || return 1
	[ ! -d /sys/fs/cgroup/pids/$top ] || rmdir /sys/fs/cgroup/pids/$top
}

cg_exists() {	# DIR PID
	local m=$1/cgmnt
	mkdir -p $m
	unshare -m sh -c "mount -t cgroup -o none,name=ckpt_test none $m && test -e $m/ckpt-test.$2" ||
		[ -d /sys/fs/cgroup/pids/ckpt-test.$2 ]
}

# The groups removed after the checkpoint (another machine, or a cleaner
# at work): restart makes them again with their files, owners and modes,
# and puts each process and thread back (the program checks).  First a
# restart that fails after making them (a mapped file changed): they go.
test_cgroup_recreated() {
	local d=$WORK/cgre pid rc mtime
	mkdir -p $d
	cp "$PROGS/cgroup" $d/prog
	$d/prog $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; cg_remove $d $pid; return 1; }
	sleep 0.3
	step "checkpoint"
	checkpoint_kill $d $pid || { cat $d/out; kill -9 $pid; cg_remove $d $pid; return 1; }
	ckpt info $d/img | grep -q "ckpt-test.$pid/a/empty" || { note "no empty group in the image"; rc=1; }
	step "groups removed"
	cg_remove $d $pid || { note "could not remove the groups"; return 1; }
	mtime=$(stat -c %.9Y $d/prog)
	touch -d @$(( ${mtime%.*} + 10 )) $d/prog
	refused_restart $d $pid "mapped file $d/prog changed since the checkpoint" || rc=1
	cg_exists $d $pid && { note "groups left behind by a failed restart"; rc=1; }
	touch -d @$mtime $d/prog
	[ "${rc:-0}" = 0 ] || { cg_remove $d $pid; return 1; }
	step "restart"
	( sleep 0.5; touch $d/go ) &
	ckpt restart $d/img > $d/rout 2>&1
	rc=$?
	cat $d/out $d/rout
	cg_exists $d $pid && { note "the program left its groups"; cg_remove $d $pid; rc=1; }
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out && sanitizer_clean $d/rout
}

# A process moved out of its cgroup namespace's root (it made the
# namespace in c, then moved to its sibling b: it sees itself in /../b)
# cannot be put back so: the checkpoint is refused, naming it, and it
# runs on untraced.
test_cgroup_refuse_outside_ns() {
	local d=$WORK/cgns cg= top pid rc=0 dir
	for dir in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/freezer; do
		[ -d $dir ] && mkdir $dir/ckpt-test.$$ 2>/dev/null && { cg=$dir; break; }
	done
	[ -n "$cg" ] || { note "no writable hierarchy"; return 1; }
	top=$cg/ckpt-test.$$
	mkdir -p $d $top/b $top/c
	$PYTHON - $top $d/go > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
top, go = sys.argv[1:3]
open(top + "/c/cgroup.procs", "w").write(str(os.getpid()))
if libc.unshare(0x02000000) != 0:       # CLONE_NEWCGROUP
    sys.exit("unshare: %s" % os.strerror(ctypes.get_errno()))
open(top + "/b/cgroup.procs", "w").write(str(os.getpid()))
print("READY", open("/proc/self/cgroup").read().replace("\n", " "), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
print("PASS")
PY
	pid=$!
	if wait_for $d/out READY; then
		ckpt checkpoint --kill -o $d/img $pid 2> $d/err
		[ $? = 1 ] || { note "checkpoint did not fail"; rc=1; }
		cat $d/out $d/err
		[ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $pid: cgroup .* is outside the root of its cgroup namespace" $d/err || rc=1
		sanitizer_clean $d/err || rc=1
		[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || rc=1
		touch $d/go
		wait $pid || rc=1
		grep -q '^PASS' $d/out || rc=1
	else
		rc=1
	fi
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	rmdir $top/b $top/c $top
	return $rc
}
