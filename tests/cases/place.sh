# place.sh - restart's private anonymous pages placed by ckpt
# (src/kinds/mm_place.c): they are placed (-v says so), the process
# comes back with no trace of the userfaultfd it was done by (no fd, no
# area still registered: smaps' "um" flag), can be checkpointed again,
# and finds its memory intact.
t place_pages

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
