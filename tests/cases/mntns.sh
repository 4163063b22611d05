# mntns.sh - a container's own mount namespace (the mntns kind).  Through
# the driver build/test/unit/mntns_test: a container-like tree (its own
# pid and mount namespaces, pivot_root'ed into a host directory with ro
# binds of /usr and /etc, tmpfs with files, its own /proc, sysfs,
# devpts, mqueue, an overlay, peer groups) is saved from outside, then
# built again in a fresh mount namespace of another process, whose
# mounts and files must be the same; what cannot be made again is
# refused, named.  End to end (mntns_container): ckpt checkpoint --kill
# of a container, ckpt restart.
t mntns_driver
t mntns_refuse_ramfs
t mntns_hidden
t mntns_refuse_deleted
t mntns_refuse_xattr
t mntns_info
t mntns_external
t mntns_container
t mntns_container_external
t mntns_container_refused

MNTDRV=$ROOT/build/test/unit/mntns_test

# mnt_container DIR [SETUP]: starts the container, pid 1 a sleep; prints
# its pid as seen from here once it is pivoted.  Its rootfs is DIR/root
# ($r in SETUP, shell commands run before the pivot).
mnt_container() {
	local d=$1 r=$1/root i pid
	mkdir -p $r/usr $r/etc $r/proc $r/data $r/old $r/peer $r/slave
	ln -sfn usr/bin $r/bin
	ln -sfn usr/lib $r/lib
	ln -sfn usr/lib64 $r/lib64
	unshare --mount --propagation private --pid --fork bash -c '
		r='$r'
		mount --bind $r $r &&
		mount --bind /usr $r/usr && mount -o remount,bind,ro $r/usr &&
		mount --bind /etc $r/etc && mount -o remount,bind,ro,nosuid,nodev $r/etc &&
		mount -t tmpfs -o size=4m,mode=751 tmpfs $r/data &&
		echo hello > $r/data/a && chmod 640 $r/data/a && chown 12:34 $r/data/a &&
		mkdir -p $r/data/dir/sub && touch -d @1000000000 $r/data/dir/sub &&
		ln -s ../a $r/data/dir/link && ln $r/data/a $r/data/hard &&
		mkfifo $r/data/fifo && mknod -m 620 $r/data/null c 1 3 &&
		head -c 3000000 /dev/urandom > $r/data/big &&
		dd if=/dev/urandom of=$r/data/sparse bs=4096 seek=200 count=2 2> /dev/null &&
		mount -t tmpfs -o ro,nosuid,size=64k tmpfs $r/data/dir/sub &&
		mount -t proc -o nosuid,nodev,noexec proc $r/proc &&
		'"${2:-true}"' &&
		cd $r && pivot_root . old && umount -l /old &&
		exec sleep 1000' > $d/out 2>&1 &
	for ((i = 0; i < 500; i++)); do
		pid=$(pgrep -P $! sleep)
		# the sleep: exec'd once pivoted, the old root detached
		[ -n "$pid" ] && break
		sleep 0.01
	done
	[ -n "$pid" ] || { cat $d/out >&2; return 1; }
	echo $pid
}

# The fields that must come back: mountpoint, per-mount options,
# propagation (peer groups numbered in the order they first appear),
# type, source and super options, for each mount in order.
mnt_fields() {	# PID
	awk '{
		prop = "";
		for (i = 7; $i != "-"; i++) {
			split($i, kv, ":");
			if (kv[2] != "" && !(kv[2] in g))
				g[kv[2]] = ++ng;
			prop = prop " " (kv[2] != "" ? kv[1] ":g" g[kv[2]] : kv[1]);
		}
		print $5, $6, prop, $(i+1), $(i+2), $(i+3)
	}' /proc/$1/mountinfo
}

mnt_files() {	# PID
	(cd /proc/$1/root/data && find . -printf '%p %y %m %U:%G %s %T@ %l\n' | sort &&
	 md5sum a big sparse && stat -c '%h %b %t:%T' hard sparse null)
}

test_mntns_driver() {
	local d=$WORK/mnt pid new rc
	mkdir -p $d
	step "container"
	# a peer group (the tmpfs and a bind of part of it), a slave of it,
	# an unbindable mount; sysfs, devpts, mqueue, cgroup2 and an overlay
	# of host directories, which exist only in the container
	mkdir -p $d/lower $d/upper $d/work $d/root/sys $d/root/dev/pts $d/root/mq $d/root/ovl $d/root/cg
	echo lower > $d/lower/l
	pid=$(mnt_container $d 'mount --make-shared $r/data &&
		mount --bind $r/data/dir $r/peer &&
		mount --bind $r/data $r/slave && mount --make-slave $r/slave &&
		mount --make-unbindable $r/usr &&
		mount -t sysfs -o ro sysfs $r/sys &&
		mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts $r/dev/pts &&
		mount -t mqueue -o nodev mqueue $r/mq &&
		mount -t cgroup2 -o nosuid cgroup2 $r/cg &&
		mount -t overlay -o lowerdir='$d'/lower,upperdir='$d'/upper,workdir='$d'/work overlay $r/ovl &&
		echo upper > $r/ovl/u') || return 1
	mnt_fields $pid > $d/before
	mnt_files $pid > $d/files.before
	cat $d/before
	step "save"
	$MNTDRV save $pid $d/img 2> $d/save.err || { cat $d/save.err; kill -9 $pid; return 1; }
	kill -9 $pid
	# the restored one: a process in fresh pid and mount namespaces (a
	# copy of ours), its root and cwd ours until it is pivoted
	step "restore"
	unshare --mount --pid --fork sleep 1000 &
	for ((i = 0; i < 500; i++)); do
		new=$(pgrep -P $! sleep) && break
		sleep 0.01
	done
	$MNTDRV restore $new $d/img 2> $d/restore.err
	rc=$?
	cat $d/save.err $d/restore.err
	[ $rc = 0 ] || { kill -9 $new; return 1; }
	mnt_fields $new > $d/after
	mnt_files $new > $d/files.after
	# pivoted: its root is the restored one, nothing of ours is left in
	# its namespace, and its /proc is its pid namespace's (pid 1 itself)
	readlink /proc/$new/root > $d/rootlink
	comm=$(cat /proc/$new/root/proc/1/comm)
	echo $(cat /proc/$new/root/ovl/l /proc/$new/root/ovl/u) > $d/ovl
	kill -9 $new
	diff $d/before $d/after || return 1
	diff $d/files.before $d/files.after || return 1
	[ "$(cat $d/rootlink)" = / ] && [ "$comm" = sleep ] || { echo "root $(cat $d/rootlink), pid 1 $comm"; return 1; }
	[ $(wc -l < $d/after) = 13 ] && [ "$(cat $d/ovl)" = "lower upper" ] &&
		sanitizer_clean $d/save.err $d/restore.err
}

# mnt_refused NAME SETUP PATTERN: the container with SETUP cannot be
# saved: one line naming its pid 1 (as seen from here), the mount and its
# type, and it runs on.
mnt_refused() {
	local d=$WORK/$1 pid
	mkdir -p $d
	pid=$(mnt_container $d "$2") || return 1
	$MNTDRV save $pid $d/img 2> $d/err
	local rc=$?
	cat $d/err
	kill -0 $pid || { echo "the container is gone"; return 1; }
	kill -9 $pid
	[ $rc = 1 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "pid $pid: $3" $d/err &&
		sanitizer_clean $d/err
}

# mnt_restore_into DIR ARGS...: a process in fresh pid and mount
# namespaces (sleep, its pid in DIR/new) gets the mounts of DIR/img,
# restored with the driver's ARGS (--external's KEY:PATH); DIR/restore.err
mnt_restore_into() {
	local d=$1 i new
	shift
	unshare --mount --pid --fork sleep 1000 &
	for ((i = 0; i < 500; i++)); do
		new=$(pgrep -P $! sleep) && break
		sleep 0.01
	done
	echo $new > $d/new
	$MNTDRV restore $new $d/img "$@" 2> $d/restore.err
}

# --external mnt[/etc]:PATH: the container's bind of the host's /etc is
# bound from PATH instead; a key that is no host bind of the container
# is refused, and so is a PATH that does not exist.
test_mntns_external() {
	local d=$WORK/ext pid new
	mkdir -p $d/etc2
	echo other > $d/etc2/marker
	pid=$(mnt_container $d) || return 1
	$MNTDRV save $pid $d/img 2> $d/save.err || { cat $d/save.err; kill -9 $pid; return 1; }
	kill -9 $pid
	mnt_restore_into $d /data:$d/etc2
	cat $d/restore.err
	kill -9 $(cat $d/new)
	grep -q "the container has no bind of a host path at /data" $d/restore.err || return 1
	mnt_restore_into $d /etc:$d/nowhere
	cat $d/restore.err
	kill -9 $(cat $d/new)
	grep -q "mount /etc (ext4): its host path $d/nowhere, to bind it from: No such file" $d/restore.err ||
		return 1
	mnt_restore_into $d /etc:$d/etc2 || { cat $d/restore.err; kill -9 $(cat $d/new); return 1; }
	new=$(cat $d/new)
	[ "$(cat /proc/$new/root/etc/marker)" = other ] &&
		grep -q " /etc ro,nosuid,nodev" /proc/$new/mountinfo || { kill -9 $new; return 1; }
	kill -9 $new
	sanitizer_clean $d/save.err $d/restore.err
}

test_mntns_refuse_ramfs() {
	mnt_refused ramfs 'mkdir $r/data/ram && mount -t ramfs ramfs $r/data/ram' \
		"mount /data/ram (ramfs): its filesystem is not mounted anywhere on the host"
}

# Hidden tmpfs: /data under a tmpfs stacked on it, /data/dir/sub under
# a tmpfs over /data/dir.  Their files are saved all the same (read
# through a copy of the namespace where what covers them is detached),
# and come back under the same covers.
test_mntns_hidden() {
	local d=$WORK/hidden pid new
	mkdir -p $d
	pid=$(mnt_container $d 'echo under > $r/data/dir/u &&
		mount -t tmpfs tmpfs $r/data/dir && echo over > $r/data/dir/o &&
		mount -t tmpfs tmpfs $r/data && echo top > $r/data/top') || return 1
	mnt_fields $pid > $d/before
	$MNTDRV save $pid $d/img 2> $d/save.err || { cat $d/save.err; kill -9 $pid; return 1; }
	kill -9 $pid
	mnt_restore_into $d || { cat $d/restore.err; kill -9 $(cat $d/new); return 1; }
	new=$(cat $d/new)
	mnt_fields $new > $d/after
	# what is under the covers, seen in a copy of its namespace
	# (umount(8) would want a /proc of its own pid namespace)
	nsenter -t $new -m -- unshare --mount --propagation private sh -c '
		detach() { '"$PYTHON"' -c "import ctypes, sys; sys.exit(ctypes.CDLL(None).umount2(b\"$1\", 2))"; }
		cat /data/top && detach /data && cat /data/a /data/dir/o &&
		detach /data/dir && cat /data/dir/u && readlink /data/dir/link' > $d/under 2>&1
	kill -9 $new
	cat $d/under
	diff $d/before $d/after &&
		[ "$(echo $(cat $d/under))" = "top hello over under ../a" ] &&
		sanitizer_clean $d/save.err $d/restore.err
}

test_mntns_refuse_deleted() {
	mkdir -p $WORK/gone
	mnt_refused deleted 'mount --bind '$WORK'/gone $r/peer && rmdir '$WORK'/gone' \
		"mount /peer (ext4): its source is gone"
}

test_mntns_refuse_xattr() {
	mnt_refused xattr "$PYTHON"' -c "import os; os.setxattr(\"$r/data/a\", \"user.x\", b\"1\")"' \
		"mount /data (tmpfs): file [a-z]*: it has extended attributes"
}

# `ckpt info` shows the records' fields: a holder's image with a tmpfs
# root, a file with data and a bind of /usr put after its TASK (forged,
# every checksum valid; the records are the root's).
test_mntns_info() {
	local d=$WORK/info pid
	mkdir -p $d
	"$AUX/holder" plain $d/go > $d/out 2>&1 < /dev/null &
	wait_for $d/out READY || return 1
	pid=$(awk '/READY/ { print $2 }' $d/out)
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $pid; return 1; }
	. <(sed -n '/^le() {/,/^}/p; /^zeros()/p; /^strhex()/p; /^mntrec() {/,/^}/p;
		/^mntfile() {/,/^}/p; /^mntdata()/p' "$ROOT/tests/bad_images.sh")
	"$PYTHON" "$ROOT/tests/forge.py" insert $d/img $d/mnt.img --at after:TASK \
		--type 250 --payload "$(mntrec 10 0 3 64 0 0 0 0 0 0 "" tmpfs tmpfs "" mode=755 "")" \
		--type 251 --payload "$(mntfile $((0x41ed)) 0 0 0 0 0 0 "")" \
		--type 251 --payload "$(mntfile $((0x81a4)) 1 2 0 8 0 0 a)" \
		--type 252 --payload "$(mntdata 0 4 61626364)" \
		--type 250 --payload "$(mntrec 11 10 1 $((0x41)) 0 0 0 0 0 0 usr ext4 /dev/x usr "" /usr)" || return 1
	ckpt info $d/mnt.img > $d/info 2> $d/info.err || { cat $d/info.err; return 1; }
	grep MNT $d/info
	grep -q "^MNT .* id=10 parent=0 how=tmpfs flags=0x40 .* mountpoint= type=tmpfs source=tmpfs root= options=mode=755 host=$" $d/info &&
		grep -q "^MNT_FILE .* path=a mode=0x81a4 uid=1 gid=2 size=8 link=0$" $d/info &&
		grep -q "^MNT_DATA .* off=0 len=4$" $d/info &&
		grep -q "^MNT .* id=11 parent=10 how=bind flags=0x41 .* mountpoint=usr type=ext4 source=/dev/x root=usr options= host=/usr$" $d/info &&
		sanitizer_clean $d/err $d/info.err
}

# mnt_ct DIR [SETUP]: a container: its own pid and mount namespaces,
# pivot_root'ed into a host directory with ro binds of /usr and /etc, a
# tmpfs /data with files, a tmpfs /dev with a null device, its own
# /proc.  Its init (a shell, pid 1, its fds on that /dev/null) waits for
# /data/go, then reads its tmpfs files back and what its /proc says of
# pid 1.  (No fd of it is open on a tmpfs file: restart checks those
# paths against its own mounts before the container's exist.)  SETUP:
# shell commands run before the pivot, $r the root.  Its init's host
# pid is in $init, unshare's in $up (both the caller's locals), its
# mounts in DIR/before.
mnt_ct() {
	local d=$1 r=$1/root i
	mkdir -p $r/usr $r/etc $r/proc $r/data $r/dev $r/old
	ln -sfn usr/bin $r/bin
	ln -sfn usr/lib $r/lib
	ln -sfn usr/lib64 $r/lib64
	step "container"
	unshare --mount --propagation private --pid --fork bash -c '
		r='$r'
		mount --bind $r $r &&
		mount --bind /usr $r/usr && mount -o remount,bind,ro $r/usr &&
		mount --bind /etc $r/etc && mount -o remount,bind,ro,nosuid $r/etc &&
		mount -t tmpfs -o size=1m,mode=755 tmpfs $r/data &&
		echo "saved in a tmpfs" > $r/data/a && mkdir $r/data/dir &&
		ln -s ../a $r/data/dir/link &&
		mount -t tmpfs -o mode=755,nosuid tmpfs $r/dev &&
		mknod -m 666 $r/dev/null c 1 3 &&
		mount -t proc -o nosuid,nodev,noexec proc $r/proc &&
		'"${2:-true}"' &&
		cd $r && pivot_root . old && umount -l /old && cd / &&
		exec bash -c "exec < /dev/null > /dev/null 2>&1
			exec 10<&-	# (bash kept the host'"'"'s stdin there)
			echo READY \$\$ >> /data/out
			while [ ! -e /data/go ]; do sleep 0.02; done
			{ echo \"a: \$(cat /data/a) link: \$(cat /data/dir/link)\"
			  echo \"pid 1: \$(cat /proc/1/comm) \$(cut -d\" \" -f1 /proc/\$\$/stat)\"
			  echo PASS; } >> /data/out
			exec sleep 1000"' > $d/setup.out 2>&1 < /dev/null &
	up=$!
	for ((i = 0; i < 500; i++)); do
		init=$(pgrep -P $up)
		[ -n "$init" ] && grep -q READY /proc/$init/root/data/out 2> /dev/null && break
		sleep 0.01
	done
	grep -q "READY 1" /proc/$init/root/data/out || { cat $d/setup.out; kill -9 $init $up; return 1; }
	mnt_fields $init > $d/before
}

# The container checkpointed --kill by its host pid, restarted
# (--detach): the same mounts, and the init finds its files and itself
# as pid 1 of the new pid namespace.
test_mntns_container() {
	local d=$WORK/ct up init root i
	mkdir -p $d
	mnt_ct $d || return 1
	step "checkpoint"
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $init $up; return 1; }
	wait $up
	gone $init || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q "^NS .*own=pid,mnt" $d/info && grep -c "^MNT " $d/info | grep -qx 6 ||
		{ grep "^NS\|^MNT" $d/info; note "no mounts in the image"; return 1; }
	step "restart"
	root=$(ckpt restart --detach $d/img 2> $d/rerr) || { cat $d/rerr; return 1; }
	mnt_fields $root > $d/after
	diff $d/before $d/after || { kill -9 $root; return 1; }
	touch /proc/$root/root/data/go
	for ((i = 0; i < 500; i++)); do
		grep -q PASS /proc/$root/root/data/out 2> /dev/null && break
		sleep 0.01
	done
	cat /proc/$root/root/data/out
	grep -q "^a: saved in a tmpfs link: saved in a tmpfs$" /proc/$root/root/data/out &&
		grep -q "^pid 1: bash 1$" /proc/$root/root/data/out || { kill -9 $root; return 1; }
	kill -9 $root
	sanitizer_clean $d/err $d/rerr
}

# The same restarted with --external mnt[/etc]:PATH: its /etc is PATH;
# a key that names no host bind of the container is refused first.
# PATH holds a copy of ld.so.cache: the init's loop forks a sleep every
# 20 ms, and one caught while ld.so has the cache mapped needs it again
# (on a slow machine, one checkpoint in a few did: "mapped file
# /etc/ld.so.cache: No such file or directory").
test_mntns_container_external() {
	local d=$WORK/ct-ext up init root i
	mkdir -p $d/etc2
	echo other > $d/etc2/marker
	cp -p /etc/ld.so.cache $d/etc2/ || return 1
	mnt_ct $d || return 1
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $init $up; return 1; }
	wait $up
	gone $init || return 1
	ckpt restart --detach --external "mnt[/data]:$d/etc2" $d/img 2> $d/rerr1 && return 1
	cat $d/rerr1
	[ "$(wc -l < $d/rerr1)" = 1 ] && grep -q "no bind of a host path at /data" $d/rerr1 || return 1
	root=$(ckpt restart --detach --external "mnt[/etc]:$d/etc2" $d/img 2> $d/rerr) ||
		{ cat $d/rerr; return 1; }
	[ "$(cat /proc/$root/root/etc/marker)" = other ] || { kill -9 $root; return 1; }
	kill -9 $root
	sanitizer_clean $d/err $d/rerr $d/rerr1
}

# A container with a mount ckpt cannot make again (a ramfs) is refused
# at checkpoint in one line naming pid 1, the mount and its type, and
# runs on, let go.
test_mntns_container_refused() {
	local d=$WORK/ct-refused up init
	mkdir -p $d
	mnt_ct $d 'mkdir -p $r/data/ram && mount -t ramfs ramfs $r/data/ram' || return 1
	ckpt checkpoint --kill -o $d/img $init 2> $d/err
	[ $? = 1 ] || { echo "checkpoint did not fail"; kill -9 $init $up; return 1; }
	cat $d/err
	[ "$(wc -l < $d/err)" = 1 ] &&
		grep -q "pid 1: mount /data/ram (ramfs): its filesystem is not mounted anywhere on the host" $d/err ||
		{ kill -9 $init $up; return 1; }
	sleep 0.2
	[ "$(awk '/TracerPid/ {print $2}' /proc/$init/status)" = 0 ] || { kill -9 $init $up; return 1; }
	touch /proc/$init/root/data/go
	for ((i = 0; i < 500; i++)); do
		grep -q PASS /proc/$init/root/data/out 2> /dev/null && break
		sleep 0.01
	done
	grep -q "^pid 1: bash 1$" /proc/$init/root/data/out || { kill -9 $init $up; return 1; }
	kill -9 $init $up
	sanitizer_clean $d/err
}
