# place.sh - restart's private anonymous pages placed by ckpt
# (src/kinds/mm_place.c): they are placed (-v says so), the process
# comes back with no trace of the userfaultfd it was done by (no fd, no
# area still registered: smaps' "um" flag), can be checkpointed again,
# and finds its memory intact.
t place_pages
t place_peeked

test_place_pages() {
	local d=$WORK/place pid rpid
	start_holder thread $d 24 || return 1
	checkpoint_kill $d $pid || return 1
	ckpt restart --detach -v $d/img > $d/pid 2> $d/rst.log || { cat $d/rst.log; return 1; }
	rpid=$(cat $d/pid)
	grep 'placed' $d/rst.log | sed 's/^/    /'
	grep -Eq "pid $pid: [0-9.]+ MB of pages of [1-9][0-9]* areas placed" $d/rst.log ||
		{ echo "no pages placed"; return 1; }
	if grep -q '^VmFlags:.* um' /proc/$rpid/smaps; then
		echo "an area is still registered on a userfaultfd:"
		grep -B30 '^VmFlags:.* um' /proc/$rpid/smaps | grep -E '^[0-9a-f]+-' | tail -3
		return 1
	fi
	if ls -l /proc/$rpid/fd | grep -q userfaultfd; then
		echo "the restored process holds a userfaultfd"; ls -l /proc/$rpid/fd; return 1
	fi
	ckpt checkpoint -o $d/img2 $rpid > /dev/null 2>&1 || { echo "checkpoint after restart failed"; return 1; }
	touch $d/go
	gone $rpid || return 1
	grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

# Pages read by someone else while the areas were built (ps reading the
# cmdline, a debugger: the test build's CKPT_TEST_PEEK reads a word of
# every 16th page before each area is registered) are the zero page, not
# missing, and a copy finds them in (EEXIST): they are written over, not
# a failed restart.
test_place_peeked() {
	local d=$WORK/place-peeked
	mkdir -p $d
	"$PROGS/lazy_mem" $d/go 64 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 30 && checkpoint_kill $d $pid || return 1
	CKPT_TEST_PEEK=1 ckpt restart --detach -v $d/img > $d/pid 2> $d/err ||
		{ cat $d/err; return 1; }
	grep -Eq "placed \([1-9][0-9]* by userfaultfd\)" $d/err ||
		{ note "no page placed by userfaultfd"; grep placed $d/err; return 1; }
	touch $d/go
	wait_for $d/out 'PASS\|FAIL' 60
	gone $pid
	grep -v READY $d/out
	grep -q '^PASS' $d/out
}
