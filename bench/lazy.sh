#!/usr/bin/env bash
# lazy.sh - restart --lazy against a plain restart of a large process
# (bench/lazy.c): the time from `ckpt restart` starting to the process's
# first instruction, and to all of its memory read once by it (while the
# loader fills it from the top: lazy.c reads from the bottom), and when
# the loader is done (its -v line, from its start); images on /dev/shm,
# median of REPS (3).  With --page-server, a third mode: restart --lazy
# through `ckpt page-server` on 127.0.0.1 (its throughput: the loader's
# bytes from the server over its time).  After the modes of each size,
# the limit the loader is held to in the same run: the image placed into
# fresh memory by batched UFFDIO_COPY (bench/hwlimit.c), on one CPU and
# on all, and the loader's speed as a share of it.  With --shared the
# process's memory is shared anonymous memory (MAP_SHARED), which the
# loader serves by its object (src/lazy_shm.c).  LAZY_IDLE=1: the
# process reads none of its memory after the restart (the loader's own
# speed, with no fault to serve; "all in" is then its first instruction).
# usage: bench/lazy.sh [--shared] [--page-server] [CKPT] [MIB...]
set -u
cd "$(dirname "$0")/.."
MODES="plain lazy"
if [ "${1:-}" = --shared ]; then
	export LAZY_SHARED=1
	shift
fi
if [ "${1:-}" = --page-server ]; then
	MODES="plain lazy server"
	shift
fi
CKPT=${1:-build/ckpt}
shift
SIZES=${*:-1024 2048}
REPS=${REPS:-3}
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
W=$(mktemp -d /dev/shm/ckpt-lazy.XXXXXX)
pid=
srv=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$W"' EXIT
cc -O2 -o "$W/lazy" bench/lazy.c || exit 1
gcc -std=gnu11 -O2 -pthread -o "$W/hwlimit" bench/hwlimit.c bench/hwlimit_take.c || exit 1
NCPU=$(nproc)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# restart of $W/img as MODE, detached
restart() {	# MODE
	local port
	case $1 in
	plain) "$CKPT" restart --detach "$W/img" ;;
	lazy) "$CKPT" restart --detach --lazy -v "$W/img" ;;
	server)
		"$CKPT" page-server --port 0 -v "$W/img" 2> "$W/srv" &
		srv=$!
		until grep -q 'serving' "$W/srv" 2>/dev/null; do sleep 0.01; done
		port=$(sed -n 's/.* port \([0-9]*\)$/\1/p' "$W/srv")
		t0=${EPOCHREALTIME/./}	# (the server's start is not restart's)
		"$CKPT" restart --detach --lazy -v --page-server 127.0.0.1:$port "$W/img" ;;
	esac
}

printf '%-6s %-6s %12s %12s %12s %12s %10s\n' MiB mode "first (ms)" "all in (ms)" "restart (ms)" "loader (ms)" "MB/s"
for mib in $SIZES; do
	for mode in $MODES; do
		: > "$W/first"; : > "$W/all"; : > "$W/wall"; : > "$W/loader"; : > "$W/rate"
		for ((i = 0; i < REPS; i++)); do
			rm -f "$W/img" "$W/res"
			"$W/lazy" $mib "$W/res" > "$W/out" &
			pid=$!
			until grep -q READY "$W/out" 2>/dev/null; do sleep 0.01; done
			# (the braces' 2>/dev/null silence bash's "Killed" note on
			# its job, wherever bash notices it)
			{ "$CKPT" checkpoint --kill -o "$W/img" $pid 2>&3 || exit 1; } 3>&2 2>/dev/null
			{ wait $pid; } 2>/dev/null
			while kill -0 $pid 2>/dev/null; do sleep 0.01; done
			sleep 0.3	# the gap lazy.c waits for, whatever the size
			# every restart and limit meets memory in the same state
			# (this VM's first touch of a page: bench/README.md)
			"$W/hwlimit" prime $((mib * 2)) || exit 1
			t0=${EPOCHREALTIME/./}
			restart $mode > /dev/null 2> "$W/err" || { cat "$W/err"; exit 1; }
			t1=${EPOCHREALTIME/./}
			until [ -s "$W/res" ]; do sleep 0.01; done
			sleep 0.05
			read -r first all _ < "$W/res"
			echo $(( (first / 1000 - t0) )) >> "$W/first"
			echo $(( (all / 1000 - t0) )) >> "$W/all"
			echo $(( t1 - t0 )) >> "$W/wall"
			if [ $mode != plain ]; then	# (its other areas too)
				until grep -q 'loader done\|loader ended' "$W/err"; do sleep 0.01; done
				sed -n 's/.*loader done in \([0-9.]*\) ms.*/\1/p' "$W/err" >> "$W/loader"
			else
				echo - >> "$W/loader"
			fi
			if [ $mode = server ]; then
				until grep -q 'MB/s' "$W/err"; do sleep 0.01; done
				sed -n 's/.*page server, \([0-9.]*\) MB\/s.*/\1/p' "$W/err" >> "$W/rate"
				wait $srv
				srv=
			else
				echo - >> "$W/rate"
			fi
			kill -9 $pid
			while kill -0 $pid 2>/dev/null; do sleep 0.01; done
			pid=
		done
		printf '%-6s %-6s %12.1f %12.1f %12.1f %12s %10s\n' $mib $mode \
			$(median < "$W/first" | awk '{print $1 / 1000}') \
			$(median < "$W/all" | awk '{print $1 / 1000}') \
			$(median < "$W/wall" | awk '{print $1 / 1000}') \
			$(median < "$W/loader") $(median < "$W/rate")
		[ $mode = lazy ] && loader=$(median < "$W/loader")
	done
	# The limit the loader is held to: the last image's bytes placed
	# into fresh memory by batched UFFDIO_COPY from a buffer pread(2)
	# fills, as the loader does (hwlimit place uffdbuf), on one CPU and
	# split over all of them
	for n in 1 $NCPU; do
		: > "$W/lim"
		for ((i = 0; i < REPS; i++)); do
			"$W/hwlimit" prime $((mib * 2)) || exit 1
			"$W/hwlimit" place uffdbuf "$W/img" $n | awk '{ print $1 * 1000 }' >> "$W/lim" || exit 1
		done
		lim=$(median < "$W/lim")
		printf '%-6s %-6s %12s %12s %12s %12.1f %10s\n' $mib "uffd/$n" - - - "$lim" \
			"$(awk -v b="$(stat -c %s "$W/img")" -v t="$lim" 'BEGIN { printf "%.0f", b / 1e3 / t }')"
		[ -n "${loader:-}" ] && awk -v l="$loader" -v t="$lim" -v n=$n \
			'BEGIN { printf "       the lazy loader at %.2fx the speed of UFFDIO_COPY on %d CPU(s)\n", t / l, n }'
	done
done
