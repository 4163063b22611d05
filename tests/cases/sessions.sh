# sessions.sh - issue 14: the root's own session and group come back as
# saved however restart runs: detached, in a new pid namespace (--pidns),
# and inside a pid namespace where restart's caller's session and group
# are not visible (their ids read 0 there), as where ckpt itself runs in
# a container.  tests/progs/setsid_root.c, group_root.c and tree.c say
# what each checks; their plain restart is the state test.
t root_session_detach
t root_session_pidns       group pidns
t root_session_in_pidns    group pidns
t root_group_in_pidns      group pidns
t root_group_detach
t root_tree_in_pidns       group pidns
t root_tree_detach
t root_ids_saved_in_pidns  group pidns
t root_session_shell_job

# PROG (of tests/progs) checkpointed and restarted: MODE detach (restart
# returns at once; sets ROOT_PID and ROOT_SID, the restored root's session
# then), pidns (--pidns), or in_pidns (plain restart, run under unshare
# --pid: ckpt is the namespace's init, its session and group outside).
root_ids_test() {	# PROG MODE
	local prog=$PROGS/$1 d pid rpid rc=0
	d=$(mktemp -d "$WORK/$1.XXXX")
	chmod 755 "$d"
	TP_TMPDIR=$d "$prog" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	ROOT_PID=$pid
	wait_for "$d/out" READY || { kill -9 $pid; return 1; }
	checkpoint_kill $d $pid || return 1
	step "restart ($2)"
	case $2 in
	detach)
		ckpt restart --detach "$d/img" > "$d/restart.out" 2>&1 || rc=1
		ROOT_SID=$(awk '{print $6}' /proc/$pid/stat 2>/dev/null)
		touch "$d/go"
		gone $pid || rc=1
		;;
	pidns|in_pidns)
		if [ $2 = pidns ]; then
			ckpt_bg restart --pidns "$d/img" > "$d/restart.out" 2>&1 &
		else
			# (ckpt inside the namespace: under a timeout all the same)
			timeout -k 5 $RESTART_TIMEOUT unshare --pid --fork --mount-proc \
				"$CKPT" restart "$d/img" > "$d/restart.out" 2>&1 &
		fi
		rpid=$!
		sleep 1
		touch "$d/go"
		wait $rpid || rc=1
		;;
	esac
	cat "$d/out" "$d/restart.out"
	sanitizer_clean "$d/restart.out" || return 1
	[ $rc = 0 ] && grep -q '^PASS' "$d/out" && ! grep -q '^FAIL' "$d/out"
}

# a session leader, with its pty, a child in its group, one leading the
# foreground group
test_root_session_detach() { root_ids_test setsid_root detach; }
test_root_session_pidns() { root_ids_test setsid_root pidns; }
test_root_session_in_pidns() { root_ids_test setsid_root in_pidns; }
# a group leader in a session led outside the tree; detached, a daemon:
# it gets a session of its own
test_root_group_in_pidns() { root_ids_test group_root in_pidns; }
test_root_group_detach() {
	root_ids_test group_root detach || return 1
	note "detached root $ROOT_PID is in session $ROOT_SID"
	[ "$ROOT_SID" = "$ROOT_PID" ]
}
# a whole tree (a session and a group led inside it) whose root is in a
# session and group led outside
test_root_tree_in_pidns() { root_ids_test tree in_pidns; }
test_root_tree_detach() { root_ids_test tree detach; }

# all of it inside such a namespace: the image itself holds session and
# group 0 for the root's
test_root_ids_saved_in_pidns() {
	local d=$WORK/savedns
	mkdir -p $d
	chmod 755 $d
	step "tree checkpointed and restarted under unshare --pid"
	timeout -k 5 $RESTART_TIMEOUT unshare --pid --fork --mount-proc bash -c '
		TP_TMPDIR='$d' '"$PROGS"'/tree '$d'/go > '$d'/out 2>&1 < /dev/null &
		pid=$!
		for ((i = 0; i < 1000; i++)); do grep -q READY '$d'/out && break; sleep 0.01; done
		echo "saved: $(awk "{print \"session\", \$6, \"group\", \$5}" /proc/$pid/stat)"
		"'"$CKPT"'" checkpoint --kill -o '$d'/img $pid || exit 1
		wait $pid
		"'"$CKPT"'" restart '$d'/img & rpid=$!
		sleep 1
		touch '$d'/go
		wait $rpid'
	local rc=$?
	cat $d/out
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out
}

# A state program started by setsid(1) leads its session: restart
# --shell-job (on a terminal: script(1) gives it one) refuses it, before
# it makes any process, saying to restart it without; so restarted, it
# leads its session again and passes its own checks.
test_root_session_shell_job() {
	local d=$WORK/sessjob pid rpid
	mkdir -p $d
	chmod 755 $d
	TP_TMPDIR=$d setsid $PROGS/signals $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	[ "$(awk '{print $6}' /proc/$pid/stat)" = $pid ] || { echo "not a session leader"; return 1; }
	checkpoint_kill $d $pid || return 1
	step "restart --shell-job on a terminal"
	timeout -k 5 20 script -qec "$CKPT restart --shell-job $d/img 2> $d/err" /dev/null > /dev/null
	note "--shell-job: $(cat $d/err)"
	[ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "pid $pid leads its own session: it is no shell job" $d/err || return 1
	! kill -0 $pid 2>/dev/null || { echo "pid $pid made all the same"; return 1; }
	ckpt_bg restart $d/img > $d/restart.out 2>&1 &
	rpid=$!
	# (the puppet is in restart's session for a moment, before its setsid)
	for ((i = 0; i < 500; i++)); do
		[ "$(awk '{print $5, $6}' /proc/$pid/stat 2>/dev/null)" = "$pid $pid" ] && break
		sleep 0.01
	done
	note "restored $pid: group $(awk '{print $5, "session", $6}' /proc/$pid/stat)"
	[ "$(awk '{print $5, $6}' /proc/$pid/stat)" = "$pid $pid" ] || { kill $rpid; return 1; }
	touch $d/go
	wait $rpid || return 1
	cat $d/out
	grep -q '^PASS' $d/out
}
