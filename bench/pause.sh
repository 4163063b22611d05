#!/usr/bin/env bash
# pause.sh - how long a live checkpoint stops its target (the target's own
# longest gap between two clock reads), against the checkpoint's wall
# time, for a few sizes; median of 5.  usage: bench/pause.sh [CKPT]
set -u
cd "$(dirname "$0")/.."
CKPT=${1:-build/ckpt}
# a descriptor we inherited would be the target's, and refused
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
W=$(mktemp -d /dev/shm/ckpt-pause.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$W"' EXIT
cc -O2 -o "$W/pause" bench/pause.c || exit 1
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-8s %14s %14s\n' MiB "stopped (ms)" "ckpt (ms)"
for mib in 1 26 256; do
	: > "$W/gaps"
	: > "$W/walls"
	for i in 1 2 3 4 5; do
		rm -f "$W/go" "$W/img"
		"$W/pause" $mib "$W/go" > "$W/out" &
		pid=$!
		until grep -q READY "$W/out" 2>/dev/null; do sleep 0.01; done
		sleep 0.2
		t0=$(date +%s%N)
		"$CKPT" checkpoint -o "$W/img" $pid || exit 1
		echo $(( ($(date +%s%N) - t0) / 1000 )) >> "$W/walls"
		sleep 0.1
		touch "$W/go"
		wait $pid
		awk '/^GAP_US/ { print $2 }' "$W/out" >> "$W/gaps"
	done
	printf '%-8s %14.1f %14.1f\n' $mib "$(median < "$W/gaps" | awk '{ print $1 / 1000 }')" \
		"$(median < "$W/walls" | awk '{ print $1 / 1000 }')"
done
