# cgroup.sh - cgroups after restart (tests/progs/cgroup.c: membership of
# processes and threads, the groups' files, a cgroup namespace; also run
# as the state tests state_cgroup and state32_cgroup).
t cgroup_recreated         needs cgroup group cgroup
t cgroup_refuse_outside_ns needs cgroup group cgroup
t cgroup_none              needs cgroup group cgroup
t cgroup_root              needs cgroup group cgroup
t cgroup_root_joined       needs cgroup group cgroup

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

# restart --no-cgroups: the process stays in restart's own groups, and the
# group it was in, removed since, is not made again.
test_cgroup_none() {
	local d=$WORK/cgnone cg= top dir rpid rc=0 mine now
	for dir in /sys/fs/cgroup/unified /sys/fs/cgroup/freezer /sys/fs/cgroup/pids; do
		[ -d $dir ] && mkdir $dir/ckpt-test.none.$$ 2>/dev/null && { cg=$dir; break; }
	done
	[ -n "$cg" ] || { note "no writable hierarchy"; return 1; }
	top=$cg/ckpt-test.none.$$
	start_holder plain $d || { rmdir $top; return 1; }
	echo $pid > $top/cgroup.procs || { kill -9 $pid; rmdir $top; return 1; }
	checkpoint_kill $d $pid || { kill -9 $pid; rmdir $top; return 1; }
	ckpt info $d/img | grep -q "ckpt-test.none.$$" || { note "its group is not in the image"; rc=1; }
	rmdir $top || return 1
	ckpt_bg restart --no-cgroups $d/img > $d/rout 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do kill -0 $pid 2>/dev/null && break; sleep 0.01; done
	mine=$(grep -v "ckpt-test" /proc/self/cgroup | sort | md5sum)
	now=$(sort /proc/$pid/cgroup 2>/dev/null | md5sum)
	grep ckpt-test /proc/$pid/cgroup && { note "back in its saved group"; rc=1; }
	[ "$mine" = "$now" ] || { note "not in restart's groups: $(cat /proc/$pid/cgroup)"; rc=1; }
	[ -d $top ] && { note "its group was made again"; rmdir $top; rc=1; }
	touch $d/go
	wait $rpid || rc=1
	cat $d/rout
	[ $rc = 0 ] && grep -q '^PASS' $d/out
}

# --cgroup-root, as CRIU's: checkpoint names the base its groups are saved
# below (the root process's group or one above it), restart puts that
# base elsewhere, the groups below it moved along.  A process in
# top/a/b, saved below top/a, comes back in top/c/b; saved with no base
# (its own group is the base), it comes back in top/d.  A base it is
# not below is refused, and it runs on.
test_cgroup_root() {
	local d=$WORK/cgroot cg= ctrl top dir rpid rc=0 rel
	for dir in /sys/fs/cgroup/freezer /sys/fs/cgroup/pids; do
		[ -d $dir ] && mkdir $dir/ckpt-test.root.$$ 2>/dev/null && { cg=$dir; break; }
	done
	[ -n "$cg" ] || { note "no writable v1 hierarchy"; return 1; }
	ctrl=${cg##*/}
	rel=/ckpt-test.root.$$
	top=$cg$rel
	mkdir -p $top/a/b/sub $top/a/sib $top/x
	start_holder plain $d || { rmdir $top/a/b $top/a $top/x $top; return 1; }
	echo $pid > $top/a/b/cgroup.procs || rc=1
	step "refused base"
	ckpt checkpoint --kill --cgroup-root $ctrl:$rel/x -o $d/img $pid 2> $d/err
	[ $? = 1 ] && grep -q "cgroup-root $rel/x: pid $pid is in cgroup $ctrl:$rel/a/b, not below it" $d/err ||
		{ note "not refused: $(cat $d/err)"; rc=1; }
	kill -0 $pid || rc=1
	step "malformed, or with --no-cgroups"
	ckpt checkpoint --cgroup-root $ctrl:a -o $d/img $pid 2> $d/err
	[ $? = 1 ] && grep -q "want \[CONTROLLER:\]/PATH" $d/err || { note "bad base taken: $(cat $d/err)"; rc=1; }
	step "base a, restarted under c"
	ckpt checkpoint --kill --cgroup-root $ctrl:$rel/a -o $d/img $pid || rc=1
	wait $pid 2>/dev/null
	gone $pid
	# the base names the groups, it does not choose them: the empty one
	# below the process's is saved, its group's sibling is not
	ckpt info $d/img > $d/info
	grep -q "$rel/a/b/sub" $d/info || { note "the empty group below is not saved"; rc=1; }
	grep -q "$rel/a/sib" $d/info && { note "a sibling group is saved"; rc=1; }
	ckpt restart --no-cgroups --cgroup-root $ctrl:$rel/c $d/img 2> $d/err
	[ $? = 125 ] && grep -q "not both" $d/err || { note "--no-cgroups taken with it: $(cat $d/err)"; rc=1; }
	ckpt restart --detach --cgroup-root $ctrl:$rel/c $d/img > $d/rout 2>&1 || rc=1
	grep -q ":$ctrl:$rel/c/b\$" /proc/$pid/cgroup || { note "in $(grep ":$ctrl:" /proc/$pid/cgroup)"; rc=1; }
	[ -d $top/c/b/sub ] || { note "the empty group below did not move along"; rc=1; }
	step "no base, restarted under d"
	checkpoint_kill $d $pid || rc=1
	ckpt restart --detach --cgroup-root $rel/d $d/img > $d/rout 2>&1 || rc=1
	grep -q ":$ctrl:$rel/d\$" /proc/$pid/cgroup || { note "in $(grep ":$ctrl:" /proc/$pid/cgroup)"; rc=1; }
	# where it was in the root, the group made for it has the root's mode
	for dir in pids freezer blkio devices; do
		dir=/sys/fs/cgroup/$dir
		[ $dir = $cg ] || ! grep -q ":${dir##*/}:/\$" /proc/self/cgroup ||
			[ "$(stat -c %a $dir$rel/d)" = 555 ] ||
			{ note "$dir$rel/d made with mode $(stat -c %a $dir$rel/d), not the root's 555"; rc=1; }
	done
	touch $d/go
	for ((i = 0; i < 500; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.01; done
	grep -q '^PASS' $d/out || rc=1
	kill -9 $pid 2>/dev/null
	gone $pid
	# (a root without CTRL moved it in every hierarchy)
	for dir in /sys/fs/cgroup/*$rel /sys/fs/cgroup/*/*$rel; do
		[ -d $dir ] && find $dir -depth -type d -exec rmdir {} + 2>/dev/null
	done
	ls -d /sys/fs/cgroup/*$rel /sys/fs/cgroup/*/*$rel 2>/dev/null && { note "groups left"; rc=1; }
	return $rc
}

# A hierarchy where the process was in the root, restarted by a ckpt in
# another of its groups: restart mounts that hierarchy, not mounted for
# the image's groups, only to put the process back in the root
# (cgroup_restore.c mount_root_only()).
test_cgroup_root_joined() {
	local d=$WORK/cgjoin cg= dir ctrl rel=/ckpt-test.join.$$ rc=0 i
	for dir in /sys/fs/cgroup/pids /sys/fs/cgroup/freezer; do
		grep -q ":${dir##*/}:/\$" /proc/self/cgroup && mkdir $dir$rel 2>/dev/null &&
			{ cg=$dir; break; }
	done
	[ -n "$cg" ] || { note "no writable v1 hierarchy whose root we are in"; return 1; }
	ctrl=${cg##*/}
	start_holder plain $d || { rmdir $cg$rel; return 1; }
	checkpoint_kill $d $pid || rc=1
	step "restarted from $ctrl:$rel"
	[ $rc = 0 ] && ( echo $BASHPID > $cg$rel/cgroup.procs &&
		ckpt restart --detach $d/img ) > $d/rout 2>&1 || { cat $d/rout; rc=1; }
	grep -q ":$ctrl:/\$" /proc/$pid/cgroup ||
		{ note "in $(grep ":$ctrl:" /proc/$pid/cgroup), not in the root"; rc=1; }
	touch $d/go
	for ((i = 0; i < 500; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.01; done
	grep -q '^PASS' $d/out || rc=1
	kill -9 $pid 2>/dev/null
	gone $pid
	rmdir $cg$rel || { note "group left"; rc=1; }
	return $rc
}
