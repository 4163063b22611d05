#!/bin/sh
# init.sh - the guest's init (tests/arch/run.sh): each state test of
# /progs by the protocol of tests/README.md (start, READY, checkpoint
# --kill, restart, go, PASS), its result, then `N passed, N failed`, and
# the machine off.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2> /dev/null
mount -t tmpfs tmp /tmp
ifconfig lo 127.0.0.1 up 2> /dev/null
mkdir -p /dev/pts
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts 2> /dev/null
ln -s /proc/self/fd /dev/fd	# a script run from a memfd is /dev/fd/N
# sock_diag for unix, netlink, packet, TCP, UDP and raw sockets: modules here
for m in unix_diag netlink_diag af_packet_diag inet_diag tcp_diag udp_diag raw_diag; do
	[ -f /modules/$m.ko ] && insmod /modules/$m.ko
done
echo "=== ckpt arch tests: $(uname -m) $(uname -r)"
pass=0
fail=0
skip=0
# what this kernel lacks, by the line ckpt refuses it with: the test is
# skipped (and said so), not failed, where the kernel is older than that
kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2 | cut -d- -f1)
# run.sh VERBOSE=1: ckpt -v, every output, shorter limits
V= LIMIT=300
grep -q ckpt_verbose /proc/cmdline && V=-v LIMIT=60

older_than() { [ "$kmaj" -lt "$1" ] || { [ "$kmaj" -eq "$1" ] && [ "$kmin" -lt "$2" ]; }; }

wait_for() {	# FILE PATTERN TENTHS
	i=0
	while [ $i -lt $3 ]; do
		grep -q "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

state_test() {	# PROG
	d=$(mktemp -d /tmp/t.XXXXXX)
	chmod 755 "$d"	# for a program that drops its ids (creds)
	TP_TMPDIR=$d "$1" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY 300 || { echo "not ready"; cat "$d/out"; kill -9 $pid; return 1; }
	sleep 0.3
	# NAME.flags: the checkpoint options it needs
	if ! timeout $LIMIT ckpt checkpoint $V --kill $(cat "$1.flags" 2> /dev/null) \
			-o "$d/img" $pid 2> "$d/ckpt.err"; then
		cat "$d/ckpt.err" "$d/out"
		kill -9 $pid 2> /dev/null
		grep -q '(Linux 6.4+)' "$d/ckpt.err" && older_than 6 4 && return 2
		# the cross build has no libzstd: --compress (mem_text) is refused
		grep -q 'built without zstd' "$d/ckpt.err" && return 2
		return 1
	fi
	wait $pid 2> /dev/null
	timeout $LIMIT ckpt restart $V "$d/img" > "$d/restart.out" 2>&1 &
	rpid=$!
	sleep 1
	touch "$d/go"
	wait $rpid
	rc=$?
	[ -n "$V" ] && cat "$d/ckpt.err"
	cat "$d/out" "$d/restart.out"
	[ $rc = 0 ] && grep -q '^PASS' "$d/out" && ! grep -q '^FAIL' "$d/out"
}

# PROG.refuse: a program ckpt must refuse (a 31-bit task on s390x).  The
# checkpoint --kill fails with that line alone (the image ends in an
# ERROR record saying so), and the program runs on untraced to its own
# PASS.
refuse_test() {	# PROG
	d=$(mktemp -d /tmp/r.XXXXXX)
	"$1" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY 300 || { echo "not ready"; cat "$d/out"; kill -9 $pid; return 1; }
	if timeout $LIMIT ckpt checkpoint $V --kill -o "$d/img" $pid 2> "$d/ckpt.err"; then
		echo "checkpoint not refused"
		return 1
	fi
	cat "$d/ckpt.err"
	why=
	grep -q -f "$1.refuse" "$d/ckpt.err" || why="not refused with: $(cat "$1.refuse")"
	[ -n "$V" ] || [ "$(wc -l < "$d/ckpt.err")" = 1 ] || why="${why:-more than one line}"
	kill -0 $pid 2> /dev/null || why="${why:-target gone}"
	tp=$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$pid/status 2> /dev/null)
	[ "$tp" = 0 ] || why="${why:-still traced}"
	touch "$d/go"
	wait $pid
	grep -q '^PASS' "$d/out" || why="${why:-target harmed: $(head -3 "$d/out")}"
	kill -9 $pid 2> /dev/null
	[ -z "$why" ] || { echo "$why"; return 1; }
}

for p in /progs/*; do
	n=$(basename "$p")
	[ "${n%.flags}" = "$n" ] && [ "${n%.refuse}" = "$n" ] || continue
	# in a child of ours: a program whose parent is init is in an
	# orphaned process group, where SIGTSTP does not stop (stopped_pending)
	if [ -f "$p.refuse" ]; then
		(refuse_test "$p") > /tmp/log 2>&1
		rc=$?
		n=refuse_$n
	else
		(state_test "$p") > /tmp/log 2>&1
		rc=$?
		n=state_$n
	fi
	if [ $rc = 0 ]; then
		echo "ok   $n"
		[ -n "$V" ] && sed 's/^/     /' /tmp/log
		pass=$((pass + 1))
	elif [ $rc = 2 ]; then
		why=$(grep -o '[^:]*(Linux [0-9.]*+)' /tmp/log | head -1 | sed 's/^ *//')
		if [ -n "$why" ]; then
			echo "skip $n (refused as it must be on Linux $(uname -r): $why)"
		else
			echo "skip $n (--compress: this ckpt is built without zstd)"
		fi
		skip=$((skip + 1))
	else
		echo "FAIL $n"
		if [ -n "$V" ]; then sed 's/^/     /' /tmp/log; else sed 's/^/     /' /tmp/log | tail -15; fi
		fail=$((fail + 1))
	fi
done
# Kill points (run.sh's KILLPROGS, with the test build /bin/ckpt-hooks):
# ckpt killed at test points spread over a checkpoint of a program
# (CKPT_TEST_KILL_AT, src/testpoint.h), which must run on untraced, its
# mappings as they were, and pass its own checks at the end: the guard
# frame (src/arch/ARCH/guard.c) at work.
KPOINTS=12
kill_one() {	# PROG K: says why not, if not
	d=$(mktemp -d /tmp/k.XXXXXX)
	chmod 755 "$d"
	TP_TMPDIR=$d "$1" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY 300 || { echo "not ready"; kill -9 $pid; return 1; }
	sleep 0.2
	cat /proc/$pid/maps > "$d/maps"
	CKPT_TEST_KILL_AT=$2 timeout $LIMIT ckpt-hooks checkpoint -o "$d/img" $pid \
		> /dev/null 2> "$d/ckpt.err"
	i=0
	while [ $i -lt 100 ]; do
		tp=$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$pid/status 2> /dev/null)
		[ "$tp" = 0 ] && [ "$(cat /proc/$pid/maps)" = "$(cat "$d/maps")" ] && break
		sleep 0.02
		i=$((i + 1))
	done
	why=
	kill -0 $pid 2> /dev/null || why="target gone"
	[ -z "$why" ] && [ "$tp" != 0 ] && why="still traced"
	[ -z "$why" ] && [ $i = 100 ] && why="its mappings changed"
	touch "$d/go"
	if [ -z "$why" ]; then
		wait $pid
		grep -q '^PASS' "$d/out" && ! grep -q '^FAIL' "$d/out" ||
			why="target harmed: $(grep -v '^READY' "$d/out" | head -3)"
	fi
	kill -9 $pid 2> /dev/null
	[ -z "$why" ] && return 0
	echo "point $2 ($(sed -n 's/.*killed at point [0-9]* (\(.*\))$/\1/p' "$d/ckpt.err")): $why"
	return 1
}

kill_test() {	# PROG: kill_one at KPOINTS points, the first and last among them
	d=$(mktemp -d /tmp/c.XXXXXX)
	chmod 755 "$d"
	TP_TMPDIR=$d "$1" "$d/go" > "$d/out" 2>&1 < /dev/null &
	pid=$!
	wait_for "$d/out" READY 300 || { echo "not ready"; kill -9 $pid; return 1; }
	CKPT_TEST_POINTS=1 timeout $LIMIT ckpt-hooks checkpoint -o "$d/img" $pid 2> "$d/points"
	touch "$d/go"
	wait $pid
	n=$(grep -c '^testpoint ' "$d/points")
	[ "$n" -gt 1 ] || { echo "no test points counted"; cat "$d/points"; return 1; }
	bad=0
	last=0
	for j in $(seq 0 $((KPOINTS - 1))); do
		k=$((1 + j * (n - 1) / (KPOINTS - 1)))
		[ $k = $last ] && continue
		last=$k
		kill_one "$1" $k || bad=$((bad + 1))
	done
	echo "$n points, $KPOINTS killed at"
	[ $bad = 0 ]
}

for n in $(cat /killprogs 2> /dev/null); do
	[ -x /bin/ckpt-hooks ] || break
	(kill_test "/progs/$n") > /tmp/log 2>&1
	if [ $? = 0 ]; then
		echo "ok   kill_$n ($(tail -1 /tmp/log))"
		pass=$((pass + 1))
	else
		echo "FAIL kill_$n"
		sed 's/^/     /' /tmp/log | tail -15
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed, $skip skipped"
poweroff -f
