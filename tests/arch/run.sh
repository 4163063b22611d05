#!/bin/bash
# tests/arch/run.sh ARCH [PROG...|all]: the state tests on another
# architecture (s390x, ppc64le), in a full system emulator.
#
# Everything it needs is fetched into build/arch/ (git-ignored) the first
# time: Debian 12's kernel and busybox-static for ARCH, its cross compiler
# (unpacked there, not installed: Debian's cross compilers conflict with
# gcc-multilib, which the x86 tests need) and qemu (installed).  Then ckpt
# and the test programs are cross-built statically, put in an initramfs
# with busybox and init.sh, and the guest is booted; init.sh runs each
# state test (the protocol of tests/README.md) and ends with the line
# `N passed, N failed`, which this script prints with every result.
# Exit status: 0 if every test passed.
#
# KERNEL=backports boots Debian 12's backported kernel (6.12) instead of
# its own (6.1), fetched with apt lists of its own under build/arch/, the
# machine's apt sources untouched: a test of what 6.1 lacks (eventfd's
# EFD_SEMAPHORE in fdinfo, Linux 6.4) is skipped on 6.1, and runs there.
#
# KILLPROGS="sleepers threads signals mem_anon seccomp_kill" (the default;
# empty: none):
# a test build of ckpt too, killed at test points spread over a
# checkpoint of each of these, which must run on unharmed (the guard
# frame; tests/killpoints.sh does the same on x86).
#
# VERBOSE=1: ckpt -v in the guest, and every test's whole output shown
# (a failure shows its last lines only); each step's limit is 60 s, not
# 300.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
A=${1:?usage: tests/arch/run.sh s390x|ppc64le [PROG...]}
shift
# By default, state programs that are not x86 assembly and need nothing
# the guest lacks (fileflags: O_DIRECT, which tmpfs has from Linux 6.6).
# eventfd is refused on Debian 12's kernel (6.1), whose eventfd fdinfo
# does not say EFD_SEMAPHORE (6.4).
PROGS=${*:-mem_anon signals sleepers pipe_shared files tree threads cow sysrestart robust_list timers eventfd}
# `all`: every state program but those of x86 only (x86 assembly: amx,
# regs, task; a 32-bit child: mixed_tree)
if [ "$PROGS" = all ]; then
	PROGS=$(ls tests/progs/*.c | sed 's|.*/||; s|\.c$||' | grep -vxE 'amx|regs|task|mixed_tree' | tr '\n' ' ')
fi
# Kill points (init.sh): ckpt killed at points spread over a checkpoint
# of each of these (of PROGS), which must run on unharmed; KILLPROGS=
# (empty) runs none.
KILLPROGS=${KILLPROGS-sleepers threads signals mem_anon seccomp_kill}
for k in $KILLPROGS; do
	case " $PROGS " in *" $k "*) ;; *) PROGS="$PROGS $k" ;; esac
done
BOOT_TIMEOUT=${BOOT_TIMEOUT:-1500}

case $A in
s390x)
	DEB=s390x TRIPLE=s390x-linux-gnu KIMG=linux-image-s390x
	QEMU=qemu-system-s390x QPKG=qemu-system-misc
	QARGS="-M s390-ccw-virtio -cpu max" CONSOLE=ttysclp0 KGLOB='boot/vmlinuz-*' ;;
ppc64le)
	DEB=ppc64el TRIPLE=powerpc64le-linux-gnu KIMG=linux-image-powerpc64le
	QEMU=qemu-system-ppc64 QPKG=qemu-system-ppc
	QARGS="-M pseries -cpu power9 -vga none" CONSOLE=hvc0 KGLOB='boot/vmlinux-*' ;;
*)
	echo "unknown architecture $A (s390x, ppc64le)" >&2; exit 2 ;;
esac
[ -d "src/arch/$A" ] || { echo "arch/$A: no port yet (src/arch/$A/)"; echo "0 passed, 1 failed"; exit 1; }
W=$ROOT/build/arch/$A
TC=$W/root/usr
KERNEL=${KERNEL:-}
case $KERNEL in
'') KR=$W/root ;;	# the kernel came with the toolchain
backports) KR=$W/kernel-backports ;;
*) echo "KERNEL=$KERNEL: only 'backports' (or nothing: Debian 12's own)" >&2; exit 2 ;;
esac
CC="$TC/bin/$TRIPLE-gcc-12"

die() { echo "arch/$A: $*" >&2; exit 2; }

fetch() {
	[ -e "$W/.fetched" ] && return 0
	mkdir -p "$W/deb" "$W/root"
	command -v $QEMU > /dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $QPKG ||
		die "cannot install $QPKG"
	if ! dpkg --print-foreign-architectures | grep -qx $DEB; then
		dpkg --add-architecture $DEB || die "cannot add $DEB to apt"
		# an index that fails (a mirror mid-sync) may not be one we need
		apt-get update -q || echo "arch/$A: apt-get update had errors; going on" >&2
	fi
	local kpkg
	kpkg=$(apt-cache depends $KIMG:$DEB | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$kpkg" ] || die "no kernel package behind $KIMG:$DEB"
	(cd "$W/deb" && apt-get download -q "$kpkg" busybox-static:$DEB \
		gcc-12-$TRIPLE cpp-12-$TRIPLE binutils-$TRIPLE libgcc-12-dev-$DEB-cross \
		libc6-dev-$DEB-cross libc6-$DEB-cross linux-libc-dev-$DEB-cross \
		libprotobuf-c-dev:$DEB libprotobuf-c1:$DEB) || die "apt-get download failed"
	for f in "$W"/deb/*.deb; do
		dpkg-deb -x "$f" "$W/root" || die "unpacking $f"
	done
	touch "$W/.fetched"
}

# Debian 12's backported kernel for $DEB, from bookworm-backports
fetch_backports() {
	[ -z "$KERNEL" ] || [ -e "$KR/.fetched" ] && return 0
	local apt=$W/apt-backports kpkg
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$KR" || return 1
	echo "deb http://deb.debian.org/debian bookworm-backports main" > "$apt/sources.list"
	set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
	apt-get "$@" update -q > /dev/null || die "cannot read bookworm-backports"
	kpkg=$(apt-cache "$@" depends $KIMG:$DEB | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$kpkg" ] || die "no kernel package behind $KIMG:$DEB in bookworm-backports"
	(cd "$apt" && rm -f ./*.deb && apt-get "$@" download -q "$kpkg") || die "apt-get download $kpkg failed"
	dpkg-deb -x "$apt"/*.deb "$KR" || die "unpacking $kpkg"
	touch "$KR/.fetched"
}

build() (
	local b=$W/build
	# the cross binutils' own libraries, unpacked beside them
	export LD_LIBRARY_PATH=$W/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	rm -rf "$b" && mkdir -p "$b/progs" || return 1
	make -s build/gen/criu/rpc.pb-c.c || return 1
	# shellcheck disable=SC2046
	$CC -static -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
		-Iinclude -Ibuild/gen/criu -isystem "$TC/include" \
		-o "$b/ckpt" $(ls src/*.c src/kinds/*.c src/files/*.c src/criu/*.c src/arch/*.c src/arch/$A/*.c) \
		build/gen/criu/rpc.pb-c.c -L"$TC/lib/$TRIPLE" -lprotobuf-c || return 1
	# the test build, for the kill points (init.sh): ckpt dies at a
	# test point it is told
	if [ -n "$KILLPROGS" ]; then
		# shellcheck disable=SC2046
		$CC -static -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
			-DCKPT_TEST_HOOKS -Iinclude -Ibuild/gen/criu -isystem "$TC/include" \
			-o "$b/ckpt-hooks" $(ls src/*.c src/kinds/*.c src/files/*.c src/criu/*.c src/arch/*.c src/arch/$A/*.c) \
			build/gen/criu/rpc.pb-c.c -L"$TC/lib/$TRIPLE" -lprotobuf-c || return 1
	fi
	# and this architecture's own (tests/arch/progs/NAME_ARCH.c)
	local flags
	for p in $PROGS $(ls tests/arch/progs/*_"$A".c 2> /dev/null); do
		[ "${p%.c}" = "$p" ] && p=tests/progs/$p.c
		# NAME.cflags: a program built otherwise (compat31_s390x: -m31)
		flags="-std=gnu11 -pthread -Itests/progs"
		[ ! -f "${p%.c}.cflags" ] || flags=$(cat "${p%.c}.cflags")
		# shellcheck disable=SC2086
		$CC -static -O1 -g -Wall -Wextra -Werror $flags \
			-o "$b/progs/$(basename "${p%.c}")" "$p" || return 1
		# NAME.flags: the checkpoint options it needs (inet's
		# --tcp-established); NAME.refuse: the line its checkpoint
		# must be refused with (init.sh's refusal test)
		for f in flags refuse; do
			[ ! -f "${p%.c}.$f" ] || cp "${p%.c}.$f" "$b/progs/" || return 1
		done
	done
)

initramfs() {
	local r=$W/initramfs
	command -v cpio > /dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cpio > /dev/null ||
		die "cannot install cpio"
	rm -rf "$r" && mkdir -p "$r"/{bin,sbin,proc,sys,dev,tmp,progs} || return 1
	cp "$W/root/bin/busybox" "$r/bin/busybox" || return 1
	for c in sh mount mkdir cat grep sleep touch kill rm ls poweroff wc seq \
		 head tail cut sed mktemp timeout dmesg uname ps insmod ifconfig; do
		ln -sf busybox "$r/bin/$c"
	done
	# sock_diag of unix, netlink, packet, TCP, UDP and raw sockets: modules there
	# (xz-compressed in the backported kernel: busybox insmod takes them plain)
	mkdir -p "$r/modules" || return 1
	local m
	for m in unix_diag netlink_diag af_packet_diag inet_diag tcp_diag udp_diag raw_diag; do
		find "$KR"/lib/modules -name "$m.ko" -o -name "$m.ko.xz" | head -1
	done | while read -r m; do
		case $m in
		*.xz) xz -dc "$m" > "$r/modules/$(basename "${m%.xz}")" ;;
		*) cp "$m" "$r/modules/" ;;
		esac || exit 1
	done || return 1
	if [ -n "$KILLPROGS" ]; then
		cp "$W/build/ckpt-hooks" "$r/bin/ckpt-hooks" && echo "$KILLPROGS" > "$r/killprogs" ||
			return 1
	fi
	cp "$W/build/ckpt" "$r/bin/ckpt" && cp "$W"/build/progs/* "$r/progs/" &&
		cp tests/arch/init.sh "$r/init" && chmod 755 "$r/init" || return 1
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.gz"
}

boot() {
	local k
	k=$(ls "$KR"/$KGLOB 2> /dev/null | head -1)
	[ -n "$k" ] || die "no kernel in $KR/boot"
	timeout -k 10 "$BOOT_TIMEOUT" $QEMU $QARGS -m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$k" -initrd "$W/initramfs.gz" \
		-append "console=$CONSOLE panic=-1 quiet loglevel=3 rdinit=/init${VERBOSE:+ ckpt_verbose}" \
		< /dev/null > "$W/console.log" 2>&1
	echo "qemu exit status $?" >> "$W/console.log"
}

fetch
fetch_backports
build || die "cross build failed"
initramfs || die "initramfs failed"
boot
# the guest's lines: its results, their output on failure, the count
tr -d '\r' < "$W/console.log" | sed -n 's/.*\(=== ckpt arch tests\)/\1/; /=== ckpt arch tests/,$p'
last=$(tr -d '\r' < "$W/console.log" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
if [ -z "$last" ]; then
	echo "arch/$A: the guest gave no result; its console (last lines):"
	tr -d '\r' < "$W/console.log" | tail -30
	echo "0 passed, 1 failed"
	exit 1
fi
[[ $last =~ ,\ 0\ failed ]]
