# sysvshm.sh - SysV shared memory made again, or refused.  Segment ids
# and keys (and /proc/sys/kernel/shm_next_id) are global: one at a time.
t sysvshm_recreated        group sysvshm
t sysvshm_conflict         group sysvshm
t sysvshm_other_ipcns      group sysvshm

# SysV shared memory (tests/progs/sysvshm.c, its segments listed in
# DIR/shm_ids): start it and checkpoint it --kill; SHM_KEY is its key.
SHM_KEY=0x636b7353
sysv_start() {	# DIR; sets $pid
	mkdir -p $1
	TP_TMPDIR=$1 "$PROGS/sysvshm" $1/go > $1/out 2>&1 < /dev/null &
	pid=$!
	wait_for $1/out READY || return 1
	checkpoint_kill $1 $pid
}

# a segment with KEY (0: IPC_PRIVATE), or with id ID if one is given
sysv_make() {	# KEY [ID]
	$PYTHON - "$@" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
nid = "/proc/sys/kernel/shm_next_id"
if len(sys.argv) > 2:
    open(nid, "w").write(sys.argv[2])
got = libc.shmget(int(sys.argv[1], 0), 4096, 0o1600)
if len(sys.argv) > 2:
    open(nid, "w").write("-1")
print(got)
sys.exit(got < 0)
PY
}

sysv_cleanup() {	# DIR [IDS...]: whatever the test made, gone
	local id
	for id in $(cat $1/shm_ids 2>/dev/null) "${@:2}"; do ipcrm -m $id 2>/dev/null; done
	ipcrm -M $SHM_KEY 2>/dev/null
	return 0
}

# The segments removed after the checkpoint: restart makes them again
# with their ids and content (the program checks both).  First a restart
# that fails after making them (its flock is taken): they go again.
test_sysvshm_recreated() {
	local d=$WORK/sysvgone pid rc other id
	sysv_start $d || { sysv_cleanup $d; return 1; }
	for id in $(cat $d/shm_ids); do ipcrm -m $id || return 1; done
	flock -o $d/lock sleep 100 &
	other=$!
	sleep 0.2
	refused_restart $d $pid "$d/lock is locked by another process"
	rc=$?
	kill $other; wait $other 2>/dev/null
	for id in $(cat $d/shm_ids); do
		awk -v id=$id '$2 == id { f = 1 } END { exit !f }' /proc/sysvipc/shm &&
			{ note "segment $id left behind"; rc=1; }
	done
	[ $rc = 0 ] || { sysv_cleanup $d; return 1; }
	( sleep 0.5; touch $d/go ) &
	ckpt restart $d/img > $d/rout 2>&1
	rc=$?
	cat $d/out $d/rout
	sysv_cleanup $d
	[ $rc = 0 ] && grep -q '^PASS' $d/out && sanitizer_clean $d/rout
}

# Another segment has the key, or the id, of a saved one that is gone:
# the restart is refused naming it, no segment is made or removed.
test_sysvshm_conflict() {
	local d=$WORK/sysvconflict pid other before ida idb rc
	sysv_start $d || { sysv_cleanup $d; return 1; }
	read ida idb < $d/shm_ids
	ipcrm -m $ida && ipcrm -m $idb || { sysv_cleanup $d; return 1; }
	other=$(sysv_make $SHM_KEY) || { sysv_cleanup $d; return 1; }
	before=$(ipcs -m | sort)
	refused_restart $d $pid "SysV shared memory key $SHM_KEY is used by another segment (id $other), not the image's id $ida"
	rc=$?
	[ "$(ipcs -m | sort)" = "$before" ] || { note "segments changed"; rc=1; }
	ipcrm -m $other
	other=$(sysv_make 0 $idb) || { sysv_cleanup $d; return 1; }
	[ $rc = 0 ] && refused_restart $d $pid "SysV shared memory id $idb is taken by another segment" || rc=1
	ipcrm -m $other
	[ $rc = 0 ] || { sysv_cleanup $d; return 1; }
	( sleep 0.5; touch $d/go ) &
	ckpt restart $d/img > $d/rout 2>&1
	rc=$?
	cat $d/out
	sysv_cleanup $d
	[ $rc = 0 ] && grep -q '^PASS' $d/out
}

# A target in another IPC namespace: its segments are not ours to see
# or make again; the checkpoint is refused (ns.c: the namespace is not
# saved) and it runs on untouched.
test_sysvshm_other_ipcns() {
	local d=$WORK/sysvns pid
	mkdir -p $d
	TP_TMPDIR=$d unshare --ipc "$PROGS/sysvshm" $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY || return 1
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $pid; return 1; }
	cat $d/err
	grep -q "pid $pid is in its own ipc namespace" $d/err &&
		[ "$(wc -l < $d/err)" = 1 ] || { kill -9 $pid; return 1; }
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}
