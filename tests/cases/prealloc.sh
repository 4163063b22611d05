# prealloc.sh - a checkpoint into tmpfs allocates its image file's pages
# ahead, while it waits on the tree (src/prealloc.c), stops before the
# first big write, and frees what it made past the image's end, whether
# the checkpoint succeeded or failed.
t prealloc_pages
t prealloc_surplus
t prealloc_failed

# A tmpfs of SIZE at DIR, for this test alone (small pages: a huge page
# would count past the end of any file).
small_tmpfs() {	# DIR SIZE
	mkdir -p $1 && mount -t tmpfs -o size=$2,huge=never ckpt-test-prealloc $1
}

# The bytes of pages FILE holds past its size rounded up to a page.
past_end() {	# FILE
	stat -c '%b %B %s' $1 | awk '{ a = $1 * $2; s = int(($3 + 4095) / 4096) * 4096
				      print (a > s ? a - s : 0) }'
}

# After checkpoint --kill of the holder of DIR into DIR/fs/img (its
# result so far: RC): nothing past the image's end, and it restarts and
# finds its memory intact; the tmpfs unmounted.  Returns the result.
restarted_from_tmpfs() {	# DIR RC
	local d=$1 rc=$2
	[ "$(past_end $d/fs/img)" = 0 ] || { note "pages past the image's end: $(past_end $d/fs/img) bytes"; rc=1; }
	if [ $rc = 0 ]; then
		ckpt restart --detach $d/fs/img > $d/pid || rc=1
		touch $d/go
		gone $(cat $d/pid) || rc=1
		grep -q '^PASS' $d/out || { cat $d/out; rc=1; }
	fi
	umount $d/fs
	return $rc
}

# As it happens: the thread stopped wherever it is when the pages begin.
test_prealloc_pages() {
	local d=$WORK/prealloc-pages pid rc=0
	start_holder plain $d 64 || return 1
	small_tmpfs $d/fs 256m || { kill -9 $pid; return 1; }
	ckpt checkpoint --kill -v -o $d/fs/img $pid 2> $d/ck.log || { cat $d/ck.log; kill -9 $pid; umount $d/fs; return 1; }
	wait $pid 2>/dev/null
	gone $pid || rc=1
	grep 'made ahead' $d/ck.log | sed 's/^/    /'
	restarted_from_tmpfs $d $rc
}

# A process whose own memory (RssAnon, the guess) is mostly droppable
# (MAP_DROPPABLE, Linux 6.11: the kernel may drop it any time, so none
# of it is saved): the guess is more than the image, and all of it is
# made first (CKPT_TEST_PREALLOC_FIRST).  What is past the image's end
# is freed; the process restarts.
test_prealloc_surplus() {
	local d=$WORK/prealloc-surplus pid rc=0
	mkdir -p $d
	$PYTHON - $d/go > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
n = 32 << 20
p = libc.mmap(None, n, 3, 0x08 | 0x20, -1, 0)  # MAP_DROPPABLE | MAP_ANONYMOUS
if p is None or p == ctypes.c_void_p(-1).value:
    print("NODROP", ctypes.get_errno(), flush=True)
    sys.exit(0)
ctypes.memset(p, 7, n)
print("READY", os.getpid(), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
print("PASS", flush=True)
PY
	pid=$!
	wait_for $d/out 'READY\|NODROP' || { kill -9 $pid; return 1; }
	if grep -q NODROP $d/out; then
		note "skipped: no MAP_DROPPABLE here ($(cat $d/out))"
		wait $pid
		return 0
	fi
	small_tmpfs $d/fs 128m || { kill -9 $pid; return 1; }
	CKPT_TEST_PREALLOC_FIRST=1 ckpt checkpoint --kill -v -o $d/fs/img $pid 2> $d/ck.log ||
		{ cat $d/ck.log; kill -9 $pid; umount $d/fs; return 1; }
	wait $pid 2>/dev/null
	gone $pid || rc=1
	grep 'made ahead' $d/ck.log | sed 's/^/    /'
	grep -Eq "image file: [1-9][0-9]* KiB of its pages made ahead, [1-9][0-9]{4,} KiB past its end freed" \
		$d/ck.log || { note "no pages made ahead and freed"; rc=1; }
	restarted_from_tmpfs $d $rc
}

# A checkpoint that fails before its pages (at the files kind) frees what
# was made for them, and the target runs on.
test_prealloc_failed() {
	local d=$WORK/prealloc-failed pid rc=0
	start_holder plain $d 24 || return 1
	small_tmpfs $d/fs 64m || { kill -9 $pid; return 1; }
	CKPT_TEST_PREALLOC_FIRST=1 CKPT_TEST_FAIL_AT=1:files ckpt checkpoint -v -o $d/fs/img $pid 2> $d/ck.log
	[ $? = 1 ] || { note "checkpoint did not fail"; rc=1; }
	grep 'made ahead\|failure injected' $d/ck.log | sed 's/^/    /'
	grep -q "failure injected at 1:files" $d/ck.log || rc=1
	grep -Eq "image file: [1-9][0-9]* KiB of its pages made ahead, [1-9][0-9]{4,} KiB past its end freed" \
		$d/ck.log || { note "no pages made ahead and freed"; rc=1; }
	[ "$(past_end $d/fs/img)" = 0 ] || { note "pages past the image's end: $(past_end $d/fs/img) bytes"; rc=1; }
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || rc=1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out || { cat $d/out; rc=1; }
	umount $d/fs
	return $rc
}
