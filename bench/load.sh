#!/usr/bin/env bash
# bench/load.sh - ckpt far past the usual: its time and its own peak memory
# (maximum RSS) to checkpoint (--kill) and restart (--detach) each of
#   a 1,000-process tree, a process of 10,000 threads, one of 19,000 open
#   files, one of 60,000 memory areas, a 16 GiB sparse process,
#   and 20 checkpoints of 20-process trees at once (then their restarts),
# each restored process checking that what it had is all there (PASS).
#
#   bench/load.sh            as root; a few minutes
#
# Environment: CKPT=PATH (default build/ckpt), IMG_DIR (default /dev/shm),
# and the sizes: PROCS=1000 THREADS=10000 FDS=19000 VMAS=60000 GIB=16
# PAR=20 (concurrent checkpoints) PARPROCS=20.  The limits of a machine
# like this one bound two of them: RLIMIT_NOFILE's hard limit (20,000
# here, which root without CAP_SYS_RESOURCE cannot raise) and
# vm.max_map_count (65,530).
set -uo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
CKPT=${CKPT:-$ROOT/build/ckpt}
PROCS=${PROCS:-1000} THREADS=${THREADS:-10000} FDS=${FDS:-19000}
VMAS=${VMAS:-60000} GIB=${GIB:-16} PAR=${PAR:-20} PARPROCS=${PARPROCS:-20}
W=$(mktemp -d)
IMG=$(mktemp -d "${IMG_DIR:-/dev/shm}/ckpt-load.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = load ] && kill -KILL -- -"$p" "$p" 2>/dev/null
	done
	rm -rf "$W" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -x "$CKPT" ] || make -C "$ROOT" -s build/ckpt || exit 1
gcc -O2 -pthread -o "$W/load" "$HERE/load.c" || exit 1

# start NAME MODE N: the program, in a session of its own; sets PID
start() {
	rm -f "$W/$1.out"
	(exec 251>&- 2>/dev/null; setsid "$W/load" "$2" "$3" > "$W/$1.out" 2>&1 < /dev/null &)
	for ((i = 0; i < 6000; i++)); do
		grep -q READY "$W/$1.out" 2>/dev/null && break
		sleep 0.01
	done
	PID=$(awk '/READY/ { print $2 }' "$W/$1.out")
	[ -n "$PID" ] || { echo "$1: did not start: $(head -c 300 "$W/$1.out")"; return 1; }
	PIDS+=("$PID")
}

# timed OUT CMD...: CMD under /usr/bin/time; OUT gets "SECONDS MAXRSS_KB"
timed() {
	local out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$out" "$@"
}

# verdict NAME PID: let it check itself after the restart
verdict() {
	kill -USR1 "$2"
	for ((i = 0; i < 3000; i++)); do
		grep -q "^PASS\|^FAIL" "$W/$1.out" && break
		sleep 0.01
	done
	grep -m1 "^PASS\|^FAIL" "$W/$1.out" || echo "no verdict"
}

row() {	# NAME MODE N
	local c r size
	start "$1" "$2" "$3" || return
	if ! timed "$W/c.t" "$CKPT" checkpoint --kill -o "$IMG/$1.img" "$PID" 2> "$W/c.err"; then
		printf '%-22s checkpoint failed: %s\n' "$1" "$(head -1 "$W/c.err")"
		return
	fi
	size=$(du -m --apparent-size "$IMG/$1.img" | cut -f1)
	for ((i = 0; i < 500; i++)); do [ -d /proc/$PID ] || break; sleep 0.01; done
	if ! timed "$W/r.t" "$CKPT" restart --detach "$IMG/$1.img" > /dev/null 2> "$W/r.err"; then
		printf '%-22s restart failed: %s\n' "$1" "$(head -1 "$W/r.err")"
		return
	fi
	read -r cs cm < "$W/c.t"
	read -r rs rm < "$W/r.t"
	printf '%-22s %8s %9s %8s %9s %7s  %s\n' "$1" "$cs" "$((cm / 1024))" \
		"$rs" "$((rm / 1024))" "$size" "$(verdict "$1" "$PID")"
	kill -KILL -- -"$PID" 2>/dev/null
	rm -f "$IMG/$1.img"
}

# PAR trees of PARPROCS checkpointed at once, then restarted at once
parallel() {
	local pids=() t0 t1 max=0 rmax=0 pass=0
	for ((k = 0; k < PAR; k++)); do
		start "par$k" tree "$PARPROCS" || return
		pids+=("$PID")
	done
	t0=$(date +%s.%N)
	for ((k = 0; k < PAR; k++)); do
		timed "$W/pc$k.t" "$CKPT" checkpoint --kill -o "$IMG/par$k.img" "${pids[k]}" 2> "$W/pc$k.err" &
	done
	wait
	t1=$(date +%s.%N)
	sleep 0.5
	for ((k = 0; k < PAR; k++)); do
		timed "$W/pr$k.t" "$CKPT" restart --detach "$IMG/par$k.img" > /dev/null 2> "$W/pr$k.err" &
	done
	wait
	for ((k = 0; k < PAR; k++)); do
		read -r _ m < "$W/pc$k.t"; [ "${m:-0}" -gt $max ] && max=$m
		read -r _ m < "$W/pr$k.t"; [ "${m:-0}" -gt $rmax ] && rmax=$m
		verdict "par$k" "${pids[k]}" | grep -q PASS && pass=$((pass + 1))
		kill -KILL -- -"${pids[k]}" 2>/dev/null
	done
	printf '%-22s %8.2f %9s %8s %9s %7s  %d of %d PASS\n' "${PAR}x${PARPROCS} at once" \
		"$(echo "$t1 - $t0" | bc)" "$((max / 1024))" "-" "$((rmax / 1024))" "-" "$pass" "$PAR"
}

echo "ckpt $("$CKPT" --version 2>&1 | head -1), $(uname -r), $(nproc) CPUs; images in ${IMG%/*}"
printf '%-22s %8s %9s %8s %9s %7s  %s\n' "" "ckpt s" "ckpt MiB" \
	"rst s" "rst MiB" "img MiB" "restored"
row "tree of $PROCS" tree "$PROCS"
row "$THREADS threads" threads "$THREADS"
row "$FDS fds" fds "$FDS"
row "$VMAS areas" vmas "$VMAS"
row "$GIB GiB sparse" sparse "$GIB"
parallel
