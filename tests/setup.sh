#!/usr/bin/env bash
# setup.sh - what the test suite needs beyond gcc, make and python3: a
# compiler that builds 32-bit programs (Debian's gcc-multilib), installed
# only if `gcc -m32` cannot link one yet.
set -eu
cc=${CC:-cc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo 'int main(void) { return 0; }' > "$t/m.c"
if $cc -m32 -o "$t/m" "$t/m.c" 2> /dev/null; then
	exit 0
fi
echo "setup: installing gcc-multilib for the 32-bit tests"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq gcc-multilib > /dev/null
$cc -m32 -o "$t/m" "$t/m.c"
