# userns.sh - containers in user namespaces of their own, their ids
# 0..65535 the host's 100000..165535, as runtimes map them: (a) built
# with unshare and pivot_root as container_a (its server run as the
# namespace's uid 1000), (b) run by runc with uidMappings, (c) one
# where setgroups is denied, as `unshare --map-root-user` makes it; and a
# user namespace nested in another, refused.
t container_userns
t container_runc_userns
t container_userns_deny
t refuse_userns_nested

USERNS_RUN=$AUX/userns_run

# Whether PID's pid namespace belongs to its user namespace.
pidns_owned() {	# PID
	$PYTHON - $1 <<'PY'
import fcntl, os, sys
p = sys.argv[1]
fd = os.open("/proc/%s/ns/pid" % p, os.O_RDONLY)
owner = fcntl.ioctl(fd, 0xb701)		# NS_GET_USERNS
sys.exit(os.fstat(owner).st_ino != os.stat("/proc/%s/ns/user" % p).st_ino)
PY
}

test_container_userns() {
	local d=$WORK/ct-u init root a rc=0
	mkdir -p $d
	init=$(ct_a_start $d $USERNS_RUN 100000 65536 --) || return 1
	for i in 1 2; do a=$(ct_ask $init 8080); done
	[ "$a" = "2 ct-a" ] || { note "before: '$a'"; kill -9 $init; return 1; }
	ckpt checkpoint --kill -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $init; return 1; }
	gone $init || return 1
	ckpt info $d/img | grep -q "NS_USER .*uid_map=0:100000:65536 gid_map=0:100000:65536" ||
		{ note "no NS_USER in the image"; rc=1; }
	ckpt restart --detach $d/img > $d/rpid 2> $d/rerr < /dev/null || { cat $d/rerr; return 1; }
	root=$(head -1 $d/rpid)
	a=$(ct_ask $root 8080)
	[ "$a" = "3 ct-a" ] || { note "after: '$a'"; rc=1; }
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$root/status)" = 1 ] || { note "not pid 1"; rc=1; }
	# its maps, its uid (the namespace's 1000: the host's 101000)
	[ "$(cat /proc/$root/uid_map | xargs)" = "0 100000 65536" ] &&
		[ "$(cat /proc/$root/gid_map | xargs)" = "0 100000 65536" ] ||
		{ note "maps: $(cat /proc/$root/uid_map)"; rc=1; }
	[ "$(awk '/^Uid/ { print $2 }' /proc/$root/status)" = 101000 ] ||
		{ note "$(grep Uid /proc/$root/status)"; rc=1; }
	[ "$(stat -c %u /proc/$root/root/data/count)" = 101000 ] || { note "file owner"; rc=1; }
	# its namespaces are its user namespace's, as the original's: its
	# root mounts a proc and remounts the tmpfs it made
	pidns_owned $root || { note "its pid namespace is not its user namespace's"; rc=1; }
	nsenter -t $root -U -m -p --setuid 0 --setgid 0 sh -c \
		'mount -o remount,size=4m,mode=700 tmpfs /data && mount -t proc proc /proc' ||
		{ note "its root cannot remount its tmpfs or mount proc"; rc=1; }
	kill -9 $root
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

test_container_runc_userns() {
	local d=$WORK/ct-runc-u id=ckpt-test-u$$ init root a rc=0
	mkdir -p $d
	ct_runc_bundle $d || return 1
	chown 100000:100000 $d/rootfs/tmp
	$PYTHON - $d/config.json <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["linux"]["namespaces"].append({"type": "user"})
m = [{"containerID": 0, "hostID": 100000, "size": 65536}]
c["linux"]["uidMappings"] = m
c["linux"]["gidMappings"] = m
json.dump(c, open(p, "w"), indent=1)
PY
	init=$(ct_runc_serving $id $d) || return 1
	root=$(ct_runc_moved $id $d $init) || return 1
	a=$(ct_http $root /cgi-bin/count)
	[ "$a" = 3 ] || { note "after: '$a'"; rc=1; }
	[ "$(cat /proc/$root/uid_map | xargs)" = "0 100000 65536" ] || { note "its uid map"; rc=1; }
	[ "$(stat -c %u /proc/$root/root/tmp/count)" = 100000 ] || { note "file owner"; rc=1; }
	pidns_owned $root || { note "its pid namespace is not its user namespace's"; rc=1; }
	kill -9 $root
	ct_runc_groups_gone $id
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# setgroups denied (as for an unprivileged user's namespace): its
# processes have the groups its maker had, which restart gives the root
# before it makes the namespace.  The holder checks that it went on as it
# was, memory and counter.
test_container_userns_deny() {
	local d=$WORK/ct-deny up pid root groups rc=0
	mkdir -p $d
	setpriv --groups 4,24 unshare --user --map-root-user --fork --pid "$AUX/holder" plain $d/go \
		> $d/out 2>&1 < /dev/null &
	up=$!
	wait_for $d/out READY || { kill -9 $up; return 1; }
	pid=$(pgrep -P $up)
	groups=$(awk '/^Groups/ { $1 = ""; print }' /proc/$pid/status)
	[ "$(cat /proc/$pid/setgroups)" = deny ] && [ -n "$(echo $groups)" ] ||
		{ note "setup: $(cat /proc/$pid/setgroups) '$groups'"; kill -9 $up; return 1; }
	ckpt checkpoint --kill -o $d/img $pid 2> $d/err || { cat $d/err; kill -9 $up; return 1; }
	wait $up
	ckpt info $d/img | grep -q "NS_USER .*setgroups=deny groups=4,24" || { note "NS_USER"; rc=1; }
	ckpt restart --detach $d/img > $d/rpid 2> $d/rerr < /dev/null || { cat $d/rerr; return 1; }
	root=$(head -1 $d/rpid)
	[ "$(cat /proc/$root/setgroups)" = deny ] && [ "$(cat /proc/$root/uid_map | xargs)" = "0 0 1" ] ||
		{ note "its namespace: $(cat /proc/$root/setgroups) $(cat /proc/$root/uid_map)"; rc=1; }
	[ "$(awk '/^Groups/ { $1 = ""; print }' /proc/$root/status)" = "$groups" ] ||
		{ note "groups: $(grep Groups /proc/$root/status), before '$groups'"; rc=1; }
	touch $d/go
	for ((i = 0; i < 500; i++)); do grep -q '^PASS' $d/out && break; sleep 0.01; done
	grep -q '^PASS' $d/out || { note "$(tail -3 $d/out)"; rc=1; }
	kill -9 $root 2> /dev/null
	[ $rc = 0 ] && sanitizer_clean $d/err $d/rerr
}

# A container whose user namespace is nested in another one than ckpt's:
# refused by name, left running.
test_refuse_userns_nested() {
	local d=$WORK/ct-nest pid rc=0
	mkdir -p $d
	$USERNS_RUN 100000 65536 -- $USERNS_RUN 0 1000 -- unshare --pid --fork --mount-proc \
		sleep 1000 > $d/out 2>&1 < /dev/null &
	for ((i = 0; i < 500; i++)); do
		pid=$(pgrep -f '^sleep 1000$' | while read p; do
			grep -q "CKPT_TEST_TAG=$CKPT_TEST_TAG" /proc/$p/environ 2> /dev/null && echo $p
		done | head -1)
		[ -n "$pid" ] && break
		sleep 0.02
	done
	[ -n "$pid" ] || { cat $d/out; return 1; }
	ckpt checkpoint -o $d/img $pid 2> $d/err && { note "checkpointed"; rc=1; }
	grep -q "user namespace is nested" $d/err || { cat $d/err; rc=1; }
	kill -0 $pid || { note "it did not run on"; rc=1; }
	kill -9 $pid
	return $rc
}
