#!/usr/bin/env bash
# tests/gpu/run.sh - checkpoint and restart of CUDA processes on a real
# GPU (`make test-gpu` builds what it needs first).  Ends with
# "N passed, N failed"; exits non-zero if anything failed.
# usage: tests/gpu/run.sh [NAME-FILTER]   (VERBOSE=1: every test's log)
# env: CKPT (default build/ckpt), PYTHON (default python3)
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
CKPT=${CKPT:-$ROOT/build/ckpt}
G=$ROOT/build/gpu
PYTHON=${PYTHON:-python3}
FILTER=${1:-}
PASSED=0
FAILED=0
FAILS=()

if [ ! -e /dev/nvidiactl ]; then
	echo "SKIP: no NVIDIA GPU here (/dev/nvidiactl absent): GPU tests not run"
	echo "0 passed, 0 failed"
	exit 0
fi
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
WORK=$(mktemp -d /tmp/ckpt-gpu.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
export CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONUNBUFFERED=1

note() { printf '    %s\n' "$*"; }

# each test in a subshell, ended after TEST_TIMEOUT seconds
want() {	# NAME
	[ -z "$FILTER" ] || [[ "$1" == *$FILTER* ]] || return 0
	local st tp i t0=$(date +%s%N)
	"test_$1" > "$WORK/$1.log" 2>&1 &
	tp=$!
	for ((i = 0; i < ${TEST_TIMEOUT:-120} * 10; i++)); do
		kill -0 $tp 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $tp 2>/dev/null && { kill -9 $tp; echo "timed out" >> "$WORK/$1.log"; }
	wait $tp
	st=$?
	local ms=$(ms_since $t0)
	if [ $st = 0 ]; then
		PASSED=$((PASSED + 1)); printf 'ok   %s (%d ms)\n' "$1" "$ms"
	else
		FAILED=$((FAILED + 1)); FAILS+=("$1"); printf 'FAIL %s (%d ms)\n' "$1" "$ms"
	fi
	[ $st = 0 ] && [ -z "${VERBOSE:-}" ] || sed 's/^/    | /' "$WORK/$1.log" | tail -40
	cleanup
}

# the processes a test started (and restored: the same pids), ended after it
track() { echo "$@" >> "$WORK/pids"; }
cleanup() {
	local p
	for p in $(cat "$WORK/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	: > "$WORK/pids"
}
ck() { timeout -k 5 90 "$CKPT" "$@"; }

wait_for() {	# FILE PATTERN [SECONDS]
	local i
	for ((i = 0; i < ${3:-30} * 100; i++)); do
		grep -aq "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "timed out waiting for '$2' in $1"; cat "$1"
	return 1
}

gone() {	# PID
	local i
	for ((i = 0; i < 500; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		[ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = Z ] && return 0
		sleep 0.01
	done
	return 1
}

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# start_memhold DIR MIB [MODE]: sets $pid (the one READY names)
start_memhold() {
	mkdir -p "$1"
	setsid "$G/memhold" "$2" "$1" "${3:-hold}" > "$1/out" 2>&1 < /dev/null &
	track $!
	wait_for "$1/out" READY 60 || return 1
	pid=$(awk '/READY/{print $2}' "$1/out")
	track $pid
}

finish() {	# DIR: let it check its memory
	touch "$1/go"
	wait_for "$1/out" 'PASS\|FAIL' 120 || return 1
	cat "$1/out"
	grep -aq PASS "$1/out"
}

checkpoint_restart() {	# DIR MIB: checkpoint --kill, restart --detach, check
	local d=$1 t0 ck rs
	start_memhold "$d" "$2" || return 1
	t0=$(date +%s%N)
	ck checkpoint --kill -v -o "$d/img" "$pid" 2> "$d/ckpt.log" || { cat "$d/ckpt.log"; return 1; }
	ck=$(ms_since $t0)
	gone "$pid" || { echo "pid $pid still there"; return 1; }
	ck info "$d/img" | grep -a '^ *CUDA\|CUDA ' || { echo "no CUDA record"; return 1; }
	t0=$(date +%s%N)
	ck restart --detach -v "$d/img" 2> "$d/restart.log" || { cat "$d/restart.log"; return 1; }
	rs=$(ms_since $t0)
	grep -a 'CUDA' "$d/ckpt.log" "$d/restart.log"
	note "$2 MiB: checkpoint --kill ${ck} ms, restart ${rs} ms, image $(stat -c %s "$d/img") bytes"
	finish "$d"
}

test_gpu_memhold() { checkpoint_restart "$WORK/memhold" 256; }

# a checkpoint without --kill: the driver puts the process back at once
test_gpu_live() {
	local d=$WORK/live
	start_memhold "$d" 256 || return 1
	ck checkpoint -v -o "$d/img" "$pid" 2> "$d/ckpt.log" || { cat "$d/ckpt.log"; return 1; }
	grep -a CUDA "$d/ckpt.log"
	finish "$d" || return 1
	gone "$pid" || return 1
	: > "$d/out"; rm -f "$d/go"
	ck restart --detach "$d/img" || return 1
	finish "$d"
}

test_gpu_pipe() {
	local d=$WORK/pipe t0
	start_memhold "$d" 256 || return 1
	t0=$(date +%s%N)
	ck checkpoint --kill -o - "$pid" 2> "$d/ckpt.log" | ck restart --detach - 2> "$d/restart.log" \
		|| { cat "$d/ckpt.log" "$d/restart.log"; return 1; }
	note "checkpoint | restart: $(ms_since $t0) ms"
	finish "$d"
}

test_gpu_torch() {
	local d=$WORK/torch
	mkdir -p "$d"
	"$PYTHON" tests/gpu/train.py 60 0 "$d" > "$d/ref" 2>&1 || { cat "$d/ref"; return 1; }
	setsid "$PYTHON" tests/gpu/train.py 60 20 "$d" > "$d/out" 2>&1 < /dev/null &
	track $!
	wait_for "$d/out" READY 120 || return 1
	pid=$(awk '/READY/{print $2}' "$d/out")
	ck checkpoint --kill -v -o "$d/img" "$pid" 2> "$d/ckpt.log" || { cat "$d/ckpt.log"; return 1; }
	gone "$pid" || return 1
	ck restart --detach -v "$d/img" 2> "$d/restart.log" || { cat "$d/restart.log"; return 1; }
	grep -a CUDA "$d/ckpt.log" "$d/restart.log"
	note "image $(stat -c %s "$d/img") bytes"
	touch "$d/go"
	wait_for "$d/out" 'DONE\|Error' 120 || return 1
	grep -a '^step' "$d/ref" > "$d/ref.steps"
	grep -a '^step' "$d/out" > "$d/out.steps"
	note "$(wc -l < "$d/out.steps") steps after restart, $(wc -l < "$d/ref.steps") uninterrupted"
	sed -n '1p;20p;21p;60p' "$d/out.steps"
	[ "$(wc -l < "$d/ref.steps")" = 60 ] && cmp "$d/ref.steps" "$d/out.steps"
}

# two CUDA processes in one tree (children of a shell): both locked,
# checkpointed and restored, in parallel
test_gpu_tree() {
	local d=$WORK/tree root a b
	mkdir -p "$d/a" "$d/b"
	setsid bash -c "'$G/memhold' 128 '$d/a' > '$d/a/out' 2>&1 & '$G/memhold' 128 '$d/b' > '$d/b/out' 2>&1 & wait" \
		< /dev/null > /dev/null 2>&1 &
	root=$!
	track $root
	wait_for "$d/a/out" READY 60 && wait_for "$d/b/out" READY 60 || return 1
	a=$(awk '/READY/{print $2}' "$d/a/out"); b=$(awk '/READY/{print $2}' "$d/b/out")
	track $a $b
	ck checkpoint --kill -v -o "$d/img" "$root" 2> "$d/ckpt.log" || { cat "$d/ckpt.log"; return 1; }
	grep -a CUDA "$d/ckpt.log"
	[ "$(grep -ac 'CUDA lock' "$d/ckpt.log")" = 2 ] || return 1
	gone "$root" && gone "$a" && gone "$b" || return 1
	ck restart --detach -v "$d/img" 2> "$d/restart.log" || { cat "$d/restart.log"; return 1; }
	grep -a CUDA "$d/restart.log"
	finish "$d/a" && finish "$d/b"
}

# refused DIR PATTERN CMD...: the checkpoint fails with PATTERN, the
# target runs on untouched and passes its own check
refused() {
	local d=$1 pat=$2 rc
	shift 2
	timeout -k 5 90 "$@" checkpoint --kill -o "$d/img" "$pid" 2> "$d/ckpt.log"
	rc=$?
	cat "$d/ckpt.log"
	[ $rc = 1 ] || { echo "checkpoint exit $rc, not 1"; return 1; }
	grep -aq "$pat" "$d/ckpt.log" || { echo "message is not '$pat'"; return 1; }
	kill -0 "$pid" || { echo "target gone"; return 1; }
	grep -q TracerPid:.0 /proc/$pid/status || { echo "target still traced"; return 1; }
}

libcuda_path() { grep -m1 -o '/[^ ]*libcuda\.so[^ ]*' /proc/$1/maps; }

test_gpu_refuse_no_driver() {
	local d=$WORK/nodrv lib
	start_memhold "$d" 64 || return 1
	lib=$(readlink -f "$(libcuda_path "$pid")")
	refused "$d" "pid $pid fd [0-9]*: /dev/nvidia[^:]*: the CUDA driver is not available" \
		unshare -m sh -c "mount --bind /dev/null '$lib' && exec '$CKPT' \"\$@\"" ckpt || return 1
	finish "$d"
}

test_gpu_refuse_old_driver() {
	local d=$WORK/olddrv
	start_memhold "$d" 64 || return 1
	refused "$d" "pid $pid fd [0-9]*: /dev/nvidia[^:]*: the CUDA driver (module .*) cannot checkpoint a process: it has no cuCheckpointProcess\* API (driver r570 or later needed)" \
		env LD_LIBRARY_PATH="$G/fake" "$CKPT" || return 1
	finish "$d"
}

test_gpu_refuse_shared() {
	local d=$WORK/shared parent
	start_memhold "$d" 64 fork || return 1
	parent=$(awk '{print $4}' /proc/$pid/stat)
	refused "$d" "pid $pid fd [0-9]*: /dev/nvidia.* is shared with pid $parent, outside the tree" "$CKPT" || return 1
	finish "$d"
}

test_gpu_refuse_busy() {
	local d=$WORK/busy
	start_memhold "$d" 64 spin || return 1
	refused "$d" "pid $pid fd [0-9]*: /dev/nvidia[^:]*: the CUDA driver could not lock it (within 1000 ms)" \
		env CKPT_CUDA_LOCK_TIMEOUT_MS=1000 "$CKPT" || return 1
	finish "$d"
}

# managed (unified) memory: the driver (r580) says it cannot checkpoint
# it, after the lock: refused, unlocked, the target runs on
test_gpu_refuse_managed() {
	local d=$WORK/managed
	start_memhold "$d" 64 managed || return 1
	refused "$d" "pid $pid fd [0-9]*: /dev/nvidia[^:]*: the CUDA driver could not checkpoint it: CUDA_ERROR_NOT_SUPPORTED" \
		"$CKPT" || return 1
	finish "$d"
}

# an image with GPU state, where the driver is not: refused at restart
test_gpu_restart_no_driver() {
	local d=$WORK/rnodrv lib rc
	start_memhold "$d" 64 || return 1
	lib=$(readlink -f "$(libcuda_path "$pid")")
	ck checkpoint --kill -o "$d/img" "$pid" || return 1
	gone "$pid" || return 1
	unshare -m sh -c "mount --bind /dev/null '$lib' && exec '$CKPT' restart --detach '$d/img'" 2> "$d/restart.log"
	rc=$?
	cat "$d/restart.log"
	[ $rc = 125 ] && grep -aq "pid $pid: the image holds its GPU state (CUDA, devices .*), but the CUDA driver is not available" "$d/restart.log" || return 1
	! kill -0 "$pid" 2>/dev/null || { echo "pid $pid exists"; return 1; }
	ck restart --detach "$d/img" || return 1
	finish "$d"
}

# SIGTERM to ckpt while the driver checkpoints: ckpt dies of it, the
# target runs on, back on its GPU
test_gpu_cancel() {
	local d=$WORK/cancel cp rc
	start_memhold "$d" 8192 || return 1
	"$CKPT" checkpoint --kill -v -o "$d/img" "$pid" 2> "$d/ckpt.log" &
	cp=$!
	sleep 0.3
	kill -TERM $cp
	wait $cp
	rc=$?
	cat "$d/ckpt.log"
	[ $rc = 143 ] || { echo "checkpoint exit $rc, not 143"; return 1; }
	grep -aq "interrupted by a signal" "$d/ckpt.log" || return 1
	kill -0 "$pid" || return 1
	finish "$d"
}

echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
want gpu_memhold
want gpu_live
want gpu_pipe
want gpu_torch
want gpu_tree
want gpu_refuse_no_driver
want gpu_refuse_old_driver
want gpu_refuse_shared
want gpu_refuse_busy
want gpu_refuse_managed
want gpu_restart_no_driver
want gpu_cancel
[ ${#FAILS[@]} = 0 ] || echo "failed: ${FAILS[*]}"
echo "$PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
