# progress.sh - the progress line of a long checkpoint or restart
# (src/progress.c): on a terminal (a pty, by script(1)) it shows the bytes
# done and total, the rate and the time left, redrawn in place, and is
# wiped at the end; nothing when stderr is a file, with -q, or for a
# checkpoint shorter than a second.  CKPT_TEST_PROGRESS_MS=0 (the test
# build's) draws it from the start and redraws it at every step, so a
# small or fast process shows it too.
t progress_tty
t progress_quiet

# The line as a terminal shows it: "ckpt: WHAT D of T MiB, R MiB/s, S s left"
PROGRESS_RE='ckpt: %s [0-9.]* of [0-9.]* MiB, [0-9]* MiB/s, [0-9.]* s left'

# ckpt ARGS... on a pty (script -e: its exit status), what it wrote in
# DIR/tty; $1 the directory.
on_tty() {	# DIR ARGS...
	local d=$1
	shift
	timeout -k 5 $RESTART_TIMEOUT script -qfec "$CKPT $*" $d/tty > /dev/null < /dev/null
}

test_progress_tty() {
	local d=$WORK/progress pid re
	start_holder plain $d 256 || return 1
	CKPT_TEST_PROGRESS_MS=0 on_tty $d checkpoint --kill -o $d/img $pid || { cat $d/tty; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	re=$(printf "$PROGRESS_RE" checkpoint)
	note "$(tr '\r' '\n' < $d/tty | grep -a 'ckpt: checkpoint' | tail -1)"
	grep -aq "$re" $d/tty || return 1
	# redrawn in place, then wiped: "\r...\r...\r\e[K"
	[ "$(grep -ao $'\r'"$re" $d/tty | wc -l)" -ge 2 ] || return 1
	grep -aq $'\r\e\\[K' $d/tty || return 1
	CKPT_TEST_PROGRESS_MS=0 on_tty $d restart --detach $d/img || { cat $d/tty; return 1; }
	note "$(tr '\r' '\n' < $d/tty | grep -a 'ckpt: restart' | tail -1)"
	grep -aq "$(printf "$PROGRESS_RE" restart)" $d/tty || return 1
	touch $d/go
	wait_for $d/out PASS 20
}

# Stderr a file, -q on a terminal, or a short checkpoint (the real
# 1 s threshold): no line.
test_progress_quiet() {
	local d=$WORK/progress-quiet pid
	start_holder plain $d 64 || return 1
	CKPT_TEST_PROGRESS_MS=0 ckpt checkpoint -o $d/img $pid 2> $d/err || return 1
	! grep -aq 'MiB/s' $d/err || { cat $d/err; return 1; }
	CKPT_TEST_PROGRESS_MS=0 on_tty $d checkpoint -q -o $d/img $pid || return 1
	! grep -aq 'MiB/s' $d/tty || { cat $d/tty; return 1; }
	on_tty $d checkpoint -o $d/img $pid || return 1
	! grep -aq 'MiB/s' $d/tty || { cat $d/tty; return 1; }
	# the line is there (and goes) where the same run may draw it
	CKPT_TEST_PROGRESS_MS=0 on_tty $d checkpoint --kill -o $d/img $pid || return 1
	grep -aq 'MiB/s' $d/tty || { cat $d/tty; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	CKPT_TEST_PROGRESS_MS=0 ckpt restart --detach -q $d/img > /dev/null 2> $d/err || return 1
	[ ! -s $d/err ] || { cat $d/err; return 1; }
	touch $d/go
	wait_for $d/out PASS 20
}
