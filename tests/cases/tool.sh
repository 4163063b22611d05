# tool.sh - whole-tool tests against tests/aux/holder and friends: streams,
# info, checkpoints without --kill, --detach, exit status and signals,
# zombie-held pids, stopped processes, --pidns, a pid in use.
t python_counter
t stream
t info
t checkpoint_no_kill
t checkpoint_keeps_cow
t checkpoint_no_kill32     needs ia32
t restart_detach
t restart_status_and_signals
t zombie_pid_wait
t stopped_process
t pidns                    group pidns
t pidns_tree               group pidns
t pid_in_use

# python3 writing a counter, checkpointed mid-run and restarted: the output
# is exactly that of an uninterrupted run.
test_python_counter() {
	local d=$WORK/py pid n=400
	mkdir -p $d
	$PYTHON tests/aux/counter.py $n $d/ref
	$PYTHON tests/aux/counter.py $n $d/out < /dev/null > /dev/null 2>&1 &
	pid=$!
	wait_for $d/out '^50$' || return 1
	checkpoint_kill $d $pid || return 1
	note "checkpointed at line $(wc -l < $d/out) of $n"
	ckpt restart $d/img || return 1
	cmp $d/ref $d/out
}

# checkpoint -o - | restart -: the image as a stream, both ways.
test_stream() {
	local d=$WORK/stream pid
	start_holder plain $d 4 || return 1
	ckpt checkpoint --kill -o - $pid > $d/img.pipe 2> $d/err || { cat $d/err; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	cat $d/img.pipe | ckpt info - > /dev/null || return 1
	( sleep 0.5; touch $d/go ) &
	cat $d/img.pipe | ckpt restart - || return 1
	grep -q '^PASS' $d/out
}

# `ckpt info` shows every record, for people and as JSON for scripts.
test_info() {
	local d=$WORK/info pid
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	ckpt info $d/img > $d/info.txt || return 1
	grep -q "^TASK .*pid=$pid" $d/info.txt && grep -q "image complete and verified" $d/info.txt || return 1
	ckpt info --json $d/img | $PYTHON -c '
import json, sys
d = json.load(sys.stdin)
types = [r["type"] for r in d["records"]]
assert d["complete"] and types[0] == "HEAD", types
for t in ("TASK", "THREAD", "REGS", "XSTATE", "MM", "VMA", "PAGES", "SIGHAND", "CREDS", "FILE", "FD"):
    assert t in types, t
print(len(types), "records")'
}

# Without --kill the process runs on unharmed, and the image still works.
test_checkpoint_no_kill() {
	local d=${1:-$WORK/nokill} pid rpid
	start_holder plain $d 8 || return 1
	ckpt checkpoint -o $d/img $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	sleep 0.1
	touch $d/go
	wait $pid || { cat $d/out; return 1; }
	grep -q '^PASS' $d/out || return 1
	rm $d/go
	: > $d/out
	ckpt restart --detach $d/img > $d/pid || return 1
	[ "$(cat $d/pid)" = $pid ] || return 1
	sleep 0.2
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# A checkpoint that leaves a forked tree running leaves its copy-on-write
# pages shared (reading them must not give each process its own copy).
test_checkpoint_keeps_cow() {
	local d=$WORK/keepcow pid all before after
	mkdir -p $d
	TP_TMPDIR=$d "$PROGS/cow" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || { kill -9 $pid; return 1; }
	sleep 0.3
	all="$pid $(pgrep -P $pid | head -1)"
	before=$($PYTHON "$ROOT/tests/aux/cow_frames.py" $all)
	ckpt checkpoint -o $d/img $pid || { kill -9 $pid; return 1; }
	after=$($PYTHON "$ROOT/tests/aux/cow_frames.py" $all)
	note "pages shared by parent and child: $before before, $after after"
	touch $d/go
	wait $pid
	[ "$before" -gt 1000 ] && [ "$after" = "$before" ]
}

# The same for a 32-bit process: let go, it runs on in its own mode.
test_checkpoint_no_kill32() {
	local HOLDER_BIN=$AUX/holder32
	test_checkpoint_no_kill $WORK/nokill32
}

# --detach prints the pid, returns at once, and the process is init's.
test_restart_detach() {
	local d=$WORK/detach pid ppid
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	[ "$(ckpt restart --detach $d/img)" = $pid ] || return 1
	ppid=$(awk '{print $4}' /proc/$pid/stat)
	note "restored pid $pid has parent $ppid"
	[ "$ppid" != $$ ] || return 1
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# restart's exit status is the process's; signals sent to restart reach it.
test_restart_status_and_signals() {
	local d=$WORK/status pid rpid rc
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	ckpt_bg restart $d/img &
	rpid=$!
	sleep 0.3
	kill -TERM $rpid
	wait $rpid
	rc=$?
	note "restart exited $rc after SIGTERM"
	[ $rc = 143 ]
}

# A checkpoint --kill followed at once by restart meets a zombie holding
# the pid (its parent has not reaped it yet): restart waits for it.
test_zombie_pid_wait() {
	local d=$WORK/zombie pid
	start_holder plain $d || return 1
	ckpt checkpoint --kill -o $d/img $pid || return 1
	# this shell is the parent: it reaps only after restart has begun
	( sleep 0.5; touch $d/go ) &
	ckpt_bg restart $d/img &
	local rpid=$!
	sleep 0.2
	wait $pid 2>/dev/null
	wait $rpid || return 1
	grep -q '^PASS' $d/out
}

# A process stopped by SIGSTOP (a ^Z'd job) is checkpointed as it is, left
# stopped, and comes back stopped.
test_stopped_process() {
	local d=$WORK/stopped pid
	start_holder plain $d || return 1
	kill -STOP $pid
	sleep 0.1
	ckpt checkpoint -o $d/img $pid || return 1
	grep -q '^State:.*T (stopped)' /proc/$pid/status || return 1
	kill -9 $pid
	wait $pid 2>/dev/null
	gone $pid || return 1
	[ "$(ckpt restart --detach $d/img)" = $pid ] || return 1
	grep -q '^State:.*T (stopped)' /proc/$pid/status || return 1
	kill -CONT $pid
	touch $d/go
	gone $pid || return 1
	grep -q '^PASS' $d/out
}

# --pidns: restart in a new pid namespace, where the saved pids are free
# even while the original still runs.
test_pidns() {
	local d=$WORK/pidns pid rpid inner
	start_holder plain $d || return 1
	ckpt checkpoint -o $d/img $pid || return 1
	ckpt_bg restart --pidns $d/img &
	rpid=$!
	pidns_holder $d $pid || return 1
	note "restored as $inner outside: $(grep NSpid /proc/$inner/status)"
	grep -q "^NSpid:.*[[:space:]]$pid\$" /proc/$inner/status || return 1
	touch $d/go
	# both exit 0 only if they PASS (they write over each other's line:
	# each has its own description of the output file at one offset)
	wait $rpid && wait $pid
}

# The same for a tree whose session and group are outside it (the test
# runner's): in the namespace they are the namespace init's.
test_pidns_tree() {
	local d=$WORK/pidns-tree pid rpid kids rc=0
	start_holder child $d || return 1
	kids=$(pgrep -P $pid)	# the holder's idle child: ended below
	ckpt checkpoint -o $d/img $pid || rc=1
	if [ $rc = 0 ]; then
		ckpt_bg restart --pidns $d/img > $d/restart.out 2>&1 &
		rpid=$!
		sleep 1
		kill -0 $rpid 2>/dev/null || rc=1
		touch $d/go
		wait $rpid || rc=1
	fi
	touch $d/go
	wait $pid || rc=1
	kill -9 $kids 2>/dev/null
	[ $rc = 0 ] || cat $d/restart.out
	return $rc
}

# A pid held by a live process is a clear error; nothing is touched.
test_pid_in_use() {
	local d=$WORK/inuse pid err
	start_holder plain $d || return 1
	ckpt checkpoint -o $d/img $pid || return 1
	ckpt restart $d/img 2> $d/err
	[ $? = 125 ] || return 1
	cat $d/err
	grep -q "pid $pid is in use" $d/err || return 1
	[ "$(wc -l < $d/err)" = 1 ] || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}
