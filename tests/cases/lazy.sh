# lazy.sh - restart --lazy (src/lazy.c, src/kinds/mm_lazy.c): the process
# runs before its pages are in; they come on touch and from the loader.
# The test build's CKPT_TEST_LAZY_DELAY_MS slows the loader down so that
# the process touches pages (and forks) before the loader gets to them.
t lazy_content
t lazy_fork
t lazy_split
t lazy_image_truncated
t lazy_image_removed
t lazy_image_corrupt
t lazy_state
t lazy_churn
t lazy_churn_one_thread
t lazy_shm
t lazy_shm_churn
t lazy_shm_copier
t lazy_peeked
t lazy_race
t lazy_copy_race
t lazy_loader_ends
t lazy_tree
t lazy_tree_corrupt
t lazy_ps_refused_tree
t lazy_ps_netns
t lazy_ps_server_killed
t lazy_ps_forged
t lazy_ps_wrong_key
t lazy_ps_bad_request
t lazy_ps_state
t lazy_ps_copy_race
t lazy_ps_forged_block
t lazy_ps_images

# lazy_mem (tests/progs) of MIB MiB, checkpointed into DIR/img: sets $pid.
lazy_start() {	# DIR MIB [fork]   (LAZY_KEY=FILE: checkpoint --key FILE)
	mkdir -p $1
	"$PROGS/lazy_mem" $1/go $2 ${3:-} > $1/out 2>&1 < /dev/null &
	pid=$!
	wait_for $1/out READY 30 || return 1
	checkpoint_kill $1 $pid ${LAZY_KEY:+--key $LAZY_KEY}
}

# restart --lazy --detach of DIR/img with the loader slowed to DELAY ms a
# step: sets $loader (its pid, from -v).
lazy_restart() {	# DIR DELAY
	CKPT_TEST_LAZY_DELAY_MS=$2 ckpt restart --lazy --detach -v $1/img \
		> $1/rpid 2> $1/err < /dev/null || { cat $1/err; return 1; }
	loader=$(sed -n 's/.*left to the loader, pid \([0-9]*\).*/\1/p' $1/err)
	[ -n "$loader" ] || { note "no loader"; return 1; }
}

# GOFILE made: the process checks its memory and ends with PASS, its
# loaders end (their last lines come as they do), nothing is left.
lazy_pass() {	# DIR
	touch $1/go
	wait_for $1/out 'PASS\|FAIL' 60
	grep -v READY $1/out
	gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
	lazy_ended
	grep -q '^PASS' $1/out && ! grep -q FAIL $1/out || return 1
	grep 'loader done' $1/err
	lazy_clean $1
}

# The loaders ($loaders, else $loader) gone: their last lines are in.
lazy_ended() {
	local l
	for l in ${loaders:-$loader}; do
		gone $l || { note "loader $l still there"; return 1; }
	done
}
# The loader is done and gone, with the process's own fds as they were
# (no userfaultfd in them at any time).
lazy_clean() {	# DIR
	gone $loader || { note "loader $loader still there"; return 1; }
	sanitizer_clean $1/err
}

# 96 MiB, every page checked by the process itself: those it touches
# first come on touch (counted by the loader), the rest from the loader,
# the untouched ones as zeros; the process reading through, a fault
# brings more and more of what lies ahead.
test_lazy_content() {
	local d=$WORK/lazy-content fds n f
	lazy_start $d 96 || return 1
	lazy_restart $d 4 || return 1
	fds=$(ls -l /proc/$pid/fd 2>&1)
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	cat $d/out
	gone $pid
	lazy_ended	# (its loaders' last lines come as they end)
	echo "$fds" | grep -q userfaultfd && { note "uffd left in the process: $fds"; return 1; }
	grep -q '^PASS' $d/out || return 1
	grep 'loader done' $d/err
	n=$(sed -n 's/.*: \([0-9]*\) pages on touch.*/\1/p' $d/err)
	[ "${n:-0}" -gt 0 ] || { note "no page came on touch"; return 1; }
	# read through from the bottom: each fault brings more than the
	# last (runs of 15 pages here: 15 a fault at most, one by one)
	f=$(sed -n 's/.* pages on touch (\([0-9]*\) faults).*/\1/p' $d/err)
	[ "${f:-0}" -gt 0 ] && [ $((n / f)) -ge 64 ] ||
		{ note "$n pages on touch in ${f:-?} faults: not read ahead"; return 1; }
	lazy_clean $d
}

# A fault and a MADV_DONTNEED of pages near it (within what the fault
# brings), read by the loader in one read: the drop must be applied
# before the fault is served, or the dropped pages come back with their
# old contents (the kernel hands out faults before events, and an event
# once read lets the process's madvise() zap the pages at once).  The
# test build's loader waits before and after each read so that the two
# come together and the zap is done before it goes on.
test_lazy_race() {
	local d=$WORK/lazy-race
	mkdir -p $d
	"$PROGS/lazy_race" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 && checkpoint_kill $d $pid || return 1
	CKPT_TEST_LAZY_READ_DELAY_MS=20 lazy_restart $d 1000 || return 1
	lazy_pass $d
}

# A background step under way while the process drops (MADV_DONTNEED)
# the memory it copies: the loader's first thread reads the drop only
# once no copier's step is under way (src/lazy_copy.c), so that step's
# copy fails (the event is queued) and its pages are dropped from what
# is pending; a drop read beside it let the copy bring them back.  The
# copier waits 50 ms between taking each step and copying it.
test_lazy_copy_race() {
	local d=$WORK/lazy-copy-race
	mkdir -p $d
	"$PROGS/lazy_race" $d/go drop > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 && checkpoint_kill $d $pid || return 1
	CKPT_TEST_LAZY_COPIERS=1 CKPT_TEST_LAZY_COPY_DELAY_MS=50 lazy_restart $d 0 || return 1
	lazy_pass $d
}

# Shared anonymous memory under --lazy: the object of one process is
# left to the loader (src/lazy_shm.c): the process runs with none of its
# pages mapped, each comes in as touched; MADV_DONTNEED (keeps the data)
# and MADV_REMOVE (frees it) after the restart, a write into freed pages,
# a fork, a fork whose parent exits at once, and a second map of the
# object all see the right pages; an object of two processes (tree) is
# served by the first one's loader, the second's maps of it handed to
# that loader.  The loader slowed, so that the process runs while it is
# at work.  With CKPT_TEST_LAZY_SHM_OFF the object is loaded whole
# before the process runs, as are those of a page server's image
# (lazy_peeked).
test_lazy_shm() {
	local d=$WORK/lazy-shm m r loaders
	for m in ${@:-advise fork twice punch orphan tree whole}; do
		step "lazy_shm $m"
		mkdir -p $d/$m
		"$PROGS/lazy_shm" $d/$m/go 16 ${m%whole} > $d/$m/out 2>&1 < /dev/null &
		pid=$!
		wait_for $d/$m/out READY 30 && checkpoint_kill $d/$m $pid || return 1
		if [ $m = whole ]; then
			CKPT_TEST_LAZY_SHM_OFF=1 lazy_restart $d/$m 20 || return 1
		else
			lazy_restart $d/$m 20 || return 1
		fi
		loaders=$(echo $loader)	# (a tree's: one a process)
		lazy_pass $d/$m || return 1
		r=$(sed -n 's/^mapped \([0-9]*\) of \([0-9]*\)$/\1 \2/p' $d/$m/out)
		case $m in
		whole)
			[ "${r% *}" -ge $(( ${r#* } * 15 / 16 )) ] ||
				{ note "$m: mapped $r: not all in before it ran"; return 1; } ;;
		*)
			[ "${r% *}" -lt $(( ${r#* } / 16 )) ] ||
				{ note "$m: mapped $r: loaded before it ran"; return 1; }
			grep -q "and 1 shared memory objects left to the loader" $d/$m/err ||
				{ note "$m: no object left to the loader"; return 1; }
			[ $m != tree ] || grep -q "its maps of pid $pid's shared memory left to that one's loader" $d/$m/err ||
				{ note "tree: the child's maps not left to the parent's loader"; return 1; } ;;
		esac
	done
}

# Shared memory churned from the moment the process runs again, while
# the loader (slowed) is still at work: reads, writes, MADV_DONTNEED and
# MADV_REMOVE, writes into freed pages, moves, second maps, maps kept by
# MREMAP_DONTUNMAP, unmaps, areas split with no event (madvise hints,
# mprotect), grown in place with no event, forks and grandchildren, a
# child's thread, the first thread exiting, four threads at once; every
# page checked against the program's model of the object.  Each seed
# failed before session 26's fixes (a loader retrying a refused
# CONTINUE for ever, pages brought back after MADV_REMOVE, writes lost,
# zeros once the first thread had exited).
test_lazy_shm_churn() {
	local d=$WORK/lazy-shm-churn s
	for s in ${@:-1 6001 4001}; do
		step "lazy_shm_churn seed $s"
		mkdir -p $d/$s
		SHM_CHURN_OPS=0xffff "$PROGS/lazy_shm_churn" $d/$s/go 32 $s > $d/$s/out 2>&1 < /dev/null &
		pid=$!
		wait_for $d/$s/out READY 30 && checkpoint_kill $d/$s $pid &&
			lazy_restart $d/$s 5 && lazy_pass $d/$s || return 1
		grep -q "and 1 shared memory objects left to the loader" $d/$s/err ||
			{ note "seed $s: no object left to the loader"; return 1; }
	done
}

# Shared memory's steps on a copier (src/lazy_copy.c) that waits 30 ms
# between taking a step out of the object's pending set and writing it:
# the first thread serves a fault only once no step is under way (a
# CONTINUE that did not wait mapped the object's page before it was
# written: zeros).
test_lazy_shm_copier() {
	CKPT_TEST_LAZY_COPIERS=1 CKPT_TEST_LAZY_COPY_DELAY_MS=10 test_lazy_shm advise punch &&
		CKPT_TEST_LAZY_COPIERS=1 CKPT_TEST_LAZY_COPY_DELAY_MS=10 test_lazy_shm_churn 1
}

# Pages read by someone else before the areas were registered on the
# loader's userfaultfd (ps reading /proc/PID/cmdline, which is the
# stack's top; the test build's CKPT_TEST_PEEK reads that and a word of
# every 16th page of each lazy area) are the zero page then, and the
# loader's copy would find them in and leave them so: the heap's pages
# read as zeros, the stack's return addresses too (a jump to 0).  They
# are written before the process runs.
test_lazy_peeked() {
	local d=$WORK/lazy-peeked
	lazy_start $d/mem 64 || return 1
	CKPT_TEST_PEEK=1 lazy_restart $d/mem 5 && lazy_pass $d/mem || return 1
	# the same where the kernel has no PAGEMAP_SCAN: the pagemap read
	lazy_start $d/old 64 || return 1
	CKPT_TEST_PEEK=1 CKPT_TEST_PAGEMAP_READ=1 lazy_restart $d/old 5 &&
		lazy_pass $d/old || return 1
	mkdir -p $d/shm
	"$PROGS/lazy_shm" $d/shm/go 16 > $d/shm/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/shm/out READY 30 && checkpoint_kill $d/shm $pid &&
		CKPT_TEST_PEEK=1 lazy_restart $d/shm 20 && lazy_pass $d/shm || return 1
	# from a page server: those pages asked of it
	mkdir -p $d/ps
	"$PROGS/lazy_shm" $d/ps/go 16 > $d/ps/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/ps/out READY 30 && checkpoint_kill $d/ps $pid &&
		ps_start $d/ps "" 127.0.0.1 &&
		CKPT_TEST_PEEK=1 ps_restart $d/ps "" 127.0.0.1 $d/ps/img 0 && lazy_pass $d/ps || return 1
	gone $srv || { note "the server is still there"; return 1; }
}

# A fork while the loader is still at work: the child's missing pages
# are loaded into it too (none read as zero), the parent's as well.
test_lazy_fork() {
	local d=$WORK/lazy-fork
	lazy_start $d 64 fork || return 1
	lazy_restart $d 15 || return 1
	lazy_pass $d
}

# The area cut into many (mprotect) while the loader is at work: a copy
# across two of them is refused whole by the kernel, and must still go
# in, in parts (the loader once took such pages as placed: a touch of one
# looped on its fault, and the rest read as zeros after).
test_lazy_split() {
	local d=$WORK/lazy-split
	lazy_start $d 64 split || return 1
	lazy_restart $d 10 || return 1
	lazy_pass $d
}

# The image cut short under the loader: the process is killed with one
# error naming it and the page, never run on with zeros; the loader goes.
test_lazy_image_truncated() {
	local d=$WORK/lazy-trunc i
	lazy_start $d 64 || return 1
	lazy_restart $d 20 || return 1
	# (once the loader's checker has read it all: a read of the image
	# cut short under it ends the process as well, with its own error)
	for ((i = 0; i < 3000; i++)); do
		pgrep -P $loader > /dev/null || break
		sleep 0.01
	done
	pgrep -P $loader > /dev/null && { note "the checker still runs after 30 s"; return 1; }
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
	lazy_ended	# (its loaders' last lines come as they end)
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

# Memory that keeps moving while the loader's copiers fill it (no delay:
# they run, src/lazy_copy.c): lazy_churn goes on at once after restart
# (mremap, MADV_DONTNEED, forks, checks), racing the copies; every page
# must be where the process moved it, and zero where it dropped it.
test_lazy_churn() {
	local d=$WORK/lazy-churn${1:-}
	mkdir -p $d
	"$PROGS/lazy_churn" $d/go 256 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 || return 1
	sleep 0.2	# (it churns)
	checkpoint_kill $d $pid || return 1
	lazy_restart $d 0 || return 1
	sleep 1
	lazy_pass $d
}

# The same with a loader of one thread, as on a machine of one CPU (no
# copiers: the first thread makes the background steps between polls).
test_lazy_churn_one_thread() {
	CKPT_TEST_LAZY_COPIERS=0 test_lazy_churn -one
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

# The loaders of a restart (one a process): sets $loaders.
lazy_loaders() {	# DIR
	loaders=$(sed -n 's/.*left to the loader, pid \([0-9]*\).*/\1/p' $1/err)
	[ -n "$loaders" ] || { note "no loader"; return 1; }
}
# A tree: the child shares most of its parent's pages copy-on-write, has
# pages of its own in that area and an area of its own.  Each process
# gets a loader; the child's shared pages come from its parent's (the
# fork's userfaultfd).  Every page checked by the processes themselves.
test_lazy_tree() {
	local d=$WORK/lazy-tree l n loaders=
	lazy_start $d 64 tree || return 1
	CKPT_TEST_LAZY_DELAY_MS=10 ckpt restart --lazy --detach -v $d/img \
		> $d/rpid 2> $d/err < /dev/null || { cat $d/err; return 1; }
	lazy_loaders $d || return 1
	[ "$(echo $loaders | wc -w)" = 2 ] || { note "loaders: $loaders"; return 1; }
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	cat $d/out
	gone $pid
	lazy_ended	# (its loaders' last lines come as they end)
	grep -q '^PASS' $d/out && ! grep -q FAIL $d/out || return 1
	grep 'loader done' $d/err
	[ "$(grep -c 'loader done' $d/err)" = 2 ] || { note "not every loader done"; return 1; }
	n=$(sed -n 's/.*: \([0-9]*\) pages on touch.*/\1/p' $d/err | awk '{ n += $1 } END { print n + 0 }')
	[ "$n" -gt 0 ] || { note "no page came on touch"; return 1; }
	for l in $loaders; do
		gone $l || { note "loader $l still there"; return 1; }
	done
	sanitizer_clean $d/err
}
# A byte flipped in the child's own pages: the first loader checks the
# whole image and kills the whole tree, naming the record.
test_lazy_tree_corrupt() {
	local d=$WORK/lazy-tree-corrupt at l loaders=
	lazy_start $d 64 tree || return 1
	# the child's own area: its last PAGES record of 4096 pages
	at=$(ckpt info $d/img | awk '/^TASK/ { n++ } n == 2 && /^PAGES/ && / pages=4096 / {
		for (i = 1; i <= NF; i++) if ($i ~ /^data_offset=/) { sub(/data_offset=/, "", $i); a = $i } }
		END { print a }')
	[ -n "$at" ] || { note "no PAGES record of the child's own area"; return 1; }
	$PYTHON -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x20]))' $d/img $((at + 5000)) || return 1
	# (the check may end before the tree is built: then the restart
	# fails, the half-built tree removed)
	CKPT_TEST_LAZY_DELAY_MS=20 ckpt restart --lazy --detach -v $d/img \
		> $d/rpid 2> $d/err < /dev/null
	lazy_loaders $d || return 1
	gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
	grep -v '^ckpt: timing' $d/err | tail -2
	grep -q '^PASS' $d/out && return 1
	grep -q "lazy restart: pid $pid: record PAGES at offset [0-9]*: checksum mismatch (corrupt image), so pid $pid is killed" $d/err ||
		return 1
	[ -z "$(pgrep -f "lazy_mem $d/go")" ] || { note "a process of the tree runs on"; return 1; }
	for l in $loaders; do
		gone $l || { note "loader $l still there"; return 1; }
	done
	sanitizer_clean $d/err
}
# ---- restart --lazy --page-server (src/pageserver.c) ----

# `ckpt page-server` of DIR/img in the background, in network namespace
# NS if not empty, on ADDR, port 0 (any): sets $srv (timeout's pid; the
# server is its child) and $port.
ps_start() {	# DIR NS ADDR [ARGS...]
	local d=$1 ns=$2 addr=$3
	shift 3
	(exec ${ns:+ip netns exec $ns} timeout -k 5 $RESTART_TIMEOUT "$CKPT" page-server \
		--address $addr --port 0 -v "$@" $d/img > $d/srv 2>&1 < /dev/null) &
	srv=$!
	wait_for $d/srv 'page-server: serving' 10 || { cat $d/srv; return 1; }
	port=$(sed -n 's/.*page-server: serving .* port \([0-9]*\)$/\1/p' $d/srv)
	[ -n "$port" ]
}

# restart --lazy --detach -v through the server at ADDR:$port, in NS if
# not empty, of an image named IMG, with the loader slowed to DELAY ms a
# step: sets $loader; its messages in DIR/err.
ps_restart() {	# DIR NS ADDR IMG DELAY [ARGS...]
	local d=$1 ns=$2 addr=$3 img=$4 delay=$5
	shift 5
	CKPT_TEST_LAZY_DELAY_MS=$delay ${ns:+ip netns exec $ns} timeout -k 5 $RESTART_TIMEOUT \
		"$CKPT" restart --lazy --detach -v --page-server $addr:$port "$@" $img \
		> $d/rpid 2> $d/err < /dev/null || { grep -v timing $d/err; return 1; }
	loader=$(sed -n 's/.*left to the loader, pid \([0-9]*\).*/\1/p' $d/err)
	[ -n "$loader" ] || { note "no loader"; return 1; }
}

# Two network namespaces A and B joined by a veth pair, 10.231.N.1 in A
# and .2 in B (N from our pid: tests run side by side).
ps_netns() {	# A B NET
	ip netns add $1 && ip netns add $2 &&
	ip link add ps$3a type veth peer name ps$3b &&
	ip link set ps$3a netns $1 && ip link set ps$3b netns $2 &&
	ip -n $1 addr add 10.231.$3.1/24 dev ps$3a && ip -n $2 addr add 10.231.$3.2/24 dev ps$3b &&
	ip -n $1 link set ps$3a up && ip -n $2 link set ps$3b up
}

# A process restarted in namespace B from a server in namespace A, both
# proving the key: B holds no copy of the image (its name only), every
# page is checked by the process, the server exits once the loader is
# done, both say how many bytes went over.
test_lazy_ps_netns() {
	local d=$WORK/lazy-ps-netns net=$(($$ % 250)) a=ckptpsA$$ b=ckptpsB$$ rc=0 fds n
	local had_dir=0 had_mount=0
	# ip netns makes /run/netns a mount, once: undone below if ours
	[ -d /run/netns ] && had_dir=1
	mountpoint -q /run/netns && had_mount=1
	mkdir -p $d
	head -c 32 /dev/urandom > $d/key
	LAZY_KEY=$d/key lazy_start $d 64 || return 1
	ps_netns $a $b $net || rc=1
	[ $rc = 0 ] && { ps_start $d $a 10.231.$net.1 --key $d/key || rc=1; }
	[ $rc = 0 ] && { ps_restart $d $b 10.231.$net.1 $d/nothing-here/img 16 --key $d/key || rc=1; }
	if [ $rc = 0 ]; then
		fds=$(ls -l /proc/$pid/fd 2>&1)
		echo "$fds" | grep -q 'socket\|page-server' && { note "the process holds the connection: $fds"; rc=1; }
		touch $d/go
		wait_for $d/out 'PASS\|FAIL' 60
		cat $d/out
		gone $pid
		lazy_ended || rc=1
		grep -q '^PASS' $d/out || rc=1
		# (done, or ended with the process: under load the process can
		# read through and exit before the loader's last step)
		grep 'loader \(done\|ended with the memory it served\).*from the page server' $d/err || rc=1
		grep 'bytes from the page server' $d/err || rc=1
		n=$(sed -n 's/.*: \([0-9]*\) pages on touch.*/\1/p' $d/err)
		[ "${n:-0}" -gt 0 ] || { note "no page came on touch"; rc=1; }
		gone $srv || { note "the server is still there"; rc=1; }
		grep "page-server: 10.231.$net.2 port [0-9]*: loader done: [0-9]* bytes" $d/srv || rc=1
		lazy_clean $d || rc=1
		sanitizer_clean $d/srv || rc=1
	fi
	[ -n "${srv:-}" ] && kill $srv 2>/dev/null
	ip netns del $a 2>/dev/null
	ip netns del $b 2>/dev/null
	if [ $had_mount = 0 ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
		umount /run/netns 2>/dev/null
		[ $had_dir = 0 ] && rmdir /run/netns 2>/dev/null
	fi
	return $rc
}

# The server killed while the loader (slowed) is at work: the process is
# killed, never run on with zero pages, and the loader says why.
test_lazy_ps_server_killed() {
	local d=$WORK/lazy-ps-killed
	lazy_start $d 64 || return 1
	ps_start $d "" 127.0.0.1 || return 1
	ps_restart $d "" 127.0.0.1 $d/img 200 || return 1
	sleep 0.3
	kill -9 $(pgrep -P $srv) || return 1
	touch $d/go
	gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
	cat $d/out
	grep -v '^ckpt: timing' $d/err | tail -2
	grep -q 'PASS\|FAIL' $d/out && return 1
	grep -q "lazy restart: pid $pid: the page server's \(connection was lost\|reply was cut short\) (.*) at image offset [0-9]*, so pid $pid is killed" $d/err ||
		return 1
	lazy_clean $d
}

# Forged replies (the test build's CKPT_TEST_PS_FORGE): pages for another
# offset than asked, refused at once, and a byte changed, refused by the
# checksum of its record (as a corrupt image is): the process is killed
# with one error saying what was wrong.
test_lazy_ps_forged() {
	local d how want
	for how in offset data; do
		d=$WORK/lazy-ps-forged-$how
		lazy_start $d 64 || return 1
		CKPT_TEST_PS_FORGE=$how ps_start $d "" 127.0.0.1 || return 1
		# (the process may be killed before restart is done with it)
		ps_restart $d "" 127.0.0.1 $d/img $([ $how = offset ] && echo 80 || echo 0)
		loader=$(sed -n 's/.*left to the loader, pid \([0-9]*\).*/\1/p' $d/err)
		[ -n "$loader" ] || { note "no loader"; return 1; }
		# (a changed byte shows when its record's checksum is done:
		# the process must not look at its pages before)
		[ $how = offset ] && touch $d/go
		gone $pid || { note "pid $pid still runs"; kill -9 $pid; return 1; }
		grep -v '^ckpt: timing' $d/err | tail -2
		grep -q '^PASS' $d/out && return 1
		case $how in
		offset) want="the page server sent [0-9]* bytes at offset [0-9]* for a request of [0-9]* at [0-9]* (a forged reply) at image offset [0-9]*, so pid $pid is killed" ;;
		data) want="pid $pid: \(record PAGES at offset [0-9]*: checksum mismatch (corrupt image)\|the page server sent two different contents for the same pages (a forged reply) at image offset [0-9]*\), so pid $pid is killed" ;;
		esac
		grep -q "lazy restart: .*$want" $d/err || { note "$how: not refused"; return 1; }
		lazy_clean $d || return 1
		kill $srv 2>/dev/null
	done
	return 0
}

# A key the server does not hold, or none: refused before any of the
# image is sent (restart fails, nothing is restored); the server waits
# on for the restart that has the key, and serves it.
test_lazy_ps_wrong_key() {
	local d=$WORK/lazy-ps-key rc idle
	mkdir -p $d
	head -c 32 /dev/urandom > $d/key
	head -c 32 /dev/urandom > $d/other
	LAZY_KEY=$d/other lazy_start $d 16 || return 1
	# an image not made with the server's key is not served with it:
	# a restart would trust it on the strength of the key
	timeout 10 "$CKPT" page-server --port 0 --key $d/key $d/img > $d/srv0 2>&1 < /dev/null
	rc=$?
	cat $d/srv0
	[ $rc != 0 ] && grep -q "not authenticated by this key" $d/srv0 || return 1
	mv $d/img $d/img.other
	LAZY_KEY=$d/key lazy_start $d 16 || return 1
	# (the test build's wait for a hello: 1 s, not 10)
	CKPT_TEST_HELLO_S=1 ps_start $d "" 127.0.0.1 --key $d/key || return 1
	ckpt restart --lazy --detach --page-server 127.0.0.1:$port --key $d/other $d/img \
		> $d/rpid 2> $d/err1 < /dev/null
	rc=$?
	cat $d/err1
	[ $rc = 125 ] && [ "$(wc -l < $d/err1)" = 1 ] &&
		grep -q "^ckpt: .*--page-server 127.0.0.1:$port: the server does not hold our key (wrong key): refused" $d/err1 ||
		return 1
	ckpt restart --lazy --detach --page-server 127.0.0.1:$port $d/img > $d/rpid 2> $d/err2 < /dev/null
	rc=$?
	cat $d/err2
	[ $rc = 125 ] && grep -q "the server wants a key (restart --key FILE)" $d/err2 || return 1
	kill -0 $pid 2>/dev/null && { note "pid $pid restored"; return 1; }
	cat $d/srv
	grep -q "page-server: 127.0.0.1 port [0-9]*: left at our hello (wrong key): refused" $d/srv &&
		grep -q "page-server: 127.0.0.1 port [0-9]*: left at our hello (it has no key): refused" $d/srv ||
		return 1
	# a peer that connects and says nothing is dropped after a while,
	# not served for ever before the restart behind it
	exec {idle}<>/dev/tcp/127.0.0.1/$port || return 1
	ps_restart $d "" 127.0.0.1 $d/img 0 --key $d/key || return 1
	exec {idle}>&-
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	gone $pid
	grep -q "page-server: 127.0.0.1 port [0-9]*: no hello" $d/srv || { note "the idle peer was not dropped"; return 1; }
	grep -q '^PASS' $d/out && gone $srv && lazy_clean $d && sanitizer_clean $d/srv
}

# The server answers only for pages it left out of the image (a client
# of tests/aux asks for bytes of the image's head, then past its end):
# refused, the server says so and exits.
test_lazy_ps_bad_request() {
	local d=$WORK/lazy-ps-bad
	lazy_start $d 16 || return 1
	ps_start $d "" 127.0.0.1 || return 1
	$PYTHON "$ROOT/tests/aux/ps_client.py" 127.0.0.1 $port img 0 4096 > $d/c1 2>&1
	cat $d/c1 $d/srv
	grep -q 'refused: status 22' $d/c1 || return 1
	grep -q 'page-server: 127.0.0.1 port [0-9]*: a request for 4096 bytes at offset 0, not pages of the image: refused' $d/srv ||
		return 1
	gone $srv && sanitizer_clean $d/srv
}

# Through a server on loopback: the state programs of lazy_state (areas
# the server leaves out and areas restart loads whole, side by side),
# and a fork while the loader is at work.
test_lazy_ps_state() {
	local p d
	for p in mem_anon threads shm_devzero mem_file fork; do
		d=$WORK/lazy-ps-state-$p
		mkdir -p $d
		if [ $p = fork ]; then
			lazy_start $d 64 fork || return 1
		else
			"$PROGS/$p" $d/go > $d/out 2>&1 < /dev/null &
			pid=$!
			wait_for $d/out READY 30 || return 1
			checkpoint_kill $d $pid || return 1
		fi
		ps_start $d "" 127.0.0.1 || return 1
		ps_restart $d "" 127.0.0.1 $d/img $([ $p = fork ] && echo 60 || echo 0) || return 1
		touch $d/go
		wait_for $d/out 'PASS\|FAIL' 60
		gone $pid
		lazy_ended	# (its loaders' last lines come as they end)
		grep -q '^PASS' $d/out && ! grep -q FAIL $d/out || { note "$p: $(cat $d/out)"; return 1; }
		gone $srv || { note "$p: the server is still there"; return 1; }
		grep -q 'loader done.*from the page server' $d/err || return 1
		lazy_clean $d && sanitizer_clean $d/srv || return 1
	done
}

# test_lazy_copy_race through a page server: the copiers place the
# stream's pieces (src/lazy_copy.c) while the first thread reads the
# next, so a piece is under way (its copy 20 ms after its pages were
# taken) when the process drops all of its memory; the drop is read only
# once no piece is under way, and that piece's copy fails, or it brings
# the dropped pages back.
test_lazy_ps_copy_race() {
	local d=$WORK/lazy-ps-copy-race
	mkdir -p $d
	"$PROGS/lazy_race" $d/go drop > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 && checkpoint_kill $d $pid || return 1
	ps_start $d "" 127.0.0.1 || return 1
	CKPT_TEST_LAZY_COPIERS=1 CKPT_TEST_LAZY_COPY_DELAY_MS=20 \
		ps_restart $d "" 127.0.0.1 $d/img 0 || return 1
	lazy_pass $d || return 1
	grep -q 'loader done.*in the background (1 copier).*from the page server' $d/err ||
		{ note "no copier placed the stream"; return 1; }
	gone $srv || { note "the server is still there"; return 1; }
	sanitizer_clean $d/srv
}

# A server that answers a touched page's block with other bytes than it
# streamed, for pages the stream has passed already (the test build's
# CKPT_TEST_PS_FORGE=block): nothing compares those with the stream, so
# a page the stream has passed must come from the stream.  The copiers
# place the pieces the first thread has read (slowly here: 20 ms
# between taking one and copying it), and the process touches its pages
# in a scattered order: a fault's block placed over pieces read and not
# placed yet put forged bytes into memory.  Then a fork while the stream
# goes on: a piece whose copy fails until the fork's event is read is
# kept for after it, or its pages, put back, came in blocks.
test_lazy_ps_forged_block() {
	local d how
	for how in rand fork; do
		d=$WORK/lazy-ps-forged-block-$how
		lazy_start $d 64 $how || return 1
		CKPT_TEST_PS_FORGE=block ps_start $d "" 127.0.0.1 || return 1
		CKPT_TEST_LAZY_COPIERS=1 CKPT_TEST_LAZY_COPY_DELAY_MS=20 \
			ps_restart $d "" 127.0.0.1 $d/img $([ $how = fork ] && echo 60 || echo 0) ||
			return 1
		lazy_pass $d || { note "$how"; return 1; }
		gone $srv || { note "$how: the server is still there"; return 1; }
		sanitizer_clean $d/srv || return 1
	done
}

# A compressed image is served expanded (its pages as the loader wants
# them); an incremental one is refused in one line, and so is
# --page-server without --lazy.
test_lazy_ps_images() {
	local d=$WORK/lazy-ps-images rc
	mkdir -p $d
	"$PROGS/lazy_mem" $d/go 32 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 || return 1
	ckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	ckpt checkpoint --kill --parent $d/a.img -o $d/b.img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	ckpt page-server --port 0 $d/b.img > $d/srv 2>&1 < /dev/null
	rc=$?
	cat $d/srv
	[ $rc = 1 ] && [ "$(wc -l < $d/srv)" = 1 ] &&
		grep -q '^ckpt: .*page-server: the image is incremental (it names a parent image): serve a whole image' $d/srv ||
		return 1
	ckpt restart --page-server 127.0.0.1:1 $d/a.img > $d/rout 2>&1 < /dev/null
	rc=$?
	cat $d/rout
	[ $rc = 2 ] && grep -q '^ckpt: --page-server is for --lazy' $d/rout || return 1
	d=$WORK/lazy-ps-zstd
	mkdir -p $d
	"$PROGS/lazy_mem" $d/go 32 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 || return 1
	ckpt checkpoint --kill --compress -o $d/img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	ps_start $d "" 127.0.0.1 || return 1
	ps_restart $d "" 127.0.0.1 $d/img 0 || return 1
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	gone $pid
	lazy_ended	# (its loaders' last lines come as they end)
	grep -q '^PASS' $d/out && grep -q 'loader done.*from the page server' $d/err &&
		gone $srv && lazy_clean $d && sanitizer_clean $d/srv
}
# A tree from a page server: refused before anything is made, naming the
# root (the server's one connection serves one loader).
test_lazy_ps_refused_tree() {
	local d=$WORK/lazy-ps-tree rc
	lazy_start $d 16 tree || return 1
	ps_start $d "" 127.0.0.1 || return 1
	timeout -k 5 $RESTART_TIMEOUT "$CKPT" restart --lazy --page-server 127.0.0.1:$port \
		$d/img > $d/rpid 2> $d/err < /dev/null
	rc=$?
	cat $d/err
	kill $srv 2>/dev/null
	[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "^ckpt: .*--lazy --page-server: the image holds 2 processes (pid $pid and its children)" $d/err ||
		return 1
	sanitizer_clean $d/err && ! kill -0 $pid 2>/dev/null
}
