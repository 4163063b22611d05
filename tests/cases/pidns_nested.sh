# pidns_nested.sh - pid namespaces nested inside the tree (issue 15): a
# process of it unshares CLONE_NEWPID and forks the init of a new one
# (tests/aux/nested_pidns.py: R makes it, N is its init, C pid 2 there,
# G pid 3 with a second thread, counting into a pipe R reads).  After
# checkpoint --kill and restart each has its pid at every level again,
# its parent, and they carry on: N signals and reaps pid 2, C reaps pid
# 3, R reaps N and checks the count went on.  What cannot be made again
# is refused (a zombie in one here; one made and not forked into yet:
# ns.sh, refuse_container_nested).
t pidns_nested_container
t pidns_nested_plain
t pidns_nested_wait
t refuse_pidns_nested_zombie
t pidns_nested_parent_outside

NESTED_PY=$ROOT/tests/aux/nested_pidns.py

# Each process's pids below the host's level (ALL: every level) and, with
# ALL, its parent: R, N, C, G, then G's threads (and with ALL, its
# timer's notify line: which thread, by outer tid; its pidfds' pids).
nested_ids() {	# ROOT ALL
	local n c g from=2 p
	[ "${2:-}" = all ] && from=1
	n=$(pgrep -P $1) && c=$(pgrep -P $n) && g=$(pgrep -P $c) || return 1
	for p in $1 $n $c $g /proc/$g/task/*; do
		p=${p#/proc/}
		awk -v f=$from '/^NSpid/ { s = ""; for (i = f + 1; i <= NF; i++) s = s " " $i; printf "%s", s }
			/^PPid/ { pp = $2 } END { print (f == 1 ? " ppid " pp : "") }' /proc/$p/status
	done
	[ $from = 1 ] && grep -h '^notify' /proc/$g/timers && grep -h '^Pid:' /proc/$g/fdinfo/*
	return 0
}

# Start the tree (in a container with CONTAINER): its root's host pid.
nested_start() {	# DIR [container]
	local d=$1 up
	mkdir -p $d
	if [ "${2:-}" = container ]; then
		unshare --fork --pid $PYTHON $NESTED_PY $d > $d/out 2>&1 < /dev/null &
		up=$!
	else
		$PYTHON $NESTED_PY $d > $d/out 2>&1 < /dev/null &
		up=$!
	fi
	wait_for $d/out NESTED || { kill -9 $up; return 1; }
	sleep 0.3	# counting
	[ "${2:-}" = container ] && pgrep -P $up || echo $up
}

nested_end() {	# DIR: the tree goes on and ends well
	touch $1/go
	wait_for $1/out '^PASS\|^FAIL' 20
	cat $1/out
	grep -q '^PASS' $1/out
}

# A container whose init made a nested pid namespace: back in a new pid
# namespace, every pid below the host's the same, the ppids right.
test_pidns_nested_container() {
	local d=$WORK/pidns-ct root before after rc=0
	root=$(nested_start $d container) || return 1
	before=$(nested_ids $root) || { kill -9 $root; return 1; }
	ckpt checkpoint --kill -o $d/img $root 2> $d/err || { cat $d/err; kill -9 $root; return 1; }
	gone $root || return 1
	ckpt info $d/img | grep -E "^NS(PID|TID) " > $d/info
	cat $d/info
	[ "$(grep -c '^NSPID .*depth=1 ' $d/info)" = 3 ] && grep -q "^NSTID .*tids=4" $d/info ||
		{ note "no NSPID/NSTID"; rc=1; }
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	after=$(nested_ids $root)
	note "before: $(echo $before)"
	note "after:  $(echo $after)"
	[ -n "$after" ] && [ "$after" = "$before" ] || rc=1
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$root/status)" = 1 ] || { note "root not pid 1"; rc=1; }
	nested_end $d || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# The same under a plain root (ckpt's pid namespace is the root's):
# every pid the same, the host's included; forged images refused.
test_pidns_nested_plain() {
	local d=$WORK/pidns-plain root before after rc=0
	root=$(nested_start $d) || return 1
	before=$(nested_ids $root all) || { kill -9 $root; return 1; }
	checkpoint_kill $d $root 2> $d/err || { cat $d/err; return 1; }
	ckpt restart --detach $d/img > $d/rout 2> $d/rerr || { cat $d/rerr; return 1; }
	after=$(nested_ids $root all)
	note "before: $(echo $before)"
	note "after:  $(echo $after)"
	[ -n "$after" ] && [ "$after" = "$before" ] || rc=1
	nested_end $d || rc=1
	nested_forged $d/img || rc=1
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# Restarted under ckpt restart (not detached): N kills pid 2 of its
# namespace and reaps it, C reaps pid 3, R reaps N; restart exits with
# R's status.
test_pidns_nested_wait() {
	local d=$WORK/pidns-wait root rpid rc=0
	root=$(nested_start $d) || return 1
	checkpoint_kill $d $root 2> $d/err || { cat $d/err; return 1; }
	ckpt_bg restart $d/img > $d/rout 2>&1 &
	rpid=$!
	for ((i = 0; i < 500; i++)); do [ -n "$(pgrep -P $root)" ] && break; sleep 0.01; done
	sleep 0.5	# built and let go
	nested_end $d || rc=1
	wait $rpid || { note "restart exit $?"; rc=1; }
	cat $d/rout
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rout
}

# Its image forged: the pid namespaces each record names must be there.
nested_forged() {	# IMG
	forged_refused $1 <<'EOF2'
NSPID dropped|no child of it|drop $img $f -r 'NSPID#1'
NSPID depth 9|bad NSPID|edit $img $f -r 'NSPID#1' --set-u32 0=9
NSPID level 2 unused set|bad NSPID|edit $img $f -r 'NSPID#1' --set-u32 12=5
NSPID no init|not the init of a pid namespace|edit $img $f -r 'NSPID#2' --set-u32 8=1
NSPID init not first|bad NSPID|edit $img $f -r 'NSPID#1' --set-u32 40=7
NSPID on the root, nested|bad NSPID|edit $img $f -r 'NSPID#0' --set-u32 0=1
NSPID children no child|no child of it|edit $img $f -r 'NSPID#0' --set-u32 4=1
NSTID dropped|no NSTID|drop $img $f -r NSTID
NSTID level 2|bad NSTID|edit $img $f -r NSTID --set-u32 4=9
NSTID twice|bad NSTID|dup $img $f -r NSTID
EOF2
}

# A zombie in a nested pid namespace (its init has not reaped it): its
# pids there are not saved, refused naming it; the tree runs on.
test_refuse_pidns_nested_zombie() {
	local d=$WORK/pidns-zombie root z
	mkdir -p $d
	$PYTHON - $d/go > $d/out 2>&1 < /dev/null <<'PY' &
import ctypes, os, sys, time
go = sys.argv[1]
ctypes.CDLL(None).unshare(0x20000000)     # CLONE_NEWPID
n = os.fork()
if n == 0:
    z = os.fork()
    if z == 0:
        os._exit(3)
    time.sleep(0.2)
    print("ZOMBIE", flush=True)
    while not os.path.exists(go):
        time.sleep(0.01)
    os._exit(0 if os.waitpid(z, 0)[1] == 3 << 8 else 1)
print("READY", os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
print("PASS" if os.waitpid(n, 0)[1] == 0 else "FAIL", flush=True)
PY
	root=$!
	wait_for $d/out ZOMBIE || { kill -9 $root; return 1; }
	z=$(pgrep -P $(pgrep -P $root))
	ckpt checkpoint --kill -o $d/img $root 2> $d/err
	[ $? = 1 ] || { note "checkpoint did not fail"; kill -9 $root; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $z is a zombie in a nested pid namespace: not supported" $d/err ||
		{ kill -9 $root; return 1; }
	sanitizer_clean $d/err || return 1
	nested_end $d
}

# R unshares CLONE_NEWPID and forks twice: N, the namespace's init, and
# D, pid 2 there, whose parent is R, outside it.  N ends only once D is
# reaped, by R: checkpoint --kill must not wait for N before R is killed
# (it hung there, ckpt waiting for N, N for R, R held by ckpt).  Then
# the three come back with their pids.
inner_pids() {	# ROOT: its children's pids in their own namespace, sorted
	local p
	for p in $(pgrep -P $1); do awk '/^NSpid/ { print $3 }' /proc/$p/status; done |
		sort | tr '\n' ' '
}

test_pidns_nested_parent_outside() {
	local d=$WORK/pidns-outside root ids after rc=0
	mkdir -p $d
	"$PYTHON" - > $d/out 2>&1 <<'PY' &
import ctypes, os, time
if ctypes.CDLL(None, use_errno=True).unshare(0x20000000):	# CLONE_NEWPID
    raise SystemExit("unshare: errno %d" % ctypes.get_errno())
for _ in range(2):
    if os.fork() == 0:
        while True:
            time.sleep(1)
print("READY", flush=True)
while True:
    time.sleep(1)
PY
	root=$!
	wait_for $d/out READY || { kill -9 $root; return 1; }
	ids=$(inner_pids $root)
	note "R $root, its children pids $(echo $(pgrep -P $root)), inside: $ids"
	[ "$ids" = "1 2 " ] || { kill -9 $root; return 1; }
	timeout -k 5 60 "$CKPT" checkpoint --kill -o $d/img $root 2> $d/err ||
		{ cat $d/err; kill -9 $root; return 1; }
	wait $root 2>/dev/null
	gone $root || return 1
	ckpt restart --detach $d/img > $d/rout 2> $d/rerr || { cat $d/rerr; return 1; }
	after=$(inner_pids $root)
	note "after: R's children inside: $after"
	[ "$after" = "1 2 " ] || rc=1
	kill -9 $(pgrep -P $root) $root
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}
