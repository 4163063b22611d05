#!/usr/bin/env bash
# bench/gpu.sh - checkpoint --kill and restart --detach of a CUDA process
# holding N MiB of GPU memory (tests/gpu/memhold.cu), each split into
# the CUDA driver's calls and ckpt's own work (from `-v`).  The restored
# process checks every element before a row counts.  Table on stdout.
# env: GPU_MIB (sizes, default "256 1024 4096 16384"), REPS (default 1),
#      IMG_DIR (default /dev/shm), CKPT (default build/ckpt), MEMHOLD
#      (default build/gpu/memhold)
set -u
cd "$(dirname "$0")/.."
CKPT=${CKPT:-build/ckpt}
MEMHOLD=${MEMHOLD:-build/gpu/memhold}
SIZES=${GPU_MIB:-256 1024 4096 16384}
REPS=${REPS:-1}
IMG_DIR=${IMG_DIR:-/dev/shm}
if [ ! -e /dev/nvidiactl ]; then
	echo "no NVIDIA GPU here (/dev/nvidiactl absent): nothing measured" >&2
	exit 0
fi
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
W=$(mktemp -d "$IMG_DIR/ckpt-gpubench.XXXXXX")
trap 'rm -rf "$W"' EXIT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# the sum of the NAME ms figures in a -v log: "CUDA lock 0.2 ms,
# checkpoint 549.1 ms, ..." at checkpoint, "CUDA restore 409.1 ms" and
# "CUDA unlock 1.3 ms" at restart
drv() { grep -ao "[ ,]$1 [0-9.]* ms" "$2" | awk '{s += $2} END {printf "%.0f", s}'; }

echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" >&2
printf '| GPU MiB | image MiB | checkpoint ms | driver lock+checkpoint ms | ckpt own ms | restart ms | driver restore+unlock ms | ckpt own ms | check |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for mib in $SIZES; do
	for ((r = 0; r < REPS; r++)); do
		d=$W/$mib.$r
		mkdir -p "$d"
		setsid "$MEMHOLD" "$mib" "$d" > "$d/out" 2>&1 < /dev/null &
		for ((i = 0; i < 6000; i++)); do grep -q 'READY\|FAIL' "$d/out" && break; sleep 0.01; done
		pid=$(awk '/READY/{print $2}' "$d/out")
		[ -n "$pid" ] || { echo "memhold $mib: $(cat "$d/out")" >&2; continue; }
		t0=$(date +%s%N)
		"$CKPT" checkpoint --kill -v -o "$d/img" "$pid" 2> "$d/ck.log" || { tail -3 "$d/ck.log" >&2; kill -9 $pid; continue; }
		ck=$(ms $t0)
		for ((i = 0; i < 500; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
		t0=$(date +%s%N)
		"$CKPT" restart --detach -v "$d/img" 2> "$d/rs.log" > /dev/null || { tail -3 "$d/rs.log" >&2; continue; }
		rs=$(ms $t0)
		touch "$d/go"
		for ((i = 0; i < 12000; i++)); do grep -q 'PASS\|FAIL' "$d/out" && break; sleep 0.01; done
		ok=$(grep -ao 'PASS\|FAIL.*' "$d/out" | head -1)
		dck=$(( $(drv lock "$d/ck.log") + $(drv checkpoint "$d/ck.log") ))
		drs=$(( $(drv restore "$d/rs.log") + $(drv unlock "$d/rs.log") ))
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$mib" \
			$(( $(stat -c %s "$d/img") >> 20 )) "$ck" "$dck" $((ck - dck)) \
			"$rs" "$drs" $((rs - drs)) "${ok:-none}"
		kill -9 "$pid" 2>/dev/null
		rm -f "$d/img"
	done
done
