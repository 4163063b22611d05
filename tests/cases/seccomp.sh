# seccomp.sh - filters refused, kept across a checkpoint, strict mode.
t refuse_seccomp_usernotif
t seccomp_no_kill
t seccomp_strict

# seccomp: a filter that hands calls to a supervisor is refused, the
# target left as it was.
test_refuse_seccomp_usernotif() { refused_checkpoint usernotif 'seccomp filter 0 (0 is the oldest) returns SECCOMP_RET_USER_NOTIF'; }

# A process under a seccomp filter, checkpointed without --kill: ckpt's
# calls inside it are not filtered, and once let go its filter applies
# again (the holder checks); the image restarts with the filter.
test_seccomp_no_kill() {
	local d=$WORK/seccomp-nokill pid
	start_holder seccomp $d || return 1
	ckpt checkpoint -o $d/img $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	grep -q '^Seccomp:.*2' /proc/$pid/status || return 1
	touch $d/go
	wait $pid || { cat $d/out; return 1; }
	grep -q '^PASS' $d/out || return 1
	rm $d/go
	: > $d/out
	ckpt restart --detach $d/img > $d/pid || return 1
	[ "$(cat $d/pid)" = $pid ] || return 1
	grep '^Seccomp\|^NoNewPrivs' /proc/$pid/status
	grep -q '^Seccomp:.*2' /proc/$pid/status &&
		grep -q '^NoNewPrivs:.*1' /proc/$pid/status || return 1
	touch $d/go
	gone $pid || return 1
	cat $d/out
	grep -q '^PASS' $d/out
}

# Strict mode (read, write, exit, sigreturn only): restored strict, with
# its state; it reads and writes, and any other call kills it.
test_seccomp_strict() {
	local d=$WORK/strict pid wpid rc
	mkdir -p $d
	# its stdin a pipe from outside the tree (restart gives it its own)
	{ printf cc; while [ ! -e $d/done ]; do sleep 0.05; done; } |
		"$AUX/strict" > $d/out 2>&1 &
	pid=$!
	wait_for $d/out READY || { touch $d/done; return 1; }
	grep -q '^Seccomp:.*1' /proc/$pid/status || { touch $d/done; return 1; }
	sleep 0.1
	ckpt checkpoint --kill -o $d/img $pid
	rc=$?
	touch $d/done	# (wait waits for the whole pipeline)
	wait $pid 2>/dev/null
	[ $rc = 0 ] && gone $pid || return 1
	# one more count, then PASS with the count (3) and exit
	printf cx | ckpt restart $d/img || return 1
	grep -q '^PASS 3' $d/out || { cat $d/out; return 1; }
	# again, seen strict while it runs; then a forbidden call kills it
	{
		for ((i = 0; i < 500; i++)); do
			grep -q '^Seccomp:.*1' /proc/$pid/status 2>/dev/null && break
			sleep 0.01
		done
		grep '^Seccomp:' /proc/$pid/status > $d/status
		printf k
	} | ckpt restart $d/img
	rc=$?
	cat $d/status
	note "restart exit $rc after a forbidden call"
	grep -q '^Seccomp:.*1' $d/status && [ $rc = 137 ]
}
