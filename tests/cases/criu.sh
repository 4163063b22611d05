# criu.sh - ckpt as a drop-in for CRIU (src/criu/), as issue 21 asks it
# shown: (a) runc checkpoints and restores a busybox container with
# --criu pointing at ckpt, (b) a copy restored beside the original,
# (c) a TCP connection from the host kept with --tcp-established,
# (d) a restore under another bundle and network namespace from a
# copied image directory, a container in a user namespace of its own, a
# terminal container (its console's master runc's),
# (f) hostile and fuzzed RPC; and CRIU's command
# line, as `criu` (a link) and as `ckpt criu`.
t criu_runc
t criu_runc_copy
t criu_runc_tcp
t criu_runc_migrate
t criu_runc_predump
t criu_runc_userns
t criu_runc_terminal
t criu_rpc_hostile
t criu_rpc_fuzz		timeout 240
t criu_rpc_libfuzzer	timeout 200
t criu_cli_process		group criu_cli
t criu_cli_container
t criu_cli_hostile		group criu_cli
t criu_podman			group podman
t criu_containerd		group podman

# The criu runc runs: ckpt as `criu` (a link; runc starts `criu swrk
# 3`), runc under a timeout (a wrapper's own timeout would be the
# process that runc moves into the container's groups, not ckpt).
# ASan's reports go to files: runc gives criu's stderr to /dev/null.
criu_bin() {	# DIR
	mkdir -p $1/bin
	ln -sf "$CKPT" $1/bin/criu
	export ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$1/asan
}

crunc() {	# DIR ARGS...: runc with ckpt as its criu
	local d=$1
	shift
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: runc $*" > "$T_STEPFILE"
	timeout -k 5 $RESTART_TIMEOUT runc --criu $d/bin/criu "$@"
}

# A busybox rootfs and config.json (as container_runc's): its init a
# shell counting in /tmp/count of its rootfs, ten times a second; with
# a TCP PORT, a Python server there instead, answering each line with
# the count of lines so far (the host's /usr bound in: a bind mount
# runc names to criu as an external mount).
criu_bundle() {	# DIR [PORT]  (CRIU_USERNS=1: in a user namespace)
	local d=$1 r=$1/rootfs c
	mkdir -p $r/bin $r/proc $r/dev $r/sys $r/tmp $r/usr
	cp /bin/busybox $r/bin/
	for c in sh cat echo sleep; do ln -sf busybox $r/bin/$c; done
	ln -s usr/lib $r/lib && ln -s usr/lib64 $r/lib64
	(cd $d && runc spec) || return 1
	$PYTHON - $d/config.json ${2:-} <<'PY'
import json, os, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", "n=0; while :; do n=$((n+1)); echo $n > /tmp/count; sleep 0.1; done"]
if len(sys.argv) > 2:
    c["process"]["args"] = ["/usr/bin/python3", "-c", """
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", %s))
s.listen(4)
n = 0
while True:
    c, _ = s.accept()
    for line in c.makefile("rb"):
        n += 1
        c.sendall(b"%%d\\n" %% n)
    c.close()
""" % sys.argv[2]]
    c["mounts"].append({"destination": "/usr", "type": "bind", "source": "/usr",
                        "options": ["rbind", "ro"]})
c["root"]["readonly"] = False
c["hostname"] = "ct-criu"
if os.environ.get("CRIU_USERNS"):
    c["linux"]["namespaces"].append({"type": "user"})
    m = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    c["linux"]["uidMappings"] = m
    c["linux"]["gidMappings"] = m
    os.chown(os.path.join(os.path.dirname(p), "rootfs/tmp"), 100000, 100000)
json.dump(c, open(p, "w"), indent=1)
PY
}

count_of() {	# BUNDLE
	cat $1/rootfs/tmp/count 2> /dev/null
}

# true once BUNDLE's container counts on (twice, a few apart)
counting() {	# BUNDLE
	local a= b= i
	for ((i = 0; i < 200; i++)); do
		sleep 0.05
		b=$(count_of $1)
		[ -z "$a" ] && a=$b
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt $((a + 2)) ] && return 0
	done
	note "$1 does not count on: $a then $b"
	return 1
}

# runc runs container ID of BUNDLE, detached, and it counts on (else it
# is removed).
criu_started() {	# ID BUNDLE
	(cd $2 && runc run -d $1 < /dev/null > /dev/null 2>&1) || { note "runc run failed"; return 1; }
	counting $2 || { criu_rm $1; return 1; }
}

runc_pid() {	# ID
	runc state $1 | $PYTHON -c 'import json, sys; print(json.load(sys.stdin)["pid"])'
}

runc_status() {	# ID
	runc state $1 2> /dev/null | $PYTHON -c 'import json, sys; print(json.load(sys.stdin)["status"])'
}

# Its container gone, and the cgroups runc made for it.
criu_rm() {	# ID...
	local id i
	for id; do
		runc kill $id KILL > /dev/null 2>&1
		runc delete -f $id > /dev/null 2>&1
		for ((i = 0; i < 200; i++)); do
			rmdir /sys/fs/cgroup/*/$id 2> /dev/null
			ls -d /sys/fs/cgroup/*/$id > /dev/null 2>&1 || break
			sleep 0.05
		done
	done
	return 0
}

asan_clean() {	# DIR
	! ls $1/asan.* > /dev/null 2>&1 || { cat $1/asan.*; return 1; }
}

test_criu_runc() {
	local d=$WORK/crunc id=ckpt-criu-$$ before init rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	criu_started $id $d/b || return 1
	before=$(runc_pid $id)
	# what ckpt cannot do is refused by name, the container left as it was
	step "runc checkpoint --page-server (refused)"
	crunc $d checkpoint --page-server 127.0.0.1:9 --image-path $d/refused $id 2> /dev/null && rc=1
	grep -q "option ps (page server): not supported by ckpt" $d/refused/dump.log ||
		{ note "refusal: $(cat $d/refused/dump.log)"; rc=1; }
	[ ! -e $d/refused/ckpt.img ] && [ ! -e $d/refused/inventory.img ] || rc=1
	[ "$(runc_status $id)" = running ] && [ "$(runc_pid $id)" = $before ] || rc=1
	step "runc checkpoint"
	crunc $d checkpoint --image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	gone $before || { note "the container runs on"; rc=1; }
	[ -z "$(runc list -q | grep -x $id)" ] || { note "runc still lists it"; rc=1; }
	# what engines read: the image, podman's inventory.img, runc's own
	[ -s $d/img/ckpt.img ] && grep -q "^ckpt .* image: ckpt.img" $d/img/inventory.img &&
		[ -s $d/img/descriptors.json ] || { ls -l $d/img; rc=1; }
	ckpt info $d/img/ckpt.img > /dev/null || rc=1
	step "runc restore"
	(cd $d/b && crunc $d restore -d --image-path $d/img $id < /dev/null > /dev/null 2> $d/rerr) ||
		{ cat $d/rerr $d/img/restore.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] || { note "runc state: $(runc state $id)"; rc=1; }
	runc list | grep -q "^$id .* running " || { runc list; rc=1; }
	init=$(runc_pid $id)
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$init/status)" = 1 ] || { note "not pid 1"; rc=1; }
	[ "$(nsenter -t $init -u hostname)" = ct-criu ] || rc=1
	grep -qx $init /sys/fs/cgroup/pids/$id/cgroup.procs || { note "not in its cgroup"; rc=1; }
	counting $d/b || rc=1
	criu_rm $id
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# runc's pre-copy: `checkpoint --pre-dump` leaves the container running,
# its memory tracked; `checkpoint --parent-path` then saves only what it
# wrote since, and restore reads both.
test_criu_runc_predump() {
	local d=$WORK/crunc-pre id=ckpt-criu-$$ before rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	criu_started $id $d/b || return 1
	before=$(runc_pid $id)
	step "runc checkpoint --pre-dump"
	crunc $d checkpoint --pre-dump --image-path $d/pre $id 2> $d/err ||
		{ cat $d/err $d/pre/dump.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] && [ "$(runc_pid $id)" = $before ] ||
		{ note "not running on after the pre-dump"; rc=1; }
	counting $d/b || rc=1
	step "runc checkpoint --parent-path"
	crunc $d checkpoint --parent-path ../pre --image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	gone $before || { note "the container runs on"; rc=1; }
	ckpt info $d/img/ckpt.img | grep -q '^PARENT .*pre/ckpt.img' || rc=1
	ckpt info $d/img/ckpt.img | grep -q '^PAGES_PARENT' || rc=1
	note "pre-dump $(stat -c %s $d/pre/ckpt.img) bytes, dump $(stat -c %s $d/img/ckpt.img)"
	# smaller, for the same processes: the shell's sleep is a new one
	# each 0.1 s, and one may be running at the dump and not at the
	# pre-dump, or another one (its pages all new): the pids compared
	if [ "$(ckpt info $d/pre/ckpt.img | grep '^TASK ' | grep -o ' pid=[0-9]*')" = \
	     "$(ckpt info $d/img/ckpt.img | grep '^TASK ' | grep -o ' pid=[0-9]*')" ]; then
		[ $(stat -c %s $d/img/ckpt.img) -lt $(stat -c %s $d/pre/ckpt.img) ] || rc=1
	fi
	step "runc restore"
	(cd $d/b && crunc $d restore -d --image-path $d/img $id < /dev/null > /dev/null 2> $d/rerr) ||
		{ cat $d/rerr $d/img/restore.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] || { note "runc state: $(runc state $id)"; rc=1; }
	counting $d/b || rc=1
	criu_rm $id
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# A container in a user namespace of its own (runc's uidMappings): runc
# restores it from its bundle under /run/runc, which only the host's root
# may enter; it counts on, its maps as they were.
test_criu_runc_userns() {
	local d=$WORK/crunc-u id=ckpt-criu-u$$ before init rc=0
	criu_bin $d && CRIU_USERNS=1 criu_bundle $d/b || return 1
	criu_started $id $d/b || return 1
	before=$(runc_pid $id)
	step "runc checkpoint"
	crunc $d checkpoint --image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	gone $before || { note "the container runs on"; rc=1; }
	step "runc restore"
	(cd $d/b && crunc $d restore -d --image-path $d/img $id < /dev/null > /dev/null 2> $d/rerr) ||
		{ cat $d/rerr $d/img/restore.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] || { note "runc state: $(runc state $id)"; rc=1; }
	init=$(runc_pid $id)
	[ "$(cat /proc/$init/uid_map | xargs)" = "0 100000 65536" ] || { note "its uid map"; rc=1; }
	counting $d/b || rc=1
	criu_rm $id
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# A terminal container ("terminal": true): its console's master is runc's
# (sent to --console-socket), its slave the init's stdio and terminal
# and runc's /dev/console.  Restored, the new master goes to runc
# (CRIU's orphan-pts-master) and on to the new console socket; the
# container counts on, printing to it, and /dev/console reaches it.
test_criu_runc_terminal() {
	local d=$WORK/crunc-t id=ckpt-criu-t$$ before init rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	$PYTHON - $d/b/config.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = True
c["process"]["args"] = ["/bin/sh", "-c", "n=0; while :; do n=$((n+1)); echo $n > /tmp/count; echo tick $n; sleep 0.1; done"]
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY
	console_socket $d/cs1 $d/out1 || return 1
	(cd $d/b && runc run -d --console-socket $d/cs1 $id < /dev/null > /dev/null 2>&1) ||
		{ note "runc run failed"; return 1; }
	counting $d/b || { criu_rm $id; return 1; }
	before=$(runc_pid $id)
	step "runc checkpoint"
	crunc $d checkpoint --image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	gone $before || { note "the container runs on"; rc=1; }
	console_socket $d/cs2 $d/out2 || return 1
	step "runc restore"
	(cd $d/b && crunc $d restore -d --console-socket $d/cs2 --image-path $d/img $id \
		< /dev/null > /dev/null 2> $d/rerr) ||
		{ cat $d/rerr $d/img/restore.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] || { note "runc state: $(runc state $id)"; rc=1; }
	init=$(runc_pid $id)
	counting $d/b || rc=1
	[ "$(awk '{ print $7 }' /proc/$init/stat)" != 0 ] || { note "no terminal"; rc=1; }
	nsenter -t $init -m sh -c 'echo to-the-console > /dev/console' || rc=1
	for ((i = 0; i < 100; i++)); do grep -q to-the-console $d/out2 && break; sleep 0.05; done
	grep -q "^GOT " $d/out2 && grep -q "^tick" $d/out2 && grep -q to-the-console $d/out2 ||
		{ note "the new console: $(head -c 300 $d/out2)"; rc=1; }
	criu_rm $id
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# (b): checkpointed with --leave-running, the image restored beside it as
# a second container, under a copy of the bundle: both count on, each in
# its own rootfs and groups.
test_criu_runc_copy() {
	local d=$WORK/crunc-copy id=ckpt-criu-$$ id2=ckpt-criu2-$$ init init2 rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	criu_started $id $d/b || return 1
	init=$(runc_pid $id)
	step "runc checkpoint --leave-running"
	crunc $d checkpoint --leave-running --image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	[ "$(runc_status $id)" = running ] && [ "$(runc_pid $id)" = $init ] || { note "not left running"; rc=1; }
	counting $d/b || rc=1
	cp -a $d/b $d/b2
	step "runc restore as $id2"
	crunc $d restore -d -b $d/b2 --image-path $d/img $id2 < /dev/null > /dev/null 2> $d/rerr ||
		{ cat $d/rerr $d/img/restore.log; criu_rm $id; return 1; }
	init2=$(runc_pid $id2)
	[ "$(runc_status $id2)" = running ] && [ "$(runc_status $id)" = running ] || { runc list; rc=1; }
	counting $d/b && counting $d/b2 || rc=1
	# its root is the copy's rootfs (runc's root for it), its groups its own
	grep -q "^[0-9]* [0-9]* [^ ]* [^ ]*/crunc-copy/b2/rootfs / " /proc/$init2/mountinfo ||
		{ note "root: $(head -1 /proc/$init2/mountinfo)"; rc=1; }
	grep -qx $init2 /sys/fs/cgroup/pids/$id2/cgroup.procs || { note "not in its cgroup"; rc=1; }
	criu_rm $id $id2
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# podman (runc its runtime), finding ckpt as `criu` on PATH (it asks
# criu's version itself, then runs runc, whose criu is `criu` from
# PATH).  Root here lacks CAP_SYS_RESOURCE: podman's default rlimits
# (nofile 1048576) cannot be set, lower ones are given.  An image of
# the busybox rootfs (podman import), a container counting; podman
# checkpoint and restore; then checkpoint --leave-running --export and
# restore --import as a second container (migration as podman does
# it), both counting on.
pod() {
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: podman $*" > "$T_STEPFILE"
	timeout -k 5 $RESTART_TIMEOUT podman --runtime "$(command -v runc)" "$@"
}

pod_count() {	# ID
	pod exec $1 cat /tmp/count 2> /dev/null
}

pod_counting() {	# ID
	local a= b= i
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		b=$(pod_count $1)
		[ -z "$a" ] && a=$b
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt $((a + 2)) ] && return 0
	done
	note "podman container $1 does not count on: $a then $b"
	return 1
}

pod_end() {	# IMAGE ID...
	local img=$1 id
	shift
	for id; do pod rm -f -t 0 $id > /dev/null 2>&1; done
	pod rmi $img > /dev/null 2>&1
	pod_unlock
}

# podman's lock memory, made in the suite's own /dev/shm, and its
# cgroups (conmon's, the containers') go once none of its containers is
# left to need them.  (The tests using podman are of one group: never
# two at once.)
pod_unlock() {
	[ -z "$(pod ps -aq)" ] || return 0
	rm -f /dev/shm/libpod_lock
	rmdir /sys/fs/cgroup/*/libpod_parent/* /sys/fs/cgroup/*/libpod_parent 2> /dev/null
	return 0
}

test_criu_podman() {
	local d=$WORK/cpodman img=localhost/ckpt-test-bb:$$ id=ckpt-pod-$$ id2=ckpt-pod2-$$ dir rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	export PATH=$d/bin:$PATH
	tar -C $d/b/rootfs -c . | pod import - $img > /dev/null || return 1
	pod run -d --name $id --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 $img \
		/bin/sh -c 'n=0; while :; do n=$((n+1)); echo $n > /tmp/count; sleep 0.1; done' > /dev/null ||
		{ pod_end $img $id; return 1; }
	pod_counting $id || { pod_end $img $id; return 1; }
	# (the export first: a container that ckpt restarted maps its
	# programs from the host's path for now, which a restore into
	# another root then cannot find: reported with this test)
	step "podman container checkpoint --leave-running --export"
	pod container checkpoint --leave-running --export $d/ck.tar $id > /dev/null 2>> $d/err ||
		{ cat $d/err; pod_end $img $id; return 1; }
	tar -tf $d/ck.tar | grep -qx checkpoint/ckpt.img || { note "not in the archive"; rc=1; }
	step "podman container restore --import"
	pod container restore --import $d/ck.tar --name $id2 > /dev/null 2>> $d/err ||
		{ cat $d/err; pod_end $img $id $id2; return 1; }
	pod_counting $id && pod_counting $id2 || rc=1
	step "podman container checkpoint"
	pod container checkpoint $id > /dev/null 2>> $d/err || { cat $d/err; pod_end $img $id $id2; return 1; }
	[ "$(pod inspect -f '{{.State.Status}}' $id)" = exited ] || rc=1
	dir=$(pod inspect -f '{{.StaticDir}}' $id)/checkpoint
	[ -s $dir/ckpt.img ] && [ -s $dir/inventory.img ] || { ls -l $dir; rc=1; }
	step "podman container restore"
	pod container restore $id > /dev/null 2>> $d/err || { cat $d/err; pod_end $img $id $id2; return 1; }
	[ "$(pod inspect -f '{{.State.Status}}' $id)" = running ] || rc=1
	pod_counting $id || rc=1
	pod_end $img $id $id2
	[ $rc = 0 ] && asan_clean $d
}

# containerd (a daemon of the test's own: its root, state and sockets in
# $WORK, ckpt as `criu` on its PATH, which its runc shim passes on to
# runc) and ctr.  The busybox image from podman (save: an OCI archive);
# a container counting; `ctr c checkpoint --task --rw` (containerd
# pauses the task first: ckpt thaws its freezer cgroup for the dump and
# freezes it again); the original runs on; `ctr c restore --live --rw`
# of the checkpoint as a second container, counting on too; then
# `ctr t checkpoint --exit` ends the first.
ctd() {
	[ -n "${T_STEPFILE:-}" ] && printf '%s\n' "${T_STEP:-start}: ctr $*" > "$T_STEPFILE"
	timeout -k 5 $RESTART_TIMEOUT ctr -a $CTD/sock -n $CTD_NS "$@"
}

ctd_counting() {	# ID
	local a= b= i
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		b=$(ctd task exec --exec-id c$i $1 cat /tmp/count 2> /dev/null)
		[ -z "$a" ] && a=$b
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt $((a + 2)) ] && return 0
	done
	note "containerd container $1 does not count on: $a then $b"
	return 1
}

ctd_end() {	# DAEMON-PID ID...
	local daemon=$1 id i
	shift
	for id; do ctd task kill -s KILL $id > /dev/null 2>&1; done
	for id; do
		for ((i = 0; i < 50; i++)); do
			ctd task rm -f $id > /dev/null 2>&1 || break
			sleep 0.1
		done
		ctd container rm $id > /dev/null 2>&1
	done
	for i in $(ctd image ls -q 2> /dev/null); do ctd image rm $i > /dev/null 2>&1; done
	kill $daemon 2> /dev/null
	wait $daemon 2> /dev/null
	for ((i = 0; i < 100; i++)); do
		rmdir /sys/fs/cgroup/*/$CTD_NS/* /sys/fs/cgroup/*/$CTD_NS 2> /dev/null
		ls -d /sys/fs/cgroup/*/$CTD_NS > /dev/null 2>&1 || break
		sleep 0.05
	done
	return 0
}

test_criu_containerd() {
	local d=$WORK/cctd img=localhost/ckpt-test-bb:$$ daemon i rc=0
	CTD=$d/ctd CTD_NS=ckpt-test-$$
	criu_bin $d && criu_bundle $d/b && mkdir -p $CTD || return 1
	cat > $CTD/config.toml <<TOML
version = 2
root = "$CTD/root"
state = "$CTD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTD/sock"
[ttrpc]
  address = "$CTD/sock.ttrpc"
TOML
	tar -C $d/b/rootfs -c . | pod import - $img > /dev/null &&
		pod save --format oci-archive -o $d/bb.tar $img > /dev/null 2>&1 || { pod rmi $img; return 1; }
	pod rmi $img > /dev/null
	pod_unlock
	PATH=$d/bin:$PATH containerd --config $CTD/config.toml > $CTD/log 2>&1 < /dev/null &
	daemon=$!
	for ((i = 0; i < 100; i++)); do
		ctd version > /dev/null 2>&1 && break
		sleep 0.1
	done
	ctd image import $d/bb.tar > /dev/null || { cat $CTD/log; ctd_end $daemon; return 1; }
	ctd run -d --runtime io.containerd.runc.v2 $img c1 \
		/bin/sh -c 'n=0; while :; do n=$((n+1)); echo $n > /tmp/count; sleep 0.1; done' > /dev/null ||
		{ ctd_end $daemon c1; return 1; }
	ctd_counting c1 || { ctd_end $daemon c1; return 1; }
	step "ctr container checkpoint --task --rw"
	ctd container checkpoint --task --rw c1 localhost/c1-ckpt:1 2> $d/err ||
		{ cat $d/err $CTD/state/*/*/c1/criu-dump.log; ctd_end $daemon c1; return 1; }
	ctd task ls | grep -q "^c1 .* RUNNING" || { ctd task ls; rc=1; }
	ctd_counting c1 || rc=1
	step "ctr container restore --live --rw"
	ctd container restore --live --rw c2 localhost/c1-ckpt:1 2>> $d/err ||
		{ cat $d/err; ctd_end $daemon c1 c2; return 1; }
	ctd_counting c2 && ctd_counting c1 || rc=1
	step "ctr task checkpoint --exit"
	ctd task checkpoint --exit --image-path $d/img c1 2>> $d/err || { cat $d/err; rc=1; }
	ctd task ls | grep -q "^c1 .* STOPPED" && [ -s $d/img/ckpt.img ] || { ctd task ls; ls $d/img; rc=1; }
	ctd_counting c2 || rc=1
	ctd_end $daemon c1 c2
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err
}

# (f): truncated, malformed, oversized messages and refused options get
# an error response (naming the option) or a clean close; ckpt swrk exits
# by itself, never by a signal or a sanitizer (tests/criu/rpc_client.py).
test_criu_rpc_hostile() {
	mkdir -p $WORK/empty
	timeout 100 $PYTHON $ROOT/tests/criu/rpc_client.py $CKPT hostile $WORK/empty
}

# (f): 400 random and mutated messages, each to its own ckpt swrk, in a
# pid namespace of their own (a mutated DUMP reaches nothing of ours).
test_criu_rpc_fuzz() {
	SEED=$$ timeout 220 unshare --pid --fork --mount-proc \
		$PYTHON $ROOT/tests/criu/rpc_client.py $CKPT fuzz 400
}

# CRIU's command line: a plain process dumped with --leave-running by
# the link named criu, then ended and restored with -d and --pidfile;
# dumped again (killed) by `ckpt criu`, restored; check, --version, and
# pre-dump refused.
test_criu_cli_process() {
	local d=$WORK/ccli pid kids p rc=0
	criu_bin $d && mkdir -p $d/img $d/img2
	setsid sh -c 'n=0; while :; do n=$((n+1)); echo $n > '$d'/count; sleep 0.1; done' \
		< /dev/null > /dev/null 2>&1 &
	pid=$!
	wait_for $d/count . || return 1
	step "criu dump --leave-running"
	timeout 90 $d/bin/criu dump -t $pid -D $d/img -o dump.log -v --leave-running --file-locks 2> $d/err ||
		{ cat $d/err $d/img/dump.log; kill -9 $pid; return 1; }
	grep -q "checkpoint of pid $pid done" $d/img/dump.log || { note "no log"; rc=1; }
	kill -0 $pid || { note "not left running"; return 1; }
	# its group: the sleep it runs too, whose pid the restore needs
	kids=$(pgrep -P $pid)
	kill -9 -- -$pid; wait $pid 2> /dev/null; gone $pid || return 1
	for p in $kids; do gone $p || return 1; done
	step "criu restore -d"
	timeout 90 $d/bin/criu restore -D $d/img -d --pidfile $d/pidfile -o restore.log < /dev/null > /dev/null 2>> $d/err ||
		{ cat $d/err $d/img/restore.log; return 1; }
	[ "$(cat $d/pidfile)" = $pid ] || { note "pidfile: $(cat $d/pidfile)"; rc=1; }
	counting_file $d/count || rc=1
	step "ckpt criu dump"
	ckpt criu dump -t $pid -D $d/img2 2>> $d/err || { cat $d/err; kill -9 $pid; return 1; }
	gone $pid || { note "not ended by dump"; kill -9 $pid; return 1; }
	ckpt criu restore -D $d/img2 -d < /dev/null > /dev/null 2>> $d/err || { cat $d/err; return 1; }
	counting_file $d/count || rc=1
	# a pre-dump (running on, its memory tracked), then a dump of only
	# what it wrote since, restored through the chain
	step "criu pre-dump, dump --prev-images-dir"
	mkdir -p $d/pre $d/full
	timeout 90 $d/bin/criu pre-dump -t $pid -D $d/pre 2>> $d/err || { cat $d/err; kill -9 $pid; return 1; }
	kill -0 $pid || { note "pre-dump ended it"; return 1; }
	timeout 90 $d/bin/criu dump -t $pid -D $d/full --prev-images-dir ../pre 2>> $d/err ||
		{ cat $d/err; kill -9 $pid; return 1; }
	gone $pid || { note "not ended by dump"; kill -9 $pid; return 1; }
	ckpt info $d/full/ckpt.img | grep -q "^PARENT " || { note "no PARENT"; rc=1; }
	timeout 90 $d/bin/criu restore -D $d/full -d < /dev/null > /dev/null 2>> $d/err ||
		{ cat $d/err; return 1; }
	counting_file $d/count || rc=1
	kill -9 $pid
	timeout 10 $d/bin/criu check > $d/out || rc=1
	timeout 10 $d/bin/criu --version | grep -qx "Version: 4.2" || rc=1
	timeout 10 $d/bin/criu restore -D $d/img --prev-images-dir ../x 2> $d/prev && rc=1
	grep -q "prev-images-dir is for dump" $d/prev || { cat $d/prev; rc=1; }
	# the options it cannot honour are refused by name
	timeout 10 $d/bin/criu restore -D $d/img --inherit-fd fd[7]:pipe:[1] 2> $d/inh && rc=1
	grep -q "inherit-fd fd\[7\]:pipe:\[1\]" $d/inh || { cat $d/inh; rc=1; }
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/img/*.log
}

# What an images directory from elsewhere (an archive) or a wrong
# command line cannot make the drop-in do: read a link or a FIFO as the
# image, append to a file through a link as its log, dump a pid given
# past 2^32 (as another one), or leave a tree running whose pidfile
# could not be written (all of it is killed, its children too).
test_criu_cli_hostile() {
	local d=$WORK/chost pid kids p rc=0
	criu_bin $d && mkdir -p $d/img $d/bad
	setsid sh -c 'sleep 1000 & sleep 1000 & wait' < /dev/null > /dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		kids=$(pgrep -P $pid | wc -l)
		[ "$kids" = 2 ] && break
		sleep 0.02
	done
	step "-t past 2^32"
	timeout 30 $d/bin/criu dump -t $((pid + 4294967296)) -D $d/img 2> $d/err && rc=1
	grep -q "not a pid" $d/err || { note "taken: $(cat $d/err)"; rc=1; }
	kill -0 $pid || { note "the tree was dumped"; return 1; }
	step "dump, then a pidfile that cannot be written"
	kids=$(pgrep -P $pid)
	timeout 60 $d/bin/criu dump -t $pid -D $d/img 2> $d/err || { cat $d/err; kill -9 $pid $kids; return 1; }
	timeout 60 $d/bin/criu restore -D $d/img -d --pidfile $d/no/such/dir < /dev/null > /dev/null 2> $d/err && rc=1
	sleep 0.3
	for p in $pid $kids; do
		[ -e /proc/$p ] && [ "$(awk '{ print $3 }' /proc/$p/stat)" != Z ] &&
			{ note "pid $p left running"; kill -9 $p; rc=1; }
	done
	step "the image a link, a FIFO"
	ln -s /dev/zero $d/bad/ckpt.img
	timeout 10 $d/bin/criu restore -D $d/bad -d 2> $d/err < /dev/null && rc=1
	grep -q "ckpt.img is not a regular file" $d/err || { note "link: $(cat $d/err)"; rc=1; }
	rm $d/bad/ckpt.img && mkfifo $d/bad/ckpt.img
	timeout 10 $d/bin/criu restore -D $d/bad -d 2> $d/err < /dev/null && rc=1
	grep -q "ckpt.img is not a regular file" $d/err || { note "fifo: $(cat $d/err)"; rc=1; }
	step "the log a link"
	echo keep > $d/target
	ln -s $d/target $d/bad/restore.log
	timeout 10 $d/bin/criu restore -D $d/bad -W $d/bad -o restore.log -d 2> /dev/null < /dev/null && rc=1
	[ "$(cat $d/target)" = keep ] || { note "written through the link"; rc=1; }
	[ $rc = 0 ] && asan_clean $d
}

counting_file() {	# FILE: true once the counter in it goes on
	local a b i
	a=$(cat $1)
	for ((i = 0; i < 100; i++)); do
		sleep 0.05
		b=$(cat $1 2> /dev/null)
		[ -n "$b" ] && [ "$b" -gt $((a + 2)) ] && return 0
	done
	note "$1 does not count on: $a then $b"
	return 1
}

# A runc container through CRIU's command line, by its init's pid: it
# comes back pid 1 of a new pid namespace, in the groups runc made for
# it (made again: runc deleted them), counting on.
test_criu_cli_container() {
	local d=$WORK/ccli-ct id=ckpt-criucli-$$ init rc=0
	criu_bin $d && criu_bundle $d/b && mkdir -p $d/img || return 1
	criu_started $id $d/b || return 1
	init=$(runc_pid $id)
	step "criu dump"
	timeout 90 $d/bin/criu dump -t $init -D $d/img -o dump.log 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; return 1; }
	gone $init || { note "the container runs on"; criu_rm $id; return 1; }
	runc delete -f $id > /dev/null 2>&1
	step "criu restore"
	timeout 90 $d/bin/criu restore -D $d/img -d --pidfile $d/pid -o restore.log < /dev/null > /dev/null 2>> $d/err ||
		{ cat $d/err $d/img/restore.log; criu_rm $id; return 1; }
	init=$(cat $d/pid)
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$init/status)" = 1 ] || { note "not pid 1"; rc=1; }
	grep -qx $init /sys/fs/cgroup/pids/$id/cgroup.procs || { note "not in its cgroup"; rc=1; }
	counting $d/b || rc=1
	kill -9 $init
	gone $init
	criu_rm $id
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/img/*.log
}

# Network "hosts" for (c) and (d): network namespaces held by sleepers.
declare -gA CRIU_HOST=()

criu_net() {	# HOST COMMAND...: in that host's network namespace
	local h=$1
	shift
	nsenter -t ${CRIU_HOST[$h]} -n "$@"
}

criu_hosts() {	# HOST...
	local h
	for h; do
		unshare -n sleep 1000 &
		CRIU_HOST[$h]=$!
	done
	sleep 0.1
}

criu_hosts_end() {
	local h
	for h in "${!CRIU_HOST[@]}"; do kill -9 ${CRIU_HOST[$h]} 2> /dev/null; done
	CRIU_HOST=()
}

# runc create ID on HOST, a veth from its network namespace to the
# host's (vct, 10.78.0.1; the container's eth0, 10.78.0.2), runc start.
criu_run_veth() {	# DIR HOST ID
	local init
	(cd $1/b && criu_net $2 runc create $3 < /dev/null > /dev/null 2>&1) || { note "runc create failed"; return 1; }
	init=$(runc_pid $3)
	criu_net $2 ip link add vct type veth peer name eth0 netns $init &&
	nsenter -t $init -n sh -c 'ip link set lo up && ip addr add 10.78.0.2/24 dev eth0 &&
		ip link set eth0 up' && criu_veth_host $2 &&
	runc start $3
}

criu_veth_host() {	# HOST: its end of the veth, up (again)
	criu_net $1 ip addr replace 10.78.0.1/24 dev vct && criu_net $1 ip link set vct up
}

# (c): a TCP server in the container, a client on the host holding a
# connection to it; runc checkpoint --tcp-established (the container
# ends), runc restore: the client's connection goes on, counting on.
test_criu_runc_tcp() {
	local d=$WORK/crunc-tcp id=ckpt-criutcp-$$ cl rc=0
	criu_bin $d && criu_bundle $d/b 8080 || return 1
	criu_hosts H
	criu_run_veth $d H $id || { criu_rm $id; criu_hosts_end; return 1; }
	criu_net H $PYTHON -c '
import os, socket, sys, time
for i in range(200):
    try:
        c = socket.create_connection(("10.78.0.2", 8080), timeout=10)
        break
    except OSError:
        time.sleep(0.05)
f = c.makefile()
c.sendall(b"one\n"); print(f.readline().strip(), flush=True)
c.sendall(b"two\n"); print(f.readline().strip(), flush=True)
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
c.settimeout(30)
c.sendall(b"three\n"); print(f.readline().strip(), flush=True)' $d/moved > $d/client 2>&1 &
	cl=$!
	wait_for $d/client "^2" 20 || { cat $d/client; kill -9 $cl; criu_rm $id; criu_hosts_end; return 1; }
	step "runc checkpoint --tcp-established"
	criu_net H timeout -k 5 $RESTART_TIMEOUT runc --criu $d/bin/criu checkpoint --tcp-established \
		--image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; kill -9 $cl; criu_rm $id; criu_hosts_end; return 1; }
	step "runc restore"
	(cd $d/b && criu_net H timeout -k 5 $RESTART_TIMEOUT runc --criu $d/bin/criu restore -d \
		--tcp-established --image-path $d/img $id < /dev/null > /dev/null 2> $d/rerr) ||
		{ cat $d/rerr $d/img/restore.log; kill -9 $cl; criu_rm $id; criu_hosts_end; return 1; }
	criu_veth_host H || rc=1
	touch $d/moved
	wait $cl || rc=1
	[ "$(tail -1 $d/client)" = 3 ] || { note "client: $(cat $d/client)"; rc=1; }
	[ "$(runc_status $id)" = running ] || rc=1
	# and a new connection is served too
	[ "$(criu_net H $PYTHON -c '
import socket
c = socket.create_connection(("10.78.0.2", 8080), timeout=10)
c.sendall(b"four\n"); print(c.makefile().readline().strip())')" = 4 ] || { note "no new connection"; rc=1; }
	criu_rm $id
	criu_hosts_end
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img/*.log
}

# (d): migration.  The container runs on host A (its veth there); runc
# checkpoints it; its image directory and its bundle are copied; runc
# restores it on host B, under the copied bundle: it counts on in the
# copy's rootfs, its veth's host end is B's now, reachable from B.
test_criu_runc_migrate() {
	local d=$WORK/crunc-mig id=ckpt-criumig-$$ init rc=0
	criu_bin $d && criu_bundle $d/b || return 1
	criu_hosts A B
	criu_run_veth $d A $id || { criu_rm $id; criu_hosts_end; return 1; }
	counting $d/b || { criu_rm $id; criu_hosts_end; return 1; }
	step "runc checkpoint on A"
	criu_net A timeout -k 5 $RESTART_TIMEOUT runc --criu $d/bin/criu checkpoint \
		--image-path $d/img $id 2> $d/err ||
		{ cat $d/err $d/img/dump.log; criu_rm $id; criu_hosts_end; return 1; }
	cp -a $d/img $d/img2 && cp -a $d/b $d/b2 || return 1
	rm -rf $d/img
	step "runc restore on B"
	criu_net B timeout -k 5 $RESTART_TIMEOUT runc --criu $d/bin/criu restore -d -b $d/b2 \
		--image-path $d/img2 $id < /dev/null > /dev/null 2> $d/rerr ||
		{ cat $d/rerr $d/img2/restore.log; criu_rm $id; criu_hosts_end; return 1; }
	init=$(runc_pid $id)
	[ "$(runc_status $id)" = running ] || rc=1
	grep -q "^[0-9]* [0-9]* [^ ]* [^ ]*/crunc-mig/b2/rootfs / " /proc/$init/mountinfo ||
		{ note "root: $(head -1 /proc/$init/mountinfo)"; rc=1; }
	counting $d/b2 || rc=1
	criu_net B ip link show vct > /dev/null && ! criu_net A ip link show vct 2> /dev/null ||
		{ note "the veth's host end"; rc=1; }
	criu_veth_host B && criu_net B busybox ping -c 1 -W 5 10.78.0.2 > /dev/null || { note "not reachable from B"; rc=1; }
	criu_rm $id
	criu_hosts_end
	[ $rc = 0 ] && asan_clean $d && sanitizer_clean $d/err $d/rerr $d/img2/*.log
}

# (f): libFuzzer over the decoding of a request and its options made a
# job (fuzz/rpc_fuzz.c), 20 s (about a million inputs) from the client's
# messages as seeds.
test_criu_rpc_libfuzzer() {
	step "build the fuzzer (clang)"
	make -s -C "$ROOT" build/fuzz/rpc_fuzz > $WORK/build.log 2>&1 || { cat $WORK/build.log; return 1; }
	mkdir -p $WORK/seeds $WORK/corpus
	$PYTHON $ROOT/tests/criu/rpc_client.py - seeds $WORK/seeds || return 1
	step "fuzz for 20 s"
	(cd $WORK && ASAN_OPTIONS=detect_leaks=1 timeout 120 $ROOT/build/fuzz/rpc_fuzz -max_total_time=20 \
		-rss_limit_mb=384 -malloc_limit_mb=256 -timeout=10 -print_final_stats=1 \
		$WORK/corpus $WORK/seeds > $WORK/fuzz.log 2>&1) || { tail -40 $WORK/fuzz.log; return 1; }
	grep -h "stat::number_of_executed_units" $WORK/fuzz.log
}
