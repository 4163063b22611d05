#!/bin/bash
# tests/arch/run.sh ARCH [PROG...]: the state tests on another architecture
# (s390x, ppc64le), in a full system emulator.
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
CC="$TC/bin/$TRIPLE-gcc-12"

die() { echo "arch/$A: $*" >&2; exit 2; }

fetch() {
	[ -e "$W/.fetched" ] && return 0
	mkdir -p "$W/deb" "$W/root"
	command -v $QEMU > /dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $QPKG ||
		die "cannot install $QPKG"
	if ! dpkg --print-foreign-architectures | grep -qx $DEB; then
		dpkg --add-architecture $DEB && apt-get update -q || die "cannot add $DEB to apt"
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

build() {
	local b=$W/build
	rm -rf "$b" && mkdir -p "$b/progs" || return 1
	make -s build/gen/criu/rpc.pb-c.c || return 1
	# shellcheck disable=SC2046
	$CC -static -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
		-Iinclude -Ibuild/gen/criu -isystem "$TC/include" \
		-o "$b/ckpt" $(ls src/*.c src/kinds/*.c src/files/*.c src/criu/*.c src/arch/*.c src/arch/$A/*.c) \
		build/gen/criu/rpc.pb-c.c -L"$TC/lib/$TRIPLE" -lprotobuf-c || return 1
	# and this architecture's own (tests/arch/progs/NAME_ARCH.c)
	for p in $PROGS $(ls tests/arch/progs/*_"$A".c 2> /dev/null); do
		[ "${p%.c}" = "$p" ] && p=tests/progs/$p.c
		$CC -static -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -Itests/progs \
			-o "$b/progs/$(basename "${p%.c}")" "$p" || return 1
	done
}

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
	# sock_diag of unix, netlink, packet and TCP sockets: modules there
	mkdir -p "$r/modules" &&
		find "$W"/root/lib/modules -name unix_diag.ko -o -name netlink_diag.ko \
			-o -name af_packet_diag.ko -o -name inet_diag.ko -o -name tcp_diag.ko |
		xargs -r cp -t "$r/modules" || return 1
	cp "$W/build/ckpt" "$r/bin/ckpt" && cp "$W"/build/progs/* "$r/progs/" &&
		cp tests/arch/init.sh "$r/init" && chmod 755 "$r/init" || return 1
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.gz"
}

boot() {
	local k
	k=$(ls "$W"/root/$KGLOB 2> /dev/null | head -1)
	[ -n "$k" ] || die "no kernel in $W/root/boot"
	timeout -k 10 "$BOOT_TIMEOUT" $QEMU $QARGS -m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$k" -initrd "$W/initramfs.gz" \
		-append "console=$CONSOLE panic=-1 quiet loglevel=3 rdinit=/init" \
		< /dev/null > "$W/console.log" 2>&1
	echo "qemu exit status $?" >> "$W/console.log"
}

fetch
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
[[ $last == *" 0 failed" ]]
