#!/bin/bash
# seeds.sh DIR - real images to start fuzzing from: the test programs of
# several kinds (a tree, threads, files, pipes, sockets, timers, signals,
# a terminal, SysV memory, seccomp, a --compress image), each checkpointed with --kill by the
# release build, then slimmed (fuzz/slim.py: a page or two of memory, the
# records whole).  Needs root; `make test`'s programs built.
set -u
out=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CKPT=$ROOT/build/ckpt
PROGS=$ROOT/build/test/progs
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for p in tree threads files pipeline unix_stream unix_dgram inet timers signals \
	 pty sysvshm seccomp epoll eventfd timerfd signalfd inotify locks unix_scm \
	 pidfd fanotify nsfs_fd packet_sock netlink_sock cgroup lease mem_text; do
	[ -x "$PROGS/$p" ] || continue
	d=$work/$p
	mkdir -p "$d"
	(exec 251>&- 2>/dev/null; MEM_TEXT_MIB=1 TP_TMPDIR=$d setsid "$PROGS/$p" "$d/go" > "$d/out" 2>&1 < /dev/null &
	 echo $! > "$d/pid")
	for ((i = 0; i < 200; i++)); do
		grep -q READY "$d/out" 2>/dev/null && break
		sleep 0.05
	done
	pid=$(cat "$d/pid")
	if "$CKPT" checkpoint --kill $(cat "$ROOT/tests/progs/$p.flags" 2>/dev/null) \
			-o "$d/img" "$pid" 2> "$d/err"; then
		/usr/bin/python3 "$ROOT/fuzz/slim.py" "$d/img" "$out/$p.img" || rm -f "$out/$p.img"
		# restarted and let finish: what the checkpoint holds for a
		# restart (a TCP connection's network lock) is let go
		( sleep 0.3; touch "$d/go" ) &
		timeout 60 "$CKPT" restart "$d/img" > /dev/null 2>&1 < /dev/null
	else
		kill -9 "$pid" 2>/dev/null
	fi
	[ -f "$d/shm_ids" ] && for id in $(cat "$d/shm_ids"); do ipcrm -m "$id" 2>/dev/null; done
done
n=$(ls "$out"/*.img 2>/dev/null | wc -l)
echo "seeds: $n images in $out"
[ $n -gt 0 ]
