# faults.sh - the image's own failures (issue 17): a full disk, a reader
# that goes away.  The target runs on exactly as before, with --kill too.
t image_disk_full
t image_pipe_closed
t two_checkpoints_at_once
t target_forks_hard

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

# Two checkpoints of one pid at once: one wins the ptrace, the other is
# refused naming the pid, or waits its turn; the target runs on.
test_two_checkpoints_at_once() {
	local d=$WORK/two pid a b ok=0
	start_holder plain $d 8 || return 1
	ckpt_bg checkpoint -o $d/a.img $pid 2> $d/a.err &
	a=$!
	ckpt checkpoint -o $d/b.img $pid 2> $d/b.err
	b=$?
	wait $a
	a=$?
	cat $d/a.err $d/b.err
	for rc in $a $b; do [ $rc = 0 ] && ok=$((ok + 1)); done
	[ $ok -ge 1 ] || return 1
	for e in a b; do
		[ ! -s $d/$e.err ] || grep -q "cannot trace pid $pid" $d/$e.err || return 1
	done
	sanitizer_clean $d/a.err $d/b.err && holder_intact $d $pid
}

# The loop's count (its file is empty while bash rewrites it).
loop_count() {	# FILE
	local n i
	for ((i = 0; i < 100; i++)); do
		n=$(cat "$1" 2>/dev/null)
		[ -n "$n" ] && { echo $n; return; }
		sleep 0.01
	done
	echo 0
}

# bash running /bin/true in a loop: children come and go all the time.
# Live checkpoints leave it counting; one with --kill restarts counting.
test_target_forks_hard() {
	local d=$WORK/forks pid n1 n2 i
	mkdir -p $d
	bash -c 'i=0; while :; do /bin/true; i=$((i + 1)); echo $i > '$d'/n; done' \
		< /dev/null > /dev/null 2>&1 &
	pid=$!
	sleep 0.2
	for i in 1 2 3; do
		step "live checkpoint $i"
		ckpt checkpoint -o $d/img $pid || { kill $pid; return 1; }
	done
	n1=$(loop_count $d/n)
	sleep 0.2
	n2=$(loop_count $d/n)
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] && [ "$n2" -gt "$n1" ] ||
		{ echo "not counting on: $n1 then $n2"; kill $pid; return 1; }
	step "checkpoint --kill, restart --detach"
	checkpoint_kill $d $pid || return 1
	n1=$(loop_count $d/n)
	ckpt restart --detach $d/img || return 1
	sleep 0.3
	n2=$(loop_count $d/n)
	kill -STOP $pid
	pkill -9 -P $pid
	kill -9 $pid
	kill -CONT $pid 2>/dev/null
	gone $pid
	[ "$n2" -gt "$n1" ] || { echo "restored loop not counting: $n1 then $n2"; return 1; }
}
