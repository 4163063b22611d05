# timers.sh - issue 14: periodic timers keep their period across a
# restart (tests/progs/timers_periodic.c is the state test).
t timers_zero_left
t timers_ids_in_order
t timers_ids_too_far

# A periodic timer saved with "0 left" and no signal pending (what a
# kernel whose timer_gettime() reads so would give; this one forwards a
# POSIX timer instead) is armed again, not disarmed: timers_periodic's
# image with its parent's ITIMER_REAL and POSIX timer set to 0 left and
# its pending signals dropped.
test_timers_zero_left() {
	local d=$WORK/timers0 pid rpid img n
	mkdir -p $d
	$PROGS/timers_periodic $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	checkpoint_kill $d $pid || return 1
	step "forging the image"
	img=$d/img
	n=0
	# the parent's SIGPENDING records: those before the second TASK
	# (the child's, blocked, must stay as they are: its checks expect them)
	while "$PYTHON" tests/forge.py list $img |
			awk '$3 == "TASK" { t++ } t == 1 && $3 == "SIGPENDING" { f = 1 } END { exit !f }'; do
		"$PYTHON" tests/forge.py drop $img $d/f$n -r SIGPENDING || return 1
		img=$d/f$n
		n=$((n + 1))
	done
	"$PYTHON" tests/forge.py edit $img $d/f.a -r ITIMERS --set t0.value_ns=0 &&
	"$PYTHON" tests/forge.py edit $d/f.a $d/f.b -r POSIX_TIMER --set value_ns=0 || return 1
	note "dropped $n SIGPENDING records; parent's timers: $(ckpt info $d/f.b |
		grep -m2 -E 'real_interval_ns|value_ns' | tr -s ' \n' ' ')"
	ckpt_bg restart $d/f.b > $d/restart.out 2>&1 &
	rpid=$!
	sleep 1
	touch $d/go
	wait $rpid
	local rc=$?
	cat $d/out $d/restart.out
	[ $rc = 0 ] && grep -q '^PASS' $d/out
}

# A kernel before Linux 6.16 (no PR_TIMER_CREATE_RESTORE_IDS) gives a
# process's POSIX timer ids in order from 0: restart makes the timers in
# the order of their ids, the ids between made and deleted again.  The
# test build's CKPT_TEST_TIMER_IDS_IN_ORDER makes restart go that way on
# this kernel (whose ids, without the prctl, come in order too).  timers
# has holes in its ids; timers_periodic a timer in each of two processes.
test_timers_ids_in_order() {
	CKPT_TEST_TIMER_IDS_IN_ORDER=1 state_test "$PROGS/timers" &&
		CKPT_TEST_TIMER_IDS_IN_ORDER=1 state_test "$PROGS/timers_periodic"
}

# That way, an id more than 65536 above the one before is refused with
# one line, before the process runs, and nothing is left.
test_timers_ids_too_far() {
	local d=$WORK/timers-far pid rc
	mkdir -p $d
	TP_TMPDIR=$d $PROGS/timers $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	checkpoint_kill $d $pid || return 1
	"$PYTHON" tests/forge.py edit $d/img $d/far -r POSIX_TIMER --set id=70000 || return 1
	CKPT_TEST_TIMER_IDS_IN_ORDER=1 ckpt restart $d/far > $d/rout 2> $d/err
	rc=$?
	cat $d/err
	[ $rc != 0 ] && [ "$(grep -vc '^ckpt: the half-built' $d/err)" = 1 ] &&
		grep -q "^ckpt: .*pid $pid: POSIX timer 70000: this kernel (before Linux 6.16) gives timer ids in order, and 65536 ids below it are too many to go through" $d/err ||
		return 1
	sanitizer_clean $d/err && ! kill -0 $pid 2>/dev/null
}
