#!/usr/bin/env bash
# bench/criu-dropin.sh - runc checkpoint and restore of a busybox
# container (a shell counting ten times a second: tests/cases/criu.sh's
# criu_runc) with ckpt as runc's criu, and with CRIU, side by side in
# one run: the wall time of each `runc --criu X checkpoint` and
# `runc --criu X restore -d`, median (min-max) of REPS runs each.
#
#   bench/criu-dropin.sh        as root; about half a minute
#
# Environment (all optional):
#   CKPT=PATH   ckpt to measure (default: `make build/ckpt`, then it)
#   CRIU=PATH   CRIU to compare (default: .zdtm/criu/criu/criu of the
#               main checkout, CRIU 4.2, else `criu` on PATH)
#   REPS=5      runs of each
# CRIU wants the RLIMIT_NOFILE hard limit within what it may set: it is
# lowered to 20000 here first if higher (root may lack CAP_SYS_RESOURCE).
# Each restored container is checked to count on before its time counts.
# Everything made (containers, their groups, the bundle) goes on exit.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
REPS=${REPS:-5}
if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt > /dev/null
	CKPT=$ROOT/build/ckpt
fi
if [ -z "${CRIU:-}" ]; then
	CRIU=$(git -C "$ROOT" worktree list --porcelain | awk '/^worktree/ { print $2; exit }')/.zdtm/criu/criu/criu
	[ -x "$CRIU" ] || CRIU=$(command -v criu)
fi
[ "$(ulimit -Hn)" -le 20000 ] || ulimit -Hn 20000

W=$(mktemp -d)
ID=ckpt-bench-$$
cleanup() {
	runc kill $ID KILL > /dev/null 2>&1 || :
	runc delete -f $ID > /dev/null 2>&1 || :
	for i in $(seq 100); do
		rmdir /sys/fs/cgroup/*/$ID 2> /dev/null || :
		ls -d /sys/fs/cgroup/*/$ID > /dev/null 2>&1 || break
		sleep 0.05
	done
	rm -rf "$W"
}
trap cleanup EXIT

r=$W/b/rootfs
mkdir -p $r/bin $r/proc $r/dev $r/sys $r/tmp
cp /bin/busybox $r/bin/
for c in sh echo sleep; do ln -s busybox $r/bin/$c; done
(cd $W/b && runc spec)
python3 - $W/b/config.json <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", "n=0; while :; do n=$((n+1)); echo $n > /tmp/count; sleep 0.1; done"]
c["root"]["readonly"] = False
json.dump(c, open(p, "w"), indent=1)
PY

ms() { date +%s%N; }

counts_on() {
	local a b i
	a=$(cat $r/tmp/count 2> /dev/null || echo 0)
	for i in $(seq 100); do
		sleep 0.05
		b=$(cat $r/tmp/count 2> /dev/null || echo 0)
		[ "$b" -gt $((a + 2)) ] && return 0
	done
	echo "the container does not count on" >&2
	return 1
}

# one checkpoint and restore with criu binary $1: "DUMP_MS RESTORE_MS"
once() {
	local t0 t1 t2
	rm -rf $W/img $r/tmp/count
	(cd $W/b && runc run -d $ID < /dev/null > /dev/null 2>&1)
	counts_on
	sync
	t0=$(ms)
	runc --criu "$1" checkpoint --image-path $W/img $ID
	t1=$(ms)
	(cd $W/b && runc --criu "$1" restore -d --image-path $W/img $ID < /dev/null > /dev/null)
	t2=$(ms)
	counts_on
	runc kill $ID KILL
	for i in $(seq 100); do
		runc delete $ID > /dev/null 2>&1 && break
		sleep 0.05
	done
	echo $(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000))
}

# median (min-max) of the numbers on stdin
stats() {
	sort -n | awk '{ v[NR] = $1 } END { printf "%d ms (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

declare -A D R
for ((i = 0; i < REPS; i++)); do
	for tool in ckpt criu; do	# alternating, so that both see the same machine
		bin=$CKPT
		[ $tool = criu ] && bin=$CRIU
		read -r d rs < <(once "$bin")
		D[$tool]+="$d "
		R[$tool]+="$rs "
	done
done
echo "runc $(runc --version | head -1 | awk '{ print $3 }'), busybox counter container, $REPS runs each, median (min-max)"
printf '%-28s %-22s %-22s\n' "" "runc checkpoint" "runc restore -d"
printf '%-28s %-22s %-22s\n' "ckpt $("$CKPT" --version | awk '{ print $2 }') (swrk)" \
	"$(tr ' ' '\n' <<< "${D[ckpt]}" | grep . | stats)" "$(tr ' ' '\n' <<< "${R[ckpt]}" | grep . | stats)"
printf '%-28s %-22s %-22s\n' "CRIU $("$CRIU" --version | awk '/^Version/ { print $2 }')" \
	"$(tr ' ' '\n' <<< "${D[criu]}" | grep . | stats)" "$(tr ' ' '\n' <<< "${R[criu]}" | grep . | stats)"
