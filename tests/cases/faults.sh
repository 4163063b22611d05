# faults.sh - the image's own failures (issue 17): a full disk, a reader
# that goes away.  The target runs on exactly as before, with --kill too.
t image_disk_full
t image_pipe_closed

# A live holder of 32 MiB checked after a checkpoint that failed.
holder_intact() {	# DIR PID
	kill -0 $2 || { echo "target gone"; return 1; }
	[ "$(awk '/TracerPid/ {print $2}' /proc/$2/status)" = 0 ] ||
		{ echo "target still traced"; return 1; }
	touch $1/go
	wait $2 && grep -q '^PASS' $1/out
}

# A tmpfs of 1 MiB (in the test's own mount namespace) fills up at once.
test_image_disk_full() {
	local d=$WORK/full pid rc mode
	for mode in plain kill; do
		start_holder plain $d/$mode 32 || return 1
		mkdir -p $d/$mode/small
		mount -t tmpfs -o size=1m none $d/$mode/small || return 1
		step "checkpoint ($mode) onto a full disk"
		ckpt checkpoint $([ $mode = kill ] && echo --kill) -o $d/$mode/small/img $pid \
			2> $d/$mode/err
		rc=$?
		cat $d/$mode/err
		umount $d/$mode/small
		[ $rc = 1 ] && grep -q "No space left" $d/$mode/err &&
			sanitizer_clean $d/$mode/err || return 1
		holder_intact $d/$mode $pid || return 1
	done
}

# The image to a pipe whose reader stops after 64 KiB.
test_image_pipe_closed() {
	local d=$WORK/pipe pid rc mode
	for mode in plain kill; do
		start_holder plain $d/$mode 32 || return 1
		step "checkpoint ($mode) into a pipe closed early"
		{ ckpt checkpoint $([ $mode = kill ] && echo --kill) -o - $pid 2> $d/$mode/err
		  echo $? > $d/$mode/rc; } | head -c 65536 > /dev/null
		rc=$(cat $d/$mode/rc)
		cat $d/$mode/err
		[ $rc = 1 ] && grep -q "Broken pipe" $d/$mode/err &&
			sanitizer_clean $d/$mode/err || return 1
		holder_intact $d/$mode $pid || return 1
	done
}
