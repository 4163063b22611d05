# install.sh - ckpt as its users get it: `make install` into a staging
# directory, a program built against the installed library with
# pkg-config, the man pages, --help and --version.
t install                  group pidns

# make in the repository, as a user would run it: not as a part of the
# `make test` that runs us (its jobserver is not ours)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory "$@"; }

# The release build (`make test` made it first) installed with DESTDIR
# and PREFIX, then used as installed: the CLI, the shared and the static
# library through pkg-config, the ckpt(3) example, ckpt_info() and
# CKPT_PIDNS; then uninstalled.
test_install() {
	local d=$WORK/inst root=$WORK/inst/root v f h pid rc flags left
	mkdir -p $d
	v=$(awk -F'"' '/define CKPT_VERSION_STRING/ { print $2 }' include/ckpt.h)
	note "version $v"

	# Installing only copies: with nothing left to build, it cannot race
	# the tests running beside it on build/.
	step "the release build is up to date"
	mk -q all || { echo "the release build is not up to date: run make (make test does)"; return 1; }
	step "make install"
	mk install DESTDIR=$root PREFIX=/usr > $d/install.log 2>&1 || { cat $d/install.log; return 1; }
	for f in bin/ckpt lib/libckpt.so.$v lib/libckpt.a include/ckpt.h lib/pkgconfig/ckpt.pc \
		 share/man/man1/ckpt.1 share/man/man3/ckpt.3; do
		[ -f $root/usr/$f ] || { echo "not installed: /usr/$f"; return 1; }
	done
	[ -x $root/usr/bin/ckpt ] || { echo "/usr/bin/ckpt is not executable"; return 1; }
	[ "$(readlink $root/usr/lib/libckpt.so.0)" = libckpt.so.$v ] &&
		[ "$(readlink $root/usr/lib/libckpt.so)" = libckpt.so.0 ] ||
		{ ls -l $root/usr/lib; return 1; }
	readelf -d $root/usr/lib/libckpt.so.$v | grep -q 'SONAME.*\[libckpt\.so\.0\]' ||
		{ echo "soname is not libckpt.so.0"; return 1; }
	# only ckpt.h's calls are exported
	nm -D --defined-only $root/usr/lib/libckpt.so.$v | awk '$2 == "T" { print $3 }' |
		sed 's/@.*//' | sort > $d/exports
	printf '%s\n' ckpt_cancel ckpt_checkpoint ckpt_checkpoint_opts ckpt_checkpoint_r ckpt_info ckpt_info_key ckpt_restart \
		ckpt_restart_opts ckpt_restart_r | diff - $d/exports || return 1

	step "--help and --version"
	for f in $root/usr/bin/ckpt $CKPT; do
		rc=0
		timeout 10 $f --version > $d/out 2> $d/err || rc=$?
		[ $rc = 0 ] && [ "$(cat $d/out)" = "ckpt $v" ] && [ ! -s $d/err ] ||
			{ echo "$f --version: exit $rc, out '$(cat $d/out)', err '$(cat $d/err)'"; return 1; }
		for h in --help -h "checkpoint --help" "restart --help" "info --help"; do
			rc=0
			timeout 10 $f $h > $d/out 2> $d/err || rc=$?
			[ $rc = 0 ] && grep -q '^usage: ckpt' $d/out && [ ! -s $d/err ] ||
				{ echo "$f $h: exit $rc, stderr '$(cat $d/err)'"; return 1; }
		done
		rc=0
		timeout 10 $f nosuchcommand > $d/out 2> $d/err || rc=$?
		[ $rc = 2 ] && [ ! -s $d/out ] && grep -q '^usage: ckpt' $d/err ||
			{ echo "$f nosuchcommand: exit $rc"; return 1; }
	done

	step "building against the installed library"
	pc() { PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@"; }
	[ "$(pc --modversion ckpt)" = "$v" ] || { echo "pkg-config --modversion: $(pc --modversion ckpt)"; return 1; }
	flags=$(pc --cflags --libs ckpt) || return 1
	note "pkg-config --cflags --libs ckpt: $flags"
	# the example of ckpt(3), as a reader would copy it out of the page
	awk '/^\.SH EXAMPLES/ { ex = 1 } ex && /^\.EX$/ { on = 1; next } on && /^\.EE$/ { exit } on' \
		$root/usr/share/man/man3/ckpt.3 |
		sed 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g; s/\\(dq/"/g' > $d/example.c
	grep -q 'ckpt_restart_r' $d/example.c || { echo "no example in ckpt.3"; return 1; }
	cc -std=gnu11 -Wall -Wextra -Werror -o $d/example $d/example.c $flags || return 1
	cc -std=gnu11 -Wall -Wextra -Werror -o $d/uselib tests/aux/uselib.c $flags || return 1
	# static: the archive, and what pkg-config --static adds for it
	# (its libraries, -lzstd where it was built with it, but -lckpt)
	cc -std=gnu11 -Wall -Wextra -Werror -o $d/uselib-static tests/aux/uselib.c \
		$(pc --cflags ckpt) $root/usr/lib/libckpt.a $(pc --static --libs-only-other ckpt) \
		$(pc --static --libs-only-l ckpt | sed 's/-lckpt\b//') || return 1
	export LD_LIBRARY_PATH=$root/usr/lib
	ldd $d/uselib | grep -q "libckpt.so.0 => $root/usr/lib/libckpt.so.0" ||
		{ ldd $d/uselib; return 1; }
	! ldd $d/uselib-static | grep -q libckpt || { echo "uselib-static needs libckpt.so"; return 1; }
	[ "$($d/uselib version)" = "$v" ] || return 1

	step "ckpt_info() on an image the installed ckpt made"
	start_holder plain $d/a || return 1
	timeout 60 $root/usr/bin/ckpt checkpoint -o $d/a.img $pid || return 1
	touch $d/a/go
	wait $pid || { cat $d/a/out; return 1; }
	timeout 30 $root/usr/bin/ckpt info $d/a.img > $d/cli.info || return 1
	for f in $d/uselib $d/uselib-static; do
		timeout 30 $f info $d/a.img > $d/lib.info || return 1
		cmp $d/cli.info $d/lib.info || return 1
	done
	timeout 30 $d/uselib info --json $d/a.img | $PYTHON -c '
import json, sys
d = json.load(sys.stdin)
assert d["complete"] and d["records"][0]["type"] == "HEAD", d["complete"]' || return 1
	head -c 4000 $d/a.img > $d/short.img
	rc=0
	timeout 30 $d/uselib info $d/short.img > $d/out 2> $d/err || rc=$?
	[ $rc = 1 ] && grep -q "^info: -$(install_errno ENODATA)\$" $d/err && [ ! -s $d/out ] ||
		{ echo "info of a truncated image: exit $rc"; cat $d/err; return 1; }

	step "the ckpt(3) example moves a process"
	start_holder plain $d/b || return 1
	disown $pid	# (reaped all the same, but its death by SIGKILL not said)
	( sleep 1; touch $d/b/go ) &
	rc=0
	timeout 60 $d/example $pid $d/b.img || rc=$?
	wait
	[ $rc = 0 ] && grep -q '^PASS' $d/b/out || { echo "example: exit $rc"; cat $d/b/out; return 1; }

	step "CKPT_PIDNS through the library"
	rm $d/b/go
	: > $d/b/out
	( sleep 1; touch $d/b/go ) &
	rc=0
	timeout 60 $d/uselib pidns $d/b.img > $d/pidns.out || rc=$?
	wait
	cat $d/pidns.out
	[ $rc = 0 ] && grep -q '^PASS' $d/b/out || { echo "uselib pidns: exit $rc"; cat $d/b/out; return 1; }

	step "the man pages"
	if command -v man > /dev/null; then
		for f in man1/ckpt.1 man3/ckpt.3; do
			MANWIDTH=80 man --warnings -l $root/usr/share/man/$f > $d/man.out 2> $d/man.err ||
				{ echo "man $f failed"; cat $d/man.err; return 1; }
			[ ! -s $d/man.err ] || { echo "man $f:"; cat $d/man.err; return 1; }
			grep -q "ckpt $v" $d/man.out && ! grep -q @VERSION@ $d/man.out ||
				{ echo "man $f: no version $v"; return 1; }
		done
	else
		note "no man here: the pages are not rendered"
	fi

	step "make uninstall"
	mk uninstall DESTDIR=$root PREFIX=/usr > $d/install.log 2>&1 || { cat $d/install.log; return 1; }
	left=$(find $root ! -type d)
	[ -z "$left" ] || { echo "left by uninstall: $left"; return 1; }
}

install_errno() {	# NAME: its number
	$PYTHON -c "import errno; print(errno.$1)"
}
