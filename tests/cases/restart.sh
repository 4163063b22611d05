# restart.sh - restarts that must fail cleanly (bad pages, files changed,
# locks taken, FIFOs open elsewhere, a session leader's pid taken, an
# oom_score_adj below restart's own, the image changed under it) and
# one that must not.  orphan_session sets ns_last_pid, which every fork
# of the machine uses: it runs alone.
t restart_bad_pages
t restart_check_busy      group alone
t open_file_changed
t lock_conflict            group pidns
t fifo_open_elsewhere      group pidns
t orphan_session           group alone
t oom_score_refused
t restart_unprivileged     needs userns
t kill_frees_pids
t image_changed_midway

# A big image's page checksums are checked while the tree is built
# (pageverify.c), each cell of it by whoever comes first: the placer, as
# it copies it (from the front), or the checker child (from the back).
# A flipped byte near either end of its page data still fails the
# restart with one line, the process built meanwhile never runs (it
# would print, its GO file is there) and is gone; the good image then
# restarts, its pages checked by both.
test_restart_bad_pages() {
	local d=$WORK/badpages pid size at
	start_holder plain $d 128 || return 1
	checkpoint_kill $d $pid || return 1
	touch $d/go
	cp $d/img $d/good
	size=$(stat -c %s $d/img)
	for at in $((size / 8)) $((size * 7 / 8)); do
		cp $d/good $d/img
		$PYTHON -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x20]))' $d/img $at || return 1
		refused_restart $d $pid "record PAGES at offset [0-9]*: checksum mismatch (corrupt image)" ||
			{ echo "byte $at of $size flipped"; return 1; }
		[ "$(grep -vc READY $d/out)" = 0 ] || { echo "the process ran:"; cat $d/out; return 1; }
	done
	cp $d/good $d/img
	# the checker started late (the test build's hook): how fast it is
	# against the placer is the machine's; that the placer checks what
	# it places is ckpt's
	CKPT_TEST_PV_DELAY_MS=300 ckpt restart -v $d/img > $d/rout 2>&1 &&
		grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
	grep 'pages checked' $d/rout | sed 's/^/    /'
	grep -q 'pages checked: [0-9.]*[1-9][0-9.]* MB as they were placed' $d/rout ||
		{ echo "no page checked as it was placed"; return 1; }
}

# The page checker child runs in the idle class while restart builds
# (pageverify.c, idle.c) and is made a plain process again once restart
# waits for it.  With every CPU kept busy by plain processes, the check
# of 512 MiB of pages that the restored process reads itself (mlocked:
# not placed by ckpt, so all of them are the checker's) ends within its
# share of a CPU, not the idle class's 3/1027 of one (30 s here
# without the boost; a second or two with it).
test_restart_check_busy() {
	local d=$WORK/checkbusy pid hogs=() i rc=0
	start_holder mlock $d 512 || return 1
	checkpoint_kill $d $pid || return 1
	touch $d/go
	for ((i = 0; i < $(nproc); i++)); do
		(while :; do :; done) &
		hogs+=($!)
	done
	ckpt_t 20 restart -v $d/img > $d/rout 2>&1 || rc=$?
	kill "${hogs[@]}"
	wait "${hogs[@]}" 2>/dev/null
	[ $rc = 0 ] && grep -q '^PASS' $d/out || { tail -5 $d/rout; cat $d/out; return 1; }
	grep 'pages checked' $d/rout | sed 's/^/    /'
	grep -q 'pages checked: .* [1-9][0-9][0-9]\.[0-9] MB by the checker' $d/rout ||
		{ echo "the checker did not check the locked pages"; return 1; }
}

# An oom_score_adj below restart's own cannot be set without
# CAP_SYS_RESOURCE: refused in one line naming pid and value, before any
# process exists; restarted from where it may be, the value is back.
test_oom_score_refused() {
	local d=$WORK/oomrefused pid
	mkdir -p $d
	$PROGS/oom_score $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	checkpoint_kill $d $pid || return 1
	(echo 900 > /proc/self/oom_score_adj &&
	 refused_restart $d $pid "pid $pid: cannot restore oom_score_adj 537: below ckpt's own 900") ||
		return 1
	touch $d/go
	ckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}
# Open files must still be there at restart, and one the process only
# reads must be unchanged; one it writes to may have changed (see reg.c).
test_open_file_changed() {
	local d=$WORK/filechanged pid
	mkdir -p $d
	echo hello > $d/ro
	start_holder files $d || return 1
	checkpoint_kill $d $pid || return 1
	cp -p $d/ro $d/ro.orig
	echo more >> $d/ro
	refused_restart $d $pid "open file $d/ro changed since the checkpoint" || return 1
	cp -p $d/ro.orig $d/ro
	touch -d '2001-01-01' $d/ro
	refused_restart $d $pid "open file $d/ro changed" || return 1
	cp -p $d/ro.orig $d/ro
	rm $d/ro
	refused_restart $d $pid "open file $d/ro: No such file" || return 1
	cp -p $d/ro.orig $d/ro
	mv $d/rw $d/rw.orig
	mkdir $d/rw
	refused_restart $d $pid "open file $d/rw is no longer the same kind" || return 1
	rmdir $d/rw
	mv $d/rw.orig $d/rw
	echo "written by someone" >> $d/rw
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img && grep -q '^PASS' $d/out
}

# Locks the process held are taken again at restart; one taken meanwhile
# by another process (a POSIX lock, a flock, or the original's own locks
# when a copy is restarted beside it) fails the restart naming the file.
test_lock_conflict() {
	local d=$WORK/lockconflict pid other
	start_holder lock $d || return 1
	ckpt checkpoint -o $d/img.live $pid || return 1
	ckpt_t 20 restart --pidns $d/img.live > $d/rout 2> $d/err
	local rc=$?
	note "beside the original: $(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "$d/lock is locked by another process" $d/err || return 1
	checkpoint_kill $d $pid || return 1
	$PYTHON -c 'import fcntl, sys, time
f = open(sys.argv[1], "r+"); fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 15)
print("LOCKED", flush=True); time.sleep(100)' $d/lock > $d/py.out &
	other=$!
	wait_for $d/py.out LOCKED || return 1
	refused_restart $d $pid "$d/lock is locked by another process (pid $other)" || return 1
	kill $other; wait $other 2>/dev/null
	flock -o $d/lock sleep 100 &
	other=$!
	sleep 0.2
	refused_restart $d $pid "$d/lock is locked by another process: cannot take its flock" || return 1
	kill $other; wait $other 2>/dev/null
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img && grep -q '^PASS' $d/out
}

# A FIFO's data is put back once: a FIFO that holds data at restart is
# still open elsewhere (here the original, beside which a copy is
# restarted), and restart refuses it rather than doubling the data.
test_fifo_open_elsewhere() {
	local d=$WORK/fifoelsewhere pid
	start_holder fifo $d || return 1
	ckpt checkpoint -o $d/img $pid || return 1
	ckpt_t 20 restart --pidns $d/img > $d/rout 2> $d/err
	local rc=$?
	note "$(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "FIFO $d/fifo already holds 4 bytes" $d/err || return 1
	kill -9 $pid; wait $pid 2>/dev/null
	gone $pid || return 1
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img || return 1
	grep -q '^PASS' $d/out
}

# A process left in a session whose leader has exited comes back in it,
# with its parent (a stand-in leader forks it with CLONE_PARENT).  And a
# failure once the processes exist (the stand-in's pid taken by another
# process) removes every one of them.
test_orphan_session() {
	local d=$WORK/orphansession pid kid sid rpid
	start_holder orphansession $d || return 1
	kid=$(cat /proc/$pid/task/*/children | tr -d " ")
	sid=$(awk '{print $6}' /proc/$kid/stat)
	[ -n "$kid" ] && [ "$sid" != "$(awk '{print $6}' /proc/$pid/stat)" ] || return 1
	checkpoint_kill $d $pid || return 1
	gone $kid || return 1
	sleep 2	# init reaps the orphaned grandchild
	ckpt_bg restart $d/img &
	rpid=$!
	for ((i = 0; i < 300; i++)); do
		[ -e /proc/$kid/stat ] && break
		sleep 0.01
	done
	note "restored $kid: $(awk '{print "ppid",$4,"pgrp",$5,"sid",$6}' /proc/$kid/stat)"
	[ "$(awk '{print $4, $6}' /proc/$kid/stat)" = "$pid $sid" ] || return 1
	touch $d/go
	wait $rpid || return 1
	gone $kid || return 1
	sleep 2
	# now with the session leader's pid in use: restart fails part-way
	rm $d/go
	local hold last
	last=$(cat /proc/sys/kernel/ns_last_pid)
	for ((i = 0; i < 50; i++)); do
		echo $((sid - 1)) > /proc/sys/kernel/ns_last_pid
		sleep 100 &
		hold=$!
		[ $hold = $sid ] && break
		kill $hold
	done
	echo $last > /proc/sys/kernel/ns_last_pid	# new pids far from the tree's
	# (not a pass: the failing half did not run)
	[ "$hold" = $sid ] || { echo "could not take pid $sid, 50 times: other processes took it first"; return 1; }
	ckpt restart $d/img 2> $d/err
	local rc=$?
	kill $hold; wait $hold 2>/dev/null
	note "with pid $sid taken: $(cat $d/err)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $sid is in use" $d/err || return 1
	for p in $pid $kid; do
		! kill -0 $p 2>/dev/null || { echo "pid $p left behind"; return 1; }
	done
}

# An ordinary user restarting root's image gains nothing: refused with
# exit 125 and one line naming what it lacks (its credentials, with or
# without --no-cgroups: src/kinds/privcheck.c), before any process of the
# image exists; root then restarts the same image.
test_restart_unprivileged() {
	local d=$WORK/unpriv err rc opt
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	chmod 755 $d && chmod 644 $d/img
	for opt in "" --no-cgroups; do
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			timeout 20 "$CKPT" restart $opt $d/img > $d/rout 2> $d/err < /dev/null
		rc=$?
		err=$(grep -v "warning" $d/err)
		note "$opt: $err"
		[ $rc = 125 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || return 1
		printf '%s' "$err" | grep -q "pid $pid: its real uid 0 is not yours" || return 1
		sanitizer_clean $d/err || return 1
		! kill -0 $pid 2>/dev/null || { note "pid $pid exists"; return 1; }
	done
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out
}

# checkpoint --kill leaves no zombie of the tree's behind: each killed
# parent reaps its children (and the zombies the image holds) before it
# dies, so that a restart has their pids at once.  The tree runs under a
# child subreaper that reaps only the root, as init here reaps orphans
# only every second or two: without that reaping its children would be
# the subreaper's zombies for good, and the restart would wait for them.
descendants() {	# PID: every descendant's pid, zombies too
	local c
	for c in $(pgrep -P $1); do echo $c; descendants $c; done
}

# seccomp_tree's parent runs under a filter refusing wait4: the reaping
# must pass it by, its filters suspended.
test_kill_frees_pids() {
	kill_frees "$PROGS/tree" 11 && kill_frees "$PROGS/seccomp_tree" 2
}

kill_frees() {	# PROG N: N processes below the root
	local d=$WORK/killfree-${1##*/} root pids p rpid rc sub
	mkdir -p $d && chmod 755 $d
	"$PYTHON" - "$1" $d > $d/sub.out 2>&1 <<'PY' &
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)		# PR_SET_CHILD_SUBREAPER
prog, d = sys.argv[1], sys.argv[2]
pid = os.fork()
if pid == 0:
    os.environ['TP_TMPDIR'] = d
    fd = os.open(d + '/out', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execv(prog, [prog, d + '/go'])
print(pid, flush=True)
os.waitpid(pid, 0)
time.sleep(1000)
PY
	sub=$!
	wait_for $d/out READY || { kill -9 $sub; return 1; }
	root=$(cat $d/sub.out)
	pids=$(descendants $root)
	note "${1##*/}: root $root, the others $(echo $pids)"
	[ $(echo $pids | wc -w) = $2 ] || { kill -9 $sub $root; return 1; }
	ckpt checkpoint --kill -o $d/img $root || { kill -9 $sub $root; return 1; }
	rc=0
	for p in $pids; do
		[ -e /proc/$p ] && { echo "pid $p still there: $(cat /proc/$p/stat)"; rc=1; }
	done
	for ((i = 0; i < 300; i++)); do [ -e /proc/$root ] || break; sleep 0.01; done
	[ $rc = 0 ] || { kill -9 $sub; return 1; }
	ckpt_bg restart $d/img > $d/restart.out 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		kill -0 $root 2>/dev/null && break
		sleep 0.01
	done
	touch $d/go
	wait $rpid
	rc=$?
	kill -9 $sub
	cat $d/out $d/restart.out
	sanitizer_clean $d/restart.out || return 1
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out
}

# A thread's XSTATE is read from the image when it was checked and again
# when it is set (kind_ops.reread: restart keeps only its place).  The
# image changed in between (restart stopped right after it checked the
# image; a record rewritten in place, its checksum made right): the
# restart fails with one line naming the record, and leaves no process.
# Without the second read's check it would set what it never checked.
test_image_changed_midway() {
	local d=$WORK/changed pid rpid bv st i rc
	HOLDER_BIN=$AUX/holder start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	touch $d/go
	bv=$("$PYTHON" "$ROOT/tests/forge.py" get $d/img -r "XSTATE#0" xstate_bv) || return 1
	# x87 state's bit: set or clear, the record is as sound as before
	"$PYTHON" "$ROOT/tests/forge.py" edit $d/img $d/changed -r "XSTATE#0" \
		--set xstate_bv=$((bv ^ 1)) || return 1
	step "restart, stopped once the image is checked"
	CKPT_TEST_POINTS=1 CKPT_TEST_KILL_AT=1 CKPT_TEST_KILL_SIG=19 \
		"$CKPT" restart $d/img > $d/rout 2> $d/err &
	rpid=$!
	for ((i = 0; i < 500; i++)); do
		st=$(awk '{print $3}' /proc/$rpid/stat 2>/dev/null)
		[ "$st" = T ] && break
		sleep 0.01
	done
	grep -q "^testpoint 1 image checked$" $d/err ||
		{ echo "restart did not stop where the image is checked:"; cat $d/err; kill -9 $rpid; return 1; }
	cat $d/changed > $d/img		# the same file, changed in place
	kill -CONT $rpid
	wait $rpid
	rc=$?
	grep -v "^testpoint \|^failpoint \|killed at point" $d/err > $d/err1
	note "exit $rc: $(cat $d/err1)"
	[ $rc = 125 ] && [ "$(wc -l < $d/err1)" = 1 ] &&
		grep -q "record XSTATE at image offset [0-9]*: changed since the image was checked" $d/err1 ||
		return 1
	sanitizer_clean $d/err && ! kill -0 $pid 2>/dev/null && [ "$(grep -vc READY $d/out)" = 0 ]
}
