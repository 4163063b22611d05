# safety.sh - ckpt killed in the middle never harms its target (issue 20;
# the guard frame, src/arch/x86/guard.h, and the keeper,
# src/files/keeper.h).  The kill points come from the test build's
# numbered test points (src/testpoint.h).
KP_SHARDS=4
for ((i = 1; i <= KP_SHARDS; i++)); do
	t killpoints_$i timeout 400
	eval "test_killpoints_$i() { killpoints_shard $i; }"
done
t killpoints_kill          timeout 300
t killpoints_32            needs ia32  timeout 400
t killpoints_seccomp       timeout 300
t killpoints_runner        timeout 300
t runner_no_room           timeout 120
t signalpoints             timeout 300
t signalpoints_restart     timeout 300
t killpoints_restart       timeout 300
t killpoints_tcp           needs iptables tcp_repair  group iptables  timeout 300
t killtimes                timeout 300
t failpoints               timeout 300

# The state programs a live checkpoint may stop: all but those needing
# a group of their own (SysV keys, the iptables chain), a CPU feature or
# 32-bit code (killpoints_32 has those).
kp_progs() {
	local p
	for p in "$PROGS"/*; do
		case ${p##*/} in inet|sysvshm|shm_tree|amx|mixed_tree) continue ;; esac
		echo "$p"
	done
}

# Every state program, a few points of a live checkpoint each, in shards.
killpoints_shard() {	# K
	local progs=($(kp_progs)) mine=() i
	for ((i = $1 - 1; i < ${#progs[@]}; i += KP_SHARDS)); do mine+=("${progs[i]}"); done
	POINTS=2 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" "${mine[@]}"
}

test_killpoints_kill() {
	POINTS=8 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" --kill \
		"$PROGS/mem_anon" "$PROGS/threads" "$PROGS/tree" "$PROGS/files" "$PROGS/timers"
}

# 32-bit processes, guarded through their vdso and a page of ckpt's
# code they unmap themselves (src/arch/x86/guard32.c).
test_killpoints_32() {
	POINTS=4 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		"$PROGS32/regs32" "$PROGS32/tls32" "$PROGS32/threads" "$PROGS32/signals" \
		"$PROGS32/timers" "$PROGS32/mem_anon" "$PROGS32/files" "$PROGS32/tree" \
		"$PROGS32/sysrestart" "$PROGS/mixed_tree" &&
	POINTS=4 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" --kill \
		"$PROGS32/regs32" "$PROGS32/threads"
}

# A filter killing on calls ckpt makes (sigaltstack, getitimer): ckpt
# killed as any of its calls is set up or enters must not leave the
# process to make it under the filter (src/sfilter.h).
test_killpoints_seccomp() {
	KP_MATCH='call set|call entry stop' bash "$ROOT/tests/killpoints.sh" "$CKPT" \
		"$WORK/kp" "$PROGS/seccomp_kill"
}

# The page a checkpoint's calls run from in batches, stopping on a
# signal the process ignores (src/arch/x86/runner.c): ckpt killed at
# every point of its life (mapped, armed, a batch set up and stopped,
# its unmapping), the task unmaps it and returns to itself: one that
# sets signals to SIG_IGN (signals: its stop signal is one of those),
# one that catches SIGURG and blocks SIGWINCH (sig_quiet: SIGCHLD then),
# threads, children.
test_killpoints_runner() {
	KP_MATCH='runner [a-z ]*' KP_NEXT=3 bash "$ROOT/tests/killpoints.sh" "$CKPT" \
		"$WORK/kp" "$PROGS/signals" "$PROGS/sig_quiet" "$PROGS/threads" &&
	KP_MATCH='runner stop' bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		"$PROGS/tree" &&
	KP_MATCH='runner [a-z ]*' bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		--kill "$PROGS/signals"
}

# A process at its RLIMIT_AS has no room for that page: the checkpoint
# makes its calls one by one instead, works, and leaves it as it was.
test_runner_no_room() {
	local d=$WORK/norun p rc
	mkdir -p "$d"
	"$PYTHON" -c '
import resource, time
vsz = int(open("/proc/self/statm").read().split()[0]) * 4096
resource.setrlimit(resource.RLIMIT_AS, (vsz, resource.RLIM_INFINITY))
print("READY", flush=True)
time.sleep(600)' > "$d/out" 2>&1 < /dev/null &
	p=$!
	wait_for "$d/out" READY || { echo "python did not start: $(cat "$d/out")"; kill $p; return 1; }
	cat /proc/$p/maps > "$d/maps"
	"$CKPT" checkpoint -v -o "$d/img" $p 2> "$d/err"
	rc=$?
	grep -q "no page for its calls in batches (mmap: .*): one by one" "$d/err" || rc=100
	[ "$(cat /proc/$p/maps)" = "$(cat "$d/maps")" ] || rc=101
	kill -0 $p 2>/dev/null || rc=102
	kill -9 $p
	{ wait $p; } 2>/dev/null
	[ $rc = 0 ] || { echo "rc $rc: $(grep -v saving "$d/err" | tail -3)"; return 1; }
}

# ^C, SIGTERM and SIGHUP at points spread over a checkpoint: ckpt
# unwinds it as a failure, then ends by that signal; the target runs on.
test_signalpoints() {
	CKPT_TEST_KILL_SIG=2 POINTS=6 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		"$PROGS/tree" "$PROGS/threads" "$PROGS/files" &&
	CKPT_TEST_KILL_SIG=15 POINTS=4 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		"$PROGS/signals" &&
	CKPT_TEST_KILL_SIG=1 POINTS=4 bash "$ROOT/tests/killpoints.sh" "$CKPT" "$WORK/kp" \
		--kill "$PROGS/timers"
}

# the same over a restart: nothing is left
test_signalpoints_restart() {
	CKPT_TEST_KILL_SIG=2 POINTS=4 bash "$ROOT/tests/killpoints_restart.sh" "$CKPT" \
		"$WORK/kpr" "$PROGS/tree" "$PROGS/threads"
}

test_killpoints_restart() {
	POINTS=6 bash "$ROOT/tests/killpoints_restart.sh" "$CKPT" "$WORK/kpr" \
		"$PROGS/regs" "$PROGS/threads" "$PROGS/tree" "$PROGS/files" "$PROGS/signals"
}

test_killpoints_tcp() {
	POINTS=8 bash "$ROOT/tests/killpoints_tcp.sh" "$CKPT" "$AUX/kvserver" \
		"$ROOT/tests/aux/kvclient.py" "$WORK/kpt"
}

test_killtimes() {
	TIMES=8 bash "$ROOT/tests/killtimes.sh" "$CKPT" "$AUX/holder" "$WORK/kt"
}

# ckpt's own error paths: a failure injected after each kind's save and
# restore, each process built, the release... of a tree's first and last
# process (src/testpoint.h): the target runs on, or nothing is left.
test_failpoints() {
	bash "$ROOT/tests/failpoints.sh" "$CKPT" "$WORK/fp" "$PROGS/tree" "$PROGS/files"
}
