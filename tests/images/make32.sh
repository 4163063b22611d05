#!/usr/bin/env bash
# make32.sh - remake tests/images/holder32.img.gz: the image of a 32-bit
# process (tests/aux/holder.c built 32-bit, with no extra memory), kept
# so that the suite has a 32-bit image to forge and refuse on a kernel
# that cannot run 32-bit programs (tests/cases/images.sh).  Run it on a
# machine that can, after `make test` built the programs, whenever the
# image format changes.
set -eu
cd "$(dirname "$0")/../.."
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
build/test/aux/holder32 plain "$d/go" 0 > "$d/out" 2>&1 < /dev/null &
pid=$!
for ((i = 0; i < 500; i++)); do
	grep -q READY "$d/out" && break
	sleep 0.01
done
build/test/ckpt checkpoint --kill -o "$d/img" $pid
wait $pid 2> /dev/null || true
gzip -9 -n -c "$d/img" > tests/images/holder32.img.gz
build/test/ckpt info "$d/img" | head -2
