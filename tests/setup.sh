#!/usr/bin/env bash
# setup.sh - what the test suite needs beyond gcc, make and python3,
# each installed only if missing (run by `make test` before tests/run.sh):
# iptables (Debian's package), for the network lock of TCP connections
# (src/files/netlock.c; tests tcp_peer_outside, tcp_checkpoint_live and
# tcp_netlock check its rules).
set -eu
if ! PATH=$PATH:/usr/sbin:/sbin command -v iptables > /dev/null; then
	echo "setup: installing iptables for the TCP network lock"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq iptables > /dev/null
fi
