# incr.sh - incremental checkpoints (checkpoint --track-mem, then
# --parent IMG: only the pages written since) and restart of a chain of
# them: tests/aux/dirtier changes its pages between checkpoints and checks
# at the end that every page holds what it last wrote there.
t incr_restart
t incr_chain3
t incr_parent_refused
t incr_parent_not_last
t incr_forged
t incr_migrate

# dirtier in DIR over MIB MiB (RATE MiB/s of random writes): $pid.
start_dirtier() {	# DIR MIB [RATE]
	mkdir -p $1
	$AUX/dirtier $1 $2 ${3:-} > $1/out 2>&1 < /dev/null &
	pid=$!
	wait_for $1/out READY 20
}

# dirtier's step N, done.
dirty() {	# DIR N
	touch $1/step$2
	wait_for $1/out "DONE $2" 10
}

# Restart DIR/IMG, let it check its pages: PASS.
restart_check() {	# DIR IMG
	local rpid
	rpid=$(ckpt restart --detach $1/$2) || return 1
	touch $1/go
	gone $rpid || return 1
	grep -q '^PASS' $1/out || { cat $1/out; return 1; }
}

# A full checkpoint that starts tracking, pages changed, an incremental
# one: it is much smaller, names its parent, and its restart has both
# the new pages and the unchanged ones.
test_incr_restart() {
	local d=$WORK/incr a b
	start_dirtier $d 16 || return 1
	ckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	# ckpt's userfaultfd is not the process's: not saved, refused or shown
	ckpt info $d/a.img | grep -q 'userfaultfd' && return 1
	dirty $d 1 || return 1
	ckpt checkpoint --kill --parent $d/a.img -o $d/b.img $pid || return 1
	wait $pid 2>/dev/null
	a=$(stat -c %s $d/a.img) b=$(stat -c %s $d/b.img)
	note "full $a bytes, incremental $b"
	[ $((b * 4)) -lt $a ] || return 1
	ckpt info $d/b.img | grep -q '^PARENT .*path=a.img' || return 1
	ckpt info $d/b.img | grep -q '^PAGES_PARENT' || return 1
	restart_check $d b.img
}

# Four images: the last restarts with pages of all of them; a new area
# mapped after the first, and pages dropped (MADV_DONTNEED), come back as
# they are.  The images name their parents relative to themselves: moved
# elsewhere together, the chain holds.
test_incr_chain3() {
	local d=$WORK/chain3 i rpid
	start_dirtier $d 8 || return 1
	i=$d/i
	mkdir -p $i/sub
	ckpt checkpoint --track-mem -o $i/a.img $pid || return 1
	dirty $d 1 || return 1
	ckpt checkpoint --parent $i/a.img -o $i/sub/b.img $pid || return 1
	dirty $d 2 || return 1
	ckpt checkpoint --parent $i/sub/b.img -o $i/c.img $pid || return 1
	dirty $d 3 || return 1
	ckpt checkpoint --kill --parent $i/c.img -o $i/d.img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	ckpt info $i/sub/b.img | grep -q '^PARENT .*path=\.\./a.img ' || return 1
	ckpt info $i/c.img | grep -q '^PARENT .*path=sub/b.img ' || return 1
	ckpt info $i/d.img | grep -q '^PARENT .*path=c.img ' || return 1
	mv $i $d/moved
	rpid=$(ckpt restart --detach $d/moved/d.img) || return 1
	touch $d/go
	gone $rpid || return 1
	grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

# restart of DIR/IMG fails (125) with one line holding PATTERN, and no
# process comes of it.
refused() {	# DIR IMG PATTERN
	local rc=0
	ckpt restart --detach $1/$2 > $1/rst.out 2> $1/rst.err || rc=$?
	[ $rc = 125 ] || { echo "restart exit $rc"; cat $1/rst.err; return 1; }
	[ $(wc -l < $1/rst.err) = 1 ] || { cat $1/rst.err; return 1; }
	grep -q "$3" $1/rst.err || { cat $1/rst.err; return 1; }
	! pgrep -f "dirtier $1 " > /dev/null
}

# The parent missing, corrupt, or another image in its place: refused.
test_incr_parent_refused() {
	local d=$WORK/refused e=$WORK/other rc
	start_dirtier $d 4 || return 1
	ckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	dirty $d 1 || return 1
	ckpt checkpoint --kill --parent $d/a.img -o $d/b.img $pid || return 1
	wait $pid 2>/dev/null
	start_dirtier $e 4 || return 1
	ckpt checkpoint --kill -o $e/x.img $pid || return 1
	wait $pid 2>/dev/null
	cp $d/a.img $d/a.keep
	rm $d/a.img
	refused $d b.img "parent image .*a.img of .*b.img: No such file" || return 1
	cp $e/x.img $d/a.img	# another image
	refused $d b.img "is not the one .*b.img was made from" || return 1
	cp $d/a.keep $d/a.img	# a byte of its page data changed
	printf '\x55' | dd of=$d/a.img bs=1 seek=$(($(stat -c %s $d/a.img) / 2)) conv=notrunc 2> /dev/null
	refused $d b.img "checksum\\|crc\\|corrupt" || return 1
	cp $d/a.keep $d/a.img
	# from a pipe there is no directory to find the parent in
	rc=0
	cat $d/b.img | ckpt restart --detach - > /dev/null 2> $d/pipe.err || rc=$?
	[ $rc = 125 ] && [ $(wc -l < $d/pipe.err) = 1 ] && grep -q "pipe" $d/pipe.err ||
		{ echo "restart - exit $rc"; cat $d/pipe.err; return 1; }
	restart_check $d b.img
}

# --parent names the last tracked checkpoint, not an older one: its pages
# written between the two would be lost.
test_incr_parent_not_last() {
	local d=$WORK/notlast rc=0
	start_dirtier $d 4 || return 1
	ckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	ckpt checkpoint --parent $d/a.img -o $d/b.img $pid || return 1
	ckpt checkpoint --parent $d/a.img -o $d/c.img $pid 2> $d/err || rc=$?
	cat $d/err
	[ $rc = 1 ] && grep -q "not the last checkpoint" $d/err || return 1
	# an image that tracks nothing is no parent
	ckpt checkpoint -o $d/plain.img $pid || return 1
	ckpt checkpoint --parent $d/plain.img -o $d/c.img $pid 2> $d/err && return 1
	grep -q "tracks no memory" $d/err || return 1
	ckpt checkpoint --kill --parent $d/b.img -o $d/c.img $pid || return 1
	wait $pid 2>/dev/null
	restart_check $d c.img
}

# An incremental image forged with valid checksums: a page its parent
# lacks, a second PARENT, a PARENT naming an absolute path elsewhere.
test_incr_forged() {
	local d=$WORK/forged f="$PYTHON $ROOT/tests/forge.py" addr
	start_dirtier $d 4 || return 1
	ckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	dirty $d 1 || return 1
	ckpt checkpoint --kill --parent $d/a.img -o $d/b.img $pid || return 1
	wait $pid 2>/dev/null
	addr=$($f get $d/b.img -r 'PAGES_PARENT#-1' vma_start) || return 1
	# its run moved onto the area's first page: the PAGES of the same
	# area have it too, or the parent lacks it
	$f edit $d/b.img $d/f1.img -r 'PAGES_PARENT#-1' --set run0_addr=$((addr + 0x1000000 - 0x1000)) \
		--set run0_npages=1 --set npages=1 --set nr_runs=1 --resize 40 || return 1
	refused $d f1.img "not in its parent image\|out of its area\|saved twice" || return 1
	$f edit $d/b.img $d/f5.img -r 'PAGES_PARENT#0' --add npages=1 || return 1
	refused $d f5.img "PAGES_PARENT record .*: bad header" || return 1
	$f edit $d/b.img $d/f6.img -r 'PAGES_PARENT#0' --set run0_addr=0x1001 || return 1
	refused $d f6.img "bad PAGES_PARENT record" || return 1
	$f dup $d/b.img $d/f2.img -r PARENT || return 1
	refused $d f2.img "bad PARENT" || return 1
	$f edit $d/b.img $d/f3.img -r HEAD --set flags=1 || return 1
	refused $d f3.img "PARENT record" || return 1
	$f edit $d/a.img $d/f4.img -r MM_TRACK --set ino=0 || return 1
	refused $d f4.img "MM_TRACK record" || return 1
	# restart's own record in a file; a run off its page (a hang once)
	$f sethdr $d/b.img $d/f7.img -r 'PAGES_PARENT#0' --type 298 || return 1
	refused $d f7.img "PAGES_AT in an image file" || return 1
	# the parent a FIFO where the image says it is (a hang once)
	mkdir -p $d/fifo && cp $d/b.img $d/fifo/ && mkfifo $d/fifo/a.img || return 1
	refused $d fifo/b.img "not a regular file" || return 1
	restart_check $d b.img
}

# bench/migrate.sh, small: an iterative live migration of a process that
# writes all along; it comes back whole.
test_incr_migrate() {
	local d=$WORK/migrate
	CKPT=$CKPT MIGRATE_DIR=$d bash $ROOT/bench/migrate.sh 32 2 2 > $d.out 2>&1 ||
		{ cat $d.out; return 1; }
	cat $d.out | sed 's/^/    /'
	grep -q '^downtime' $d.out
}
