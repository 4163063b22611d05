# inplace.sh - the pages of a big area go from the target straight to
# their place in an image file, several threads at once (src/pagecopy.c,
# write_inplace()): the image restarts whole; a stream that cannot take
# writes at an offset (a file opened to append) gets the pages in order;
# a failure there leaves the target running untouched.
t inplace_pages
t inplace_append
t inplace_fails

test_inplace_pages() {
	local d=$WORK/inplace pid
	start_holder plain $d 40 || return 1
	checkpoint_kill $d $pid -v 2> $d/ck.log || { cat $d/ck.log; return 1; }
	grep 'written in place' $d/ck.log | sed 's/^/    /'
	grep -Eq "pid $pid: [0-9]+ KiB of pages at 0x[0-9a-f]+ written in place by [0-9]+ thread" \
		$d/ck.log || { echo "no area written in place"; return 1; }
	ckpt info $d/img > /dev/null || return 1
	ckpt restart --detach $d/img > $d/pid || return 1
	touch $d/go
	gone $(cat $d/pid) || return 1
	grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

# With O_APPEND, pwrite() appends whatever offset it is given: such an
# image written in place would have its pages after its end.
test_inplace_append() {
	local d=$WORK/inplace-append pid
	start_holder plain $d 40 || return 1
	: > $d/img
	ckpt checkpoint --kill -v -o - $pid >> $d/img 2> $d/ck.log || { cat $d/ck.log; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	! grep -q 'written in place' $d/ck.log || { echo "written in place with O_APPEND"; return 1; }
	ckpt restart --detach $d/img > $d/pid || return 1
	touch $d/go
	gone $(cat $d/pid) || return 1
	grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

test_inplace_fails() {
	local d=$WORK/inplace-fail pid
	start_holder plain $d 40 || return 1
	CKPT_TEST_FAIL_AT=1:pages_inplace ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { cat $d/err; echo "checkpoint did not fail"; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q 'failure injected at 1:pages_inplace' $d/err || return 1
	kill -0 $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}
