# unpriv.sh - ckpt run by an ordinary user (uid $UNPRIV_UID, no groups,
# no capabilities): checkpoint and restart of the user's own processes,
# which come back with the same pids in a user and pid namespace of their
# own (src/unpriv.c), and the restarts that would give the user more
# than they have, refused before any process exists (src/privcheck.c).
t unpriv_single            needs userns
t unpriv_tree_pipe         needs userns
t unpriv_files             needs userns
t unpriv_tree              needs userns
t unpriv_threads           needs userns
t unpriv_memfd             needs userns
t unpriv_detach            needs userns
t unpriv_pid_taken         needs userns
t unpriv_incremental       needs userns
t unpriv_groups            needs userns
t unpriv_refuse_root_image needs userns
t unpriv_refuse_forged     needs userns
t unpriv_refuse_file       needs userns
t unpriv_refuse_setuid     needs userns
t unpriv_refuse_rlimit     needs userns
t unpriv_refuse_memfd      needs userns
t unpriv_refuse_tcp        needs userns
t unpriv_refuse_shared     needs userns
t unpriv_refuse_tcp_established needs userns
t unpriv_refuse_inotify    needs userns
t unpriv_refuse_options    needs userns

UNPRIV_UID=4242

AS_USER=(setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_UID --clear-groups)
as_user() { "${AS_USER[@]}" "$@"; }

# uckpt ARGS...: ckpt as the user, under the usual timeout.
uckpt() {
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: ckpt (as uid $UNPRIV_UID) $*" > "$T_STEPFILE"
	timeout --foreground -k 5 $RESTART_TIMEOUT "${AS_USER[@]}" "$CKPT" "$@"
}
uckpt_bg() { exec timeout --foreground -k 5 $RESTART_TIMEOUT "${AS_USER[@]}" "$CKPT" "$@"; }

# A directory of the user's.
user_dir() {
	mkdir -p "$1" && chown $UNPRIV_UID:$UNPRIV_UID "$1" && chmod 755 "$1"
}

# Every pid of the tree rooted at PID, sorted.
tree_pids() {
	local p=$1 c
	echo $p
	for c in $(cat /proc/$p/task/*/children 2>/dev/null); do
		tree_pids $c
	done | sort -n
}

# The pids, inside their namespace, of the processes in the pid namespace
# of PID (an outside pid), but its init; and that the namespace is a
# child of ours whose user namespace maps the user alone.
ns_pids() {
	local ns p
	ns=$(readlink /proc/$1/ns/pid) || return 1
	[ "$ns" != "$(readlink /proc/self/ns/pid)" ] || { echo "pid $1: in our pid namespace"; return 1; }
	[ "$(readlink /proc/$1/ns/user)" != "$(readlink /proc/self/ns/user)" ] ||
		{ echo "pid $1: in our user namespace"; return 1; }
	read -r a b n < /proc/$1/uid_map
	[ "$a $b $n" = "$UNPRIV_UID $UNPRIV_UID 1" ] || { echo "uid_map: $a $b $n"; return 1; }
	for p in /proc/[0-9]*; do
		[ "$(readlink $p/ns/pid 2>/dev/null)" = "$ns" ] || continue
		awk '/^NSpid:/ { print $NF }' $p/status 2>/dev/null
	done | grep -vx 1 | sort -n
}

# PROG (a tests/progs program, or "holder") started as the user in DIR,
# checkpointed with --kill and restarted by the user; its pids must come
# back in the new namespace, and it must pass.
unpriv_run() {	# DIR PROG ARGS...
	local d=$1 prog=$2 pid rpid before after outer i rc
	shift 2
	user_dir $d || return 1
	as_user touch $d/out || return 1	# the process reopens it
	"${AS_USER[@]}" env TP_TMPDIR=$d "$prog" "$@" > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	sleep 0.3
	before=$(tree_pids $pid | sort -n)	# sorted as ns_pids sorts: the root is not the lowest once pids wrap
	note "pids: $(echo $before)"
	step "checkpoint as the user"
	uckpt checkpoint --kill -o $d/img $pid 2> $d/ckpt.err || { cat $d/ckpt.err; return 1; }
	cat $d/ckpt.err
	wait $pid 2>/dev/null
	gone $pid || return 1
	step "restart as the user"
	uckpt_bg restart $d/img > $d/rout 2>&1 &
	rpid=$!
	for ((i = 0; i < 3000; i++)); do
		outer=$(pgrep -u $UNPRIV_UID -f "^$prog .*$d/go" | head -1)
		[ -n "$outer" ] && break
		kill -0 $rpid 2>/dev/null || break
		sleep 0.01
	done
	[ -n "$outer" ] || { cat $d/rout; return 1; }
	# the root's memory is back; its children may still be on their way
	for ((i = 0; i < 3000; i++)); do
		after=$(ns_pids $outer) || { echo "$after"; touch $d/go; wait $rpid; return 1; }
		[ "$after" = "$before" ] && break
		sleep 0.01
	done
	note "back as $(echo $after) inside, the root $outer outside"
	touch $d/go
	wait $rpid
	rc=$?
	cat $d/rout $d/out
	sanitizer_clean $d/rout $d/ckpt.err || return 1
	[ "$before" = "$after" ] || { echo "pids differ"; return 1; }
	[ $rc = 0 ] && grep -q '^PASS' $d/out && ! grep -q '^FAIL' $d/out
}

test_unpriv_single() { unpriv_run $WORK/single $AUX/holder plain $WORK/single/go; }
test_unpriv_tree_pipe() { unpriv_run $WORK/pipeline $PROGS/pipeline $WORK/pipeline/go; }
test_unpriv_files() { unpriv_run $WORK/files $PROGS/files $WORK/files/go; }
# sessions, groups and zombies (tests/progs/tree.c)
test_unpriv_tree() { unpriv_run $WORK/tree $PROGS/tree $WORK/tree/go; }
test_unpriv_threads() { unpriv_run $WORK/threads $PROGS/threads $WORK/threads/go; }
# a memfd mapped and open: read through its fd, map_files denied
test_unpriv_memfd() { unpriv_run $WORK/memfd $PROGS/memfd_exec $WORK/memfd/go; }

# IMG restarted by the user: refused (125), in one line matching PATTERN,
# with no process made.
unpriv_refused() {	# DIR IMG PATTERN [OPTION]
	local d=$1 err rc
	uckpt restart ${4:-} $2 > $d/rout 2> $d/err < /dev/null
	rc=$?
	err=$(grep -v "warning" $d/err)
	note "${4:-}: $err"
	[ $rc = 125 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || return 1
	printf '%s' "$err" | grep -q -- "$3" || return 1
	sanitizer_clean $d/err
}

# A user's holder, checkpointed by the user into DIR/img (killed).
user_image() {	# DIR [MODE]
	local d=$1
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" "$AUX/holder" ${2:-plain} $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --kill -o $d/img $pid 2> $d/ckpt.err || { cat $d/ckpt.err; return 1; }
	wait $pid 2>/dev/null
	gone $pid
}

# root's own process: its credentials are not the user's; made the
# user's (forged), its cgroups are still root's.  The image restarts as
# root.
test_unpriv_refuse_root_image() {
	local d=$WORK/rootimg pid id
	start_holder plain $d || return 1
	checkpoint_kill $d $pid || return 1
	id=$UNPRIV_UID
	"$PYTHON" "$ROOT/tests/forge.py" edit $d/img $d/mine -r CREDS --set uid=$id --set euid=$id \
		--set suid=$id --set fsuid=$id --set gid=$id --set egid=$id --set sgid=$id \
		--set fsgid=$id --set cap_eff=0 --set cap_prm=0 --set nr_groups=0 --resize 88 || return 1
	chmod 755 $d && chmod 644 $d/img $d/mine
	unpriv_refused $d $d/img "pid $pid: its real uid 0 is not yours ($UNPRIV_UID)" || return 1
	unpriv_refused $d $d/img "pid $pid: its real uid 0 is not yours ($UNPRIV_UID)" --no-cgroups ||
		return 1
	unpriv_refused $d $d/mine "pid $pid: the image puts it in cgroups, which an ordinary user cannot enter" ||
		return 1
	! kill -0 $pid 2>/dev/null || return 1
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out
}

# The user's own image, forged (checksums recomputed) to ask for more:
# each refused naming it; the image itself restarts.
test_unpriv_refuse_forged() {
	local d=$WORK/forged pid f
	user_image $d || return 1
	f=("$PYTHON" "$ROOT/tests/forge.py")
	"${f[@]}" edit $d/img $d/uid -r CREDS --set euid=0 &&
	"${f[@]}" edit $d/img $d/fsuid -r CREDS --set fsuid=1 &&
	"${f[@]}" edit $d/img $d/gid -r CREDS --set sgid=0 &&
	"${f[@]}" edit $d/img $d/caps -r CREDS --set cap_eff=0x200000 &&
	"${f[@]}" edit $d/img $d/amb -r CREDS --set cap_amb=1 &&
	"${f[@]}" edit $d/img $d/groups -r CREDS --set nr_groups=1 --resize 92 &&
	"${f[@]}" edit $d/img $d/rlim -r RLIMITS --set lim7.max=0x7fffffffffffffff &&
	"${f[@]}" edit $d/img $d/luid -r PROCATTR --set loginuid=1234 || return 1
	chmod 644 $d/*
	unpriv_refused $d $d/uid "pid $pid: its effective uid 0 is not yours ($UNPRIV_UID)" &&
	unpriv_refused $d $d/fsuid "pid $pid: its fs uid 1 is not yours" &&
	unpriv_refused $d $d/gid "pid $pid: its saved gid 0 is not yours" &&
	unpriv_refused $d $d/caps "pid $pid: it has capabilities (0x200000), which an ordinary user's restart never gives" &&
	unpriv_refused $d $d/amb "pid $pid: it has capabilities (0x1)" &&
	unpriv_refused $d $d/groups "pid $pid: its 1 supplementary groups are not ckpt's own 0" &&
	unpriv_refused $d $d/rlim "cannot restore hard limit RLIMIT_NOFILE=9223372036854775807" &&
	unpriv_refused $d $d/luid "pid $pid: its audit loginuid 1234 is not ckpt's ([0-9]*.*): changing it needs CAP_AUDIT_CONTROL" ||
		return 1
	! kill -0 $pid 2>/dev/null || return 1
	( sleep 0.5; touch $d/go ) &
	uckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# A file the process had open, which the user can no longer open: the
# kernel refuses it in the user namespace, and restart says which.
test_unpriv_refuse_file() {
	local d=$WORK/nofile pid
	user_dir $d || return 1
	as_user touch $d/ro $d/rw || return 1
	user_image $d files || return 1
	chown root:root $d/ro && chmod 600 $d/ro
	unpriv_refused $d $d/img "$d/ro: Permission denied" || return 1
	! kill -0 $pid 2>/dev/null || return 1
	chown $UNPRIV_UID $d/ro
	( sleep 0.5; touch $d/go ) &
	uckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# The program a process runs, made setuid (to another user) or setgid
# (to another group) since: refused; back as it was, it restarts.
test_unpriv_refuse_setuid() {
	local d=$WORK/setuid pid
	user_dir $d || return 1
	cp "$AUX/holder" $d/prog && chown $UNPRIV_UID:$UNPRIV_UID $d/prog && touch -r "$AUX/holder" $d/prog || return 1
	user_dir $d/run && as_user touch $d/run/out || return 1
	"${AS_USER[@]}" $d/prog plain $d/run/go > $d/run/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/run/out READY 20 || return 1
	uckpt checkpoint --kill -o $d/img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	chown 4243 $d/prog && chmod 4755 $d/prog
	unpriv_refused $d $d/img "pid $pid: area 0x[0-9a-f]* maps $d/prog, a program setuid to another user: only root restarts it" ||
		return 1
	chown $UNPRIV_UID:4243 $d/prog && chmod 2755 $d/prog
	unpriv_refused $d $d/img "maps $d/prog, a program setgid to another group" || return 1
	chown $UNPRIV_UID:$UNPRIV_UID $d/prog && chmod 755 $d/prog
	( sleep 0.5; touch $d/run/go ) &
	uckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/run/out ||
		{ cat $d/rout $d/run/out; return 1; }
}

# A hard limit above the restarting user's own: refused; with it, fine.
test_unpriv_refuse_rlimit() {
	local d=$WORK/rlimit pid
	user_image $d || return 1
	( ulimit -Sn 256 && ulimit -Hn 512 && unpriv_refused $d $d/img "cannot restore hard limit RLIMIT_NOFILE=[0-9]*: ckpt's own is 512" ) ||
		return 1
	( sleep 0.5; touch $d/go ) &
	uckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# A deleted file mapped with no fd left on it (tests/progs/memfd_map.c):
# only /proc/PID/map_files opens it, so the user's checkpoint refuses it,
# naming pid and address, and the tree runs on.
# PROG (of tests/progs) run as the user, checkpointed by the user: refused
# in one line (PATTERN, past warnings), and it runs on to PASS.
unpriv_refused_prog() {	# DIR PROG PATTERN
	local d=$1 pid err
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" env TP_TMPDIR=$d $PROGS/$2 $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || return 1
	err=$(grep -v warning $d/err)
	echo "$err"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && printf '%s' "$err" | grep -q "$3" || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

test_unpriv_refuse_memfd() {
	unpriv_refused_prog $WORK/memfd memfd_map \
		"pid [0-9]*: area 0x[0-9a-f]* (.* (deleted)): a file with no name (memfd or deleted) that no fd of the tree has open can only be saved through /proc/[0-9]*/map_files, which needs CAP_CHECKPOINT_RESTORE"
}

# --detach: restart returns once the tree runs, its namespace's init
# staying behind as the reaper, and goes with the restored root.
test_unpriv_detach() {
	local d=$WORK/detach pid outer inner i
	user_image $d || return 1
	uckpt restart --detach $d/img > $d/rout 2>&1 || { cat $d/rout; return 1; }
	cat $d/rout
	outer=$(pgrep -u $UNPRIV_UID -f "holder plain $d/go" | head -1)
	[ -n "$outer" ] || return 1
	inner=$(awk '/^NSpid:/ { print $NF }' /proc/$outer/status)
	note "pid $pid back as $inner inside, $outer outside"
	[ "$inner" = "$pid" ] || return 1
	touch $d/go
	wait_for $d/out PASS || return 1
	for ((i = 0; i < 300; i++)); do
		pgrep -u $UNPRIV_UID -f "$CKPT restart --detach $d/img" > /dev/null || return 0
		sleep 0.01
	done
	echo "the namespace's init is still there"
	return 1
}

# Supplementary groups, not mapped in the user namespace (they read as
# 65534 there), come back as ckpt's own; restarted by the user in fewer
# groups, or with the user's own gid where the image had another, refused.
# (One unmapped group for another is not seen: both read 65534.)
test_unpriv_groups() {
	local d=$WORK/groups pid AS_USER=(setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_UID --groups=100,4243)
	user_image $d || return 1
	AS_USER=(setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_UID --groups=100)
	unpriv_refused $d $d/img "pid $pid: its 2 supplementary groups are not ckpt's own 1" || return 1
	AS_USER=(setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_UID --groups=$UNPRIV_UID,4243)
	unpriv_refused $d $d/img "pid $pid: its 2 supplementary groups are not ckpt's own 2" || return 1
	AS_USER=(setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_UID --groups=4243,100)
	( sleep 0.5; touch $d/go ) &
	uckpt restart $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# A listening TCP socket (tests/progs/accept_wait.c), which restart binds
# with TCP_REPAIR: the user's checkpoint has it, the user's restart
# refuses it before any process exists; root restarts the image.
test_unpriv_refuse_tcp() {
	local d=$WORK/tcp pid
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" env TP_TMPDIR=$d $PROGS/accept_wait $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --kill -o $d/img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	unpriv_refused $d $d/img "pid $pid: a TCP socket on port [0-9]*, which restart binds in repair mode (TCP_REPAIR needs CAP_NET_ADMIN" ||
		return 1
	! kill -0 $pid 2>/dev/null || return 1
	( sleep 0.5; touch $d/go ) &
	ckpt restart --no-cgroups $d/img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}

# An inotify watch names its file by a handle, which only
# open_by_handle_at() (CAP_DAC_READ_SEARCH) turns into a path: the
# user's checkpoint refuses it, naming pid, fd and watch.
test_unpriv_refuse_inotify() {
	local d=$WORK/inotify pid err
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" env TP_TMPDIR=$d $PROGS/inotify $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || return 1
	err=$(grep -v warning $d/err)
	echo "$err"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
		printf '%s' "$err" | grep -q "pid $pid fd [0-9]*: inotify wd [0-9]*: its file is found by open_by_handle_at(), which needs CAP_DAC_READ_SEARCH" ||
		return 1
	# it runs on (what it checks then needs root: lchown)
	sleep 0.2
	kill -0 $pid && [ "$(awk '{print $3}' /proc/$pid/stat)" != T ] || return 1
	kill -9 $pid
	wait $pid
	return 0
}

# An ordinary user's restart is --pidns's: its refusals of options.
test_unpriv_refuse_options() {
	local d=$WORK/options pid opt
	user_image $d || return 1
	for opt in "--cgroup-root /x" "--join-ns net:/proc/self/ns/net" "--external mnt[a]:/tmp"; do
		unpriv_refused $d $d/img "are not for --pidns, which an ordinary user's restart is" "$opt" ||
			return 1
	done
	! kill -0 $pid 2>/dev/null
}

# Shared anonymous memory (tests/progs/clone_share.c): its object only
# map_files opens, so the user's checkpoint refuses it, naming pid and
# address, and the tree runs on.
test_unpriv_refuse_shared() {
	unpriv_refused_prog $WORK/shared clone_share \
		"pid [0-9]*: area 0x[0-9a-f]* (/dev/zero (deleted)): shared memory can only be saved through /proc/[0-9]*/map_files, which needs CAP_CHECKPOINT_RESTORE"
}

# The original still running (checkpoint without --kill), its pid taken
# outside: the user's restart has it back inside its namespace, and
# both run to the end (the original passing, the restored one gone).
test_unpriv_pid_taken() {
	local d=$WORK/taken pid outer inner
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" "$AUX/holder" plain $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint -o $d/img $pid || return 1
	kill -0 $pid || return 1
	uckpt restart --detach $d/img > $d/rout 2>&1 || { cat $d/rout; return 1; }
	outer=$(pgrep -u $UNPRIV_UID -f "holder plain $d/go" | grep -vx $pid | head -1)
	[ -n "$outer" ] || return 1
	inner=$(awk '/^NSpid:/ { print $NF }' /proc/$outer/status)
	note "pid $pid runs on; the restored one is $inner inside, $outer outside"
	[ "$inner" = "$pid" ] || return 1
	touch $d/go
	wait $pid || return 1
	# both write PASS at the same offset of out, each its own description
	gone $outer && grep -q '^PASS' $d/out && ! grep -q FAIL $d/out
}

# An established connection (tests/progs/inet.c) is read in repair mode,
# TCP_REPAIR needing CAP_NET_ADMIN: checkpoint --tcp-established by the
# user refuses it, naming pid and fd, and the process runs on.
test_unpriv_refuse_tcp_established() {
	local d=$WORK/tcpest pid err
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" env TP_TMPDIR=$d $PROGS/inet $d/go > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --tcp-established --kill -o $d/img $pid 2> $d/err
	[ $? = 1 ] || return 1
	err=$(grep -v warning $d/err)
	echo "$err"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
		printf '%s' "$err" | grep -q "pid $pid fd [0-9]*: TCP_REPAIR (needs CAP_NET_ADMIN: not an ordinary user's): Operation not permitted" ||
		return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out || { cat $d/out; return 1; }
}

# Incremental checkpoints by the user (--track-mem, then --parent: the
# soft-dirty bits need no privilege), restarted by the user from the last.
test_unpriv_incremental() {
	local d=$WORK/incr pid a b
	user_dir $d && as_user touch $d/out || return 1
	"${AS_USER[@]}" "$AUX/holder" plain $d/go 16 > $d/out 2>&1 < /dev/null &
	pid=$!
	wait_for $d/out READY 20 || return 1
	uckpt checkpoint --track-mem -o $d/a.img $pid || return 1
	sleep 0.2
	uckpt checkpoint --parent $d/a.img --kill -o $d/b.img $pid || return 1
	wait $pid 2>/dev/null
	gone $pid || return 1
	a=$(stat -c %s $d/a.img) b=$(stat -c %s $d/b.img)
	note "full $a bytes, incremental $b"
	[ $b -lt $((a / 4)) ] || return 1
	( sleep 0.5; touch $d/go ) &
	uckpt restart $d/b.img > $d/rout 2>&1 && grep -q '^PASS' $d/out || { cat $d/rout $d/out; return 1; }
}
