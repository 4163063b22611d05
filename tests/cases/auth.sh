# auth.sh - images authenticated with a key (checkpoint --key: an AUTH
# record, the HMAC-SHA256 of every byte before it).  restart --key and
# info --key check it before using anything of the image: a wrong key, an
# image without AUTH, one forged with every checksum valid, or truncated,
# is refused in one line before any process is made.
t auth_restart
t auth_refused
t auth_forged
t auth_truncated
t auth_pipe
t auth_key_length
t auth_pidns               group pidns
t auth_container

# DIR/key and DIR/other: two keys of 32 random bytes
auth_keys() {	# DIR
	head -c 32 /dev/urandom > $1/key && head -c 32 /dev/urandom > $1/other
}

# The holder PID checkpointed with --kill --key DIR/key into DIR/img.
auth_image() {	# DIR PID
	ckpt checkpoint --kill --key $1/key -o $1/img $2 || return 1
	wait $2 2>/dev/null
	gone $2
}

# restart --key KEY of IMG exits 125 with one line saying the image is
# not authenticated by this key, and pid PID is not there.
auth_refused_restart() {	# DIR IMG PID KEY
	ckpt_t 20 restart --key $4 $2 > $1/rout 2> $1/err < /dev/null
	local rc=$?
	note "$(cat $1/err)"
	[ $rc = 125 ] && [ "$(wc -l < $1/err)" = 1 ] &&
		grep -q "image not authenticated by this key" $1/err || return 1
	sanitizer_clean $1/err && ! kill -0 $3 2>/dev/null
}

# info --key KEY of IMG exits 1, shows nothing, says why in one line.
auth_refused_info() {	# DIR IMG KEY
	ckpt info --key $3 $2 > $1/iout 2> $1/ierr < /dev/null
	[ $? = 1 ] && [ ! -s $1/iout ] && [ "$(wc -l < $1/ierr)" = 1 ] &&
		grep -q "image not authenticated by this key" $1/ierr
}

# checkpoint --key, then restart --key: the process carries on; info
# says the image is authenticated, and checked with the key.  (The file
# is written 0600: one that others could write would be copied first.)
test_auth_restart() {
	local d=$WORK/auth pid
	start_holder plain $d 4 || return 1
	auth_keys $d || return 1
	auth_image $d $pid || return 1
	ckpt info $d/img > $d/info || return 1
	grep -q '^AUTH .*HMAC-SHA256, not checked' $d/info || return 1
	ckpt info --key $d/key $d/img > $d/info || return 1
	grep -q '^AUTH .*HMAC-SHA256, verified with the key' $d/info || return 1
	ckpt info --json --key $d/key $d/img | $PYTHON -c '
import json, sys
d = json.load(sys.stdin)
assert d["complete"] and d["authenticated"] == "verified", d["authenticated"]' || return 1
	$PYTHON tests/forge.py list $d/img | tail -2 | awk '{ print $3 }' | tr '\n' ' ' |
		grep -qx 'AUTH TAIL ' || return 1
	# a file others could write is checked and read as a copy of it
	chmod 664 $d/img
	( sleep 0.5; touch $d/go ) &
	ckpt restart -v --key $d/key $d/img 2> $d/rerr || { cat $d/rerr; return 1; }
	grep -q "copied into memory" $d/rerr && grep -q '^PASS' $d/out && sanitizer_clean $d/rerr
}

# Another key, and an image made without one, are refused; the
# authenticated image still restarts without a key (its MAC unchecked).
test_auth_refused() {
	local d=$WORK/auth-refused pid hpid
	start_holder plain $d || return 1
	hpid=$pid
	auth_keys $d || return 1
	auth_image $d $hpid || return 1
	auth_refused_restart $d $d/img $hpid $d/other || return 1
	auth_refused_info $d $d/img $d/other || return 1
	grep -q "MAC does not match" $d/err || return 1
	start_holder plain $d/plain || return 1
	checkpoint_kill $d/plain $pid || return 1
	ckpt info $d/plain/img | grep -q '^AUTH .*not authenticated' || return 1
	auth_refused_restart $d $d/plain/img $pid $d/key || return 1
	auth_refused_info $d $d/plain/img $d/key || return 1
	grep -q "no AUTH record" $d/err || return 1
	( sleep 0.5; touch $d/go ) &
	ckpt restart $d/img || return 1
	grep -q '^PASS' $d/out
}

# One byte changed, anywhere, and every checksum made right again
# (tests/forge.py): the checksums cannot tell, the MAC does.
test_auth_forged() {
	local d=$WORK/auth-forged pid hpid n=0 ok=0 i off type len at p b what
	start_holder plain $d 4 || return 1
	hpid=$pid
	auth_keys $d || return 1
	auth_image $d $hpid || return 1
	# offset: what (a payload byte of each)
	while read -r i off type len _; do
		case $type in
		HEAD|TASK|VMA|CREDS|REGS|AUTH) at=$((off + 24 + len / 2)) ;;
		PAGES) at=$((off + 24 + len - 1)) ;;	# the last page's last byte
		*) continue ;;
		esac
		p=$((at - off - 24))
		what="$type#$i byte $p"
		b=$(od -An -tu1 -j $at -N1 $d/img | tr -d ' ')
		$PYTHON tests/forge.py edit $d/img $d/forged -r $i --offset $p \
			--bytes "$(printf '%02x' $((b ^ 1)))" || return 1
		cmp -s $d/img $d/forged && { note "$what: forge.py changed nothing"; return 1; }
		n=$((n + 1))
		# without the key, where the byte is one no check can judge
		# (page data), the forged image passes for a good one
		if [ $type = PAGES ]; then
			ckpt info $d/forged > /dev/null 2>&1 && ok=$((ok + 1))
		fi
		auth_refused_restart $d $d/forged $hpid $d/key || { note "$what"; return 1; }
		grep -q "MAC does not match" $d/err || return 1
		auth_refused_info $d $d/forged $d/key || { note "$what (info)"; return 1; }
	done < <($PYTHON tests/forge.py list $d/img)
	note "$n forged images refused; $ok of them (page data) pass without the key"
	[ $n -ge 6 ] && [ $ok -ge 1 ] || return 1
	# a forged record added, the AUTH record moved after it
	$PYTHON tests/forge.py insert $d/img $d/forged --at before:AUTH --type SIGPENDING \
		--payload "$(printf '%0272d' 0)" || return 1
	auth_refused_restart $d $d/forged $hpid $d/key || return 1
	( sleep 0.5; touch $d/go ) &
	ckpt restart --key $d/key $d/img || return 1
	grep -q '^PASS' $d/out
}

# An authenticated image cut short, wherever, is refused with the key.
test_auth_truncated() {
	local d=$WORK/auth-trunc pid hpid size cut
	start_holder plain $d || return 1
	hpid=$pid
	auth_keys $d || return 1
	auth_image $d $hpid || return 1
	size=$(stat -c %s $d/img)
	# the tail, the AUTH record and the tail, mid-AUTH, mid-image
	for cut in 64 152 100 $((size / 2)) 1; do
		head -c $((size - cut)) $d/img > $d/cut
		auth_refused_restart $d $d/cut $hpid $d/key || { note "cut $cut"; return 1; }
		auth_refused_info $d $d/cut $d/key || return 1
	done
}

# The image through a pipe, both ways: checkpoint --key -o - | restart
# --key -; info --key -; a wrong key through a pipe is refused.
test_auth_pipe() {
	local d=$WORK/auth-pipe pid hpid
	start_holder plain $d 4 || return 1
	hpid=$pid
	auth_keys $d || return 1
	ckpt checkpoint --kill --key $d/key -o - $hpid > $d/img 2> $d/cerr || { cat $d/cerr; return 1; }
	wait $hpid 2>/dev/null
	gone $hpid || return 1
	cat $d/img | ckpt info --key $d/key - | grep -q '^AUTH .*verified' || return 1
	cat $d/img | ckpt info --key $d/other - > $d/iout 2> $d/ierr
	[ $? = 1 ] && grep -q "not authenticated by this key" $d/ierr || return 1
	cat $d/img | ckpt_t 20 restart --key $d/other - > $d/rout 2> $d/err
	[ $? = 125 ] && grep -q "not authenticated by this key" $d/err || return 1
	kill -0 $hpid 2>/dev/null && return 1
	( sleep 0.5; touch $d/go ) &
	cat $d/img | ckpt restart --key $d/key - || return 1
	grep -q '^PASS' $d/out
}

# A key file of fewer than 16 bytes (or more than 4096) is refused at once:
# the target of checkpoint runs on untouched, no image is written.
test_auth_key_length() {
	local d=$WORK/auth-len pid
	start_holder plain $d || return 1
	head -c 15 /dev/urandom > $d/short
	head -c 4097 /dev/urandom > $d/long
	head -c 16 /dev/urandom > $d/key
	for k in short long; do
		ckpt checkpoint --kill --key $d/$k -o $d/img $pid 2> $d/err
		[ $? = 1 ] && [ "$(wc -l < $d/err)" = 1 ] && grep -q "a key is 16 to 4096 bytes" $d/err ||
			{ cat $d/err; return 1; }
		[ ! -e $d/img ] && kill -0 $pid || return 1
	done
	note "$(cat $d/err)"
	ckpt checkpoint --key $d/key -o $d/img $pid || return 1
	[ "$(awk '/TracerPid/ {print $2}' /proc/$pid/status)" = 0 ] || return 1
	ckpt restart --key $d/short $d/img 2> $d/err
	[ $? = 125 ] && grep -q "a key is 16 to 4096 bytes" $d/err || return 1
	ckpt info --key $d/short $d/img > /dev/null 2> $d/err
	[ $? = 1 ] && grep -q "a key is 16 to 4096 bytes" $d/err || return 1
	ckpt info --key $d/key $d/img > /dev/null || return 1
	touch $d/go
	wait $pid && grep -q '^PASS' $d/out
}

# restart --pidns --key: checked before the namespace is made; restored
# in it with the right key.
test_auth_pidns() {
	local d=$WORK/auth-pidns pid rpid inner
	start_holder plain $d || return 1
	auth_keys $d || return 1
	ckpt checkpoint --key $d/key -o $d/img $pid || return 1
	ckpt_t 20 restart --pidns --key $d/other $d/img > $d/rout 2> $d/err
	[ $? = 125 ] && grep -q "not authenticated by this key" $d/err || return 1
	ckpt_bg restart --pidns --key $d/key $d/img &
	rpid=$!
	pidns_holder $d $pid || return 1
	grep -q "^NSpid:.*[[:space:]]$pid\$" /proc/$inner/status || return 1
	touch $d/go
	wait $rpid && wait $pid
}

# A container's image (container.sh's (a)), which restart reads again in
# the container's engine: another key is refused before its namespaces
# are made; with its own it comes back, serving on.
test_auth_container() {
	local d=$WORK/auth-ct init root a
	mkdir -p $d
	auth_keys $d || return 1
	init=$(ct_a_start $d) || return 1
	a=$(ct_ask $init 8080)
	[ "$a" = "1 ct-a" ] || { note "before: '$a'"; kill -9 $init; return 1; }
	ckpt checkpoint --kill --key $d/key -o $d/img $init 2> $d/err || { cat $d/err; kill -9 $init; return 1; }
	gone $init || return 1
	ckpt_t 20 restart --detach --key $d/other $d/img > $d/rout 2> $d/err < /dev/null
	[ $? = 125 ] && [ ! -s $d/rout ] && grep -q "not authenticated by this key" $d/err ||
		{ cat $d/err; return 1; }
	ckpt restart --detach --key $d/key $d/img > $d/rpid 2> $d/rerr < /dev/null || { cat $d/rerr; return 1; }
	root=$(head -1 $d/rpid)
	a=$(ct_ask $root 8080)
	kill -9 $root
	[ "$a" = "2 ct-a" ] || { note "after: '$a'"; return 1; }
	sanitizer_clean $d/err $d/rerr
}
