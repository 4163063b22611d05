# images.sh - hostile images (tests/bad_images.sh, about 750 cases, in
# BI_SHARDS shards run side by side), and a 32-bit image restarted on a
# kernel that cannot run 32-bit programs.
#
# Where the kernel cannot run 32-bit code there is no 32-bit process to
# checkpoint: tests/images/holder32.img.gz, a stored image of one (remade
# by tests/images/make32.sh), stands in for it.
BI_SHARDS=3
for ((i = 1; i <= BI_SHARDS; i++)); do
	t bad_images_$i first timeout 400
	eval "test_bad_images_$i() { bad_images $i; }"
done
t restart_no_ia32
t info_stored_image
t forged_tid_twice

# The stored image IMG made fit for this CPU's xsave layout, as if made
# here: it was written on a CPU with other state components (AMX), and
# restart refuses those (its HEAD) before it looks at any process.  The
# layout is taken from a 64-bit image made here (DIR); the XSTATE
# records are cut or padded to it, their features kept to this CPU's.
fit_xstate() {	# IMG DIR
	local f="$ROOT/tests/forge.py" xf xs bv i
	HOLDER_BIN=$AUX/holder start_holder plain $2 || return 1
	checkpoint_kill $2 $pid || return 1
	xf=$("$PYTHON" "$f" get $2/img -r HEAD xfeatures) &&
		xs=$("$PYTHON" "$f" get $2/img -r HEAD xstate_size) || return 1
	[ "$("$PYTHON" "$f" get $1 -r HEAD xfeatures)" = $xf ] &&
		[ "$("$PYTHON" "$f" get $1 -r HEAD xstate_size)" = $xs ] && return 0
	note "the stored image's xsave layout made this CPU's (xfeatures $xf, $xs bytes)"
	"$PYTHON" "$f" edit $1 $1.fit -r HEAD --set xfeatures=$xf --set xstate_size=$xs &&
		mv $1.fit $1 || return 1
	for ((i = 0; ; i++)); do
		bv=$("$PYTHON" "$f" get $1 -r "XSTATE#$i" xstate_bv 2>/dev/null) || break
		"$PYTHON" "$f" edit $1 $1.fit -r "XSTATE#$i" --set xstate_bv=$((bv & xf)) \
			--resize $xs && mv $1.fit $1 || return 1
	done
}

# A 32-bit image: the holder's, fresh where 32-bit programs run, else the
# stored one.  Prints its path; sets $pid to its process's pid.
image32() {	# DIR
	mkdir -p $1
	if have ia32; then
		HOLDER_BIN=$AUX/holder32 start_holder plain $1 >&2 || return 1
		checkpoint_kill $1 $pid >&2 || return 1
	else
		gzip -dc "$ROOT/tests/images/holder32.img.gz" > $1/img || return 1
		fit_xstate $1/img $1/cpu >&2 || return 1
		pid=$(ckpt info $1/img | awk '/^TASK/ { sub("pid=", "", $4); print $4; exit }')
	fi
}

bad_images() {	# SHARD
	local h32=$AUX/holder32
	have ia32 || h32=$ROOT/tests/images/holder32.img.gz
	step "bad images, shard $1 of $BI_SHARDS"
	BI_SHARD=$1/$BI_SHARDS bash tests/bad_images.sh "$CKPT" "$AUX/holder" "$WORK/bad" "$h32"
}

# A 32-bit image on a kernel that cannot run 32-bit programs: restart
# fails before any process exists, with one line saying why; info still
# shows it.  The kernel says so where it cannot (its own verdict); where
# it can, the test build of ckpt acts as if it could not
# (CKPT_TEST_NO_IA32), and then, without, the same image restarts.
test_restart_no_ia32() {
	local d=$WORK/noia32 pid mode rc
	local want="pid [0-9]* is a 32-bit process, and this kernel cannot run 32-bit programs (execve of an i386 ELF: Exec format error)"
	step "a 32-bit image"
	image32 $d || return 1
	for mode in "" --pidns --detach; do
		step "restart $mode refused"
		if have ia32; then
			CKPT_TEST_NO_IA32=1 ckpt restart $mode $d/img > $d/rout 2> $d/err < /dev/null
		else
			ckpt restart $mode $d/img > $d/rout 2> $d/err < /dev/null
		fi
		rc=$?
		note "restart $mode: exit $rc: $(cat $d/err)"
		[ $rc = 125 ] && [ "$(wc -l < $d/err)" = 1 ] && [ ! -s $d/rout ] || return 1
		grep -q "^ckpt: .*${want/\[0-9\]\*/$pid}" $d/err || return 1
		sanitizer_clean $d/err || return 1
		! [[ "$(cat /proc/$pid/comm 2>/dev/null)" == holder* ]] ||
			{ echo "pid $pid exists"; return 1; }
	done
	step "info"
	ckpt info $d/img > $d/info || return 1
	grep -q '^IA32 ' $d/info || return 1
	have ia32 || return 0
	step "restart where it can run"
	( sleep 0.3; touch $d/go ) &
	ckpt restart $d/img < /dev/null > $d/rout 2>&1 || { cat $d/rout; return 1; }
	grep -q '^PASS' $d/out
}

# The stored image was written by an older ckpt: it must still read, on
# every machine (records only grow at their end; an FS record without
# the deleted-cwd fields is one such).
test_info_stored_image() {
	local d=$WORK/stored
	mkdir -p $d
	gzip -dc "$ROOT/tests/images/holder32.img.gz" > $d/img || return 1
	ckpt info $d/img > $d/out 2> $d/err || { cat $d/err; return 1; }
	grep -q "^FS .*cwd=/" $d/out && grep -q "^TAIL" $d/out
}

# A tid is unique in the whole image, whichever process's it is: one
# thread given its process's pid is refused by restart and by info (an
# id table now, where a scan of each task's threads was quadratic).
test_forged_tid_twice() {
	local d=$WORK/tids
	start_holder thread $d || return 1
	checkpoint_kill $d $pid || return 1
	/usr/bin/python3 "$ROOT/tests/forge.py" edit $d/img $d/img2 -r 'THREAD#1' \
		--set tid=$pid || return 1
	mv $d/img2 $d/img
	ckpt info $d/img > /dev/null 2> $d/ierr
	[ $? = 1 ] && grep -q "tid $pid twice in the image" $d/ierr || { cat $d/ierr; return 1; }
	refused_restart $d $pid "tid $pid twice in the image"
}
