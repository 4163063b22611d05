#!/usr/bin/env bash
# setup.sh - what the test suite needs beyond gcc, make and python3, each
# installed from Debian's packages only if missing (run by `make test`):
# - gcc-multilib, if `gcc -m32` cannot link: the 32-bit test programs;
# - iptables: the network lock of TCP connections (src/files/netlock.c;
#   tcp_peer_outside, tcp_checkpoint_live and tcp_netlock check its rules);
# - nftables: nft, which saves and restores a net namespace's own
#   nftables tables (netns_nft);
# - pkg-config: the install test builds a program against the installed
#   library with it;
# - clang and its libFuzzer runtime: the fuzz test (fuzz/image_fuzz.c);
# - runc and busybox-static: a container run by runc, from a busybox
#   rootfs (container_runc, tests/cases/criu.sh);
# - podman and containerd (without their recommends): each driving
#   ckpt as its criu (criu_podman, criu_containerd);
# - protobuf-c-compiler and libprotobuf-c-dev: protoc-c and libprotobuf-c,
#   which build the CRIU drop-in's RPC (src/criu/rpc.proto; `make` says
#   so if they are missing: run this first on a bare machine);
# - libzstd-dev: --compress (the Makefile builds without it if missing,
#   and then compress.sh fails saying so: rebuild after this).
set -eu
cc=${CC:-cc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
need=() norec=()
# (this machine's own: a cross build may have put the same library of
# another architecture beside it, and then the bare name is ambiguous)
ARCH=$(dpkg --print-architecture)
# `setup.sh build`: only what building ckpt needs (make's own rule for
# the drop-in's RPC code calls it so, for `make demo` on a bare machine)
if [ "${1:-}" = build ]; then
	command -v protoc-c > /dev/null || need+=(protobuf-c-compiler)
	dpkg -s "libprotobuf-c-dev:$ARCH" > /dev/null 2>&1 || need+=("libprotobuf-c-dev:$ARCH")
	dpkg -s "libzstd-dev:$ARCH" > /dev/null 2>&1 || need+=("libzstd-dev:$ARCH")
	[ ${#need[@]} = 0 ] && exit 0
	echo "setup: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq "${need[@]}" > /dev/null
	exit
fi
echo 'int main(void) { return 0; }' > "$t/m.c"
$cc -m32 -o "$t/m" "$t/m.c" 2> /dev/null || need+=(gcc-multilib)
PATH=$PATH:/usr/sbin:/sbin command -v iptables > /dev/null || need+=(iptables)
PATH=$PATH:/usr/sbin:/sbin command -v nft > /dev/null || need+=(nftables)
command -v pkg-config > /dev/null || need+=(pkg-config)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$t/f.c"
clang -fsanitize=fuzzer,address -o "$t/f" "$t/f.c" 2> /dev/null || need+=(clang libclang-rt-dev)
command -v protoc-c > /dev/null || need+=(protobuf-c-compiler)
dpkg -s "libprotobuf-c-dev:$ARCH" > /dev/null 2>&1 || need+=("libprotobuf-c-dev:$ARCH")
dpkg -s "libzstd-dev:$ARCH" > /dev/null 2>&1 || need+=("libzstd-dev:$ARCH")
# (runc without its recommends: Debian's criu is none of ours)
PATH=$PATH:/usr/sbin:/sbin command -v runc > /dev/null || norec+=(runc)
dpkg -s "busybox-static:$ARCH" > /dev/null 2>&1 || norec+=("busybox-static:$ARCH")
command -v podman > /dev/null || norec+=(podman)
command -v containerd > /dev/null || norec+=(containerd)
[ ${#need[@]} = 0 ] && [ ${#norec[@]} = 0 ] && exit 0
echo "setup: installing ${need[*]} ${norec[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ ${#need[@]} = 0 ] || apt-get install -y -qq "${need[@]}" > /dev/null
[ ${#norec[@]} = 0 ] || apt-get install -y -qq --no-install-recommends "${norec[@]}" > /dev/null
$cc -m32 -o "$t/m" "$t/m.c"
