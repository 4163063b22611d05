# lazy.sh - restart --lazy (src/lazy.c, src/kinds/mm_lazy.c): the process
# runs before its pages are in; they come on touch and from the loader.
# The test build's CKPT_TEST_LAZY_DELAY_MS slows the loader down so that
# the process touches pages (and forks) before the loader gets to them.
t lazy_content
t lazy_fork
t lazy_image_truncated
t lazy_image_removed
t lazy_image_corrupt
t lazy_state
t lazy_loader_ends
t lazy_refused_tree

# lazy_mem (tests/progs) of MIB MiB, checkpointed into DIR/img: sets $pid.
lazy_start() {	# DIR MIB [fork]
	mkdir -p $1
	"$PROGS/lazy_mem" $1/go $2 ${3:-} > $1/out 2>&1 < /dev/null &
	pid=$!
	wait_for $1/out READY 30 || return 1
	checkpoint_kill $1 $pid
}

# restart --lazy --detach of DIR/img with the loader slowed to DELAY ms a
# step: sets $loader (its pid, from -v).
lazy_restart() {	# DIR DELAY
	CKPT_TEST_LAZY_DELAY_MS=$2 ckpt restart --lazy --detach -v $1/img \
		> $1/rpid 2> $1/err < /dev/null || { cat $1/err; return 1; }
	loader=$(sed -n 's/.*left to the loader, pid \([0-9]*\).*/\1/p' $1/err)
	[ -n "$loader" ] || { note "no loader"; return 1; }
}

# The loader is done and gone, with the process's own fds as they were
# (no userfaultfd in them at any time).
lazy_clean() {	# DIR
	gone $loader || { note "loader $loader still there"; return 1; }
	sanitizer_clean $1/err
}

# 96 MiB, every page checked by the process itself: those it touches
# first come on touch (counted by the loader), the rest from the loader,
# the untouched ones as zeros.
test_lazy_content() {
	local d=$WORK/lazy-content fds n
	lazy_start $d 96 || return 1
	lazy_restart $d 4 || return 1
	fds=$(ls -l /proc/$pid/fd 2>&1)
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	cat $d/out
	gone $pid
	echo "$fds" | grep -q userfaultfd && { note "uffd left in the process: $fds"; return 1; }
	grep -q '^PASS' $d/out || return 1
	grep 'loader done' $d/err
	n=$(sed -n 's/.*: \([0-9]*\) pages on touch.*/\1/p' $d/err)
	[ "${n:-0}" -gt 0 ] || { note "no page came on touch"; return 1; }
	lazy_clean $d
}

# A fork while the loader is still at work: the child's missing pages
# are loaded into it too (none read as zero), the parent's as well.
test_lazy_fork() {
	local d=$WORK/lazy-fork
	lazy_start $d 64 fork || return 1
	lazy_restart $d 15 || return 1
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	cat $d/out
	gone $pid
	grep -q '^PASS' $d/out && ! grep -q FAIL $d/out || return 1
	grep 'loader done' $d/err
	lazy_clean $d
}

# The image cut short under the loader: the process is killed with one
# error naming it and the page, never run on with zeros; the loader goes.
test_lazy_image_truncated() {
	local d=$WORK/lazy-trunc
	lazy_start $d 64 || return 1
	lazy_restart $d 20 || return 1
	truncate -s 65536 $d/img
	touch $d/go
	gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
	cat $d/out
	grep -v '^ckpt: ' $d/err | tail -3
	grep -q 'PASS\|FAIL' $d/out && return 1
	grep -q "lazy restart: pid $pid: the page at 0x[0-9a-f]* (image offset [0-9]*) cannot be read from the image, so pid $pid is killed: No data available" $d/err ||
		return 1
	lazy_clean $d
}

# The image removed under the loader: it reads on from what it holds open
# (mapped), every page as it was.
test_lazy_image_removed() {
	local d=$WORK/lazy-rm
	lazy_start $d 64 || return 1
	lazy_restart $d 10 || return 1
	rm $d/img
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	cat $d/out
	gone $pid
	grep -q '^PASS' $d/out || return 1
	grep 'loader done' $d/err || return 1
	lazy_clean $d
}

# A byte flipped deep in the page data: the process runs at once (its
# pages are not read first), but the loader's check of the image's
# checksums kills it with one error naming the record.
test_lazy_image_corrupt() {
	local d=$WORK/lazy-corrupt size
	lazy_start $d 64 || return 1
	size=$(stat -c %s $d/img)
	$PYTHON -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x20]))' $d/img $((size * 3 / 4)) || return 1
	lazy_restart $d 20 || return 1
	gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
	grep -v '^ckpt: timing' $d/err | tail -2
	grep -q "lazy restart: pid $pid: record PAGES at offset [0-9]*: checksum mismatch (corrupt image), so pid $pid is killed" $d/err ||
		return 1
	lazy_clean $d
}

# State programs restarted --lazy, each checking itself: anonymous
# areas of every kind (sparse, guard, growsdown, dontfork, wipeonfork;
# the lazy ones and those loaded whole), 4 threads, shared anonymous
# memory (loaded whole), private file areas with their written pages.
test_lazy_state() {
	local p d
	for p in mem_anon threads shm_devzero mem_file; do
		d=$WORK/lazy-state-$p
		mkdir -p $d
		"$PROGS/$p" $d/go > $d/out 2>&1 < /dev/null &
		pid=$!
		wait_for $d/out READY 30 || return 1
		checkpoint_kill $d $pid || return 1
		lazy_restart $d 0 || return 1
		touch $d/go
		wait_for $d/out 'PASS\|FAIL' 60
		gone $pid
		grep -q '^PASS' $d/out || { note "$p: $(cat $d/out)"; return 1; }
		lazy_clean $d || return 1
	done
}

# The process killed before its pages are all in: the loader (slowed to
# take 6 s) ends with it, at once, not when its work would be done.
test_lazy_loader_ends() {
	local d=$WORK/lazy-ends
	lazy_start $d 64 || return 1
	lazy_restart $d 200 || return 1
	kill -0 $loader || { note "no loader at work"; return 1; }
	kill -9 $pid
	gone $pid || return 1
	lazy_clean $d || return 1
	grep -q 'loader done' $d/err && return 1
	return 0
}

# Two processes: refused before anything is made, naming the root.
test_lazy_refused_tree() {
	local d=$WORK/lazy-tree
	mkdir -p $d
	TP_TMPDIR=$d "$PROGS/tree" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 || return 1
	checkpoint_kill $d $pid || return 1
	ckpt_t 20 restart --lazy $d/img > $d/rout 2> $d/err
	local rc=$?
	cat $d/err
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "^ckpt: .*--lazy: the image holds [0-9]* processes (pid $pid and its children)" $d/err ||
		return 1
	sanitizer_clean $d/err && ! kill -0 $pid 2>/dev/null
}
