#!/usr/bin/env bash
# caps.sh - what this machine can do, found once before the suite runs.
# usage: bash tests/caps.sh OUTFILE
# Writes one line per capability to OUTFILE: "NAME 1" or "NAME 0 REASON";
# tests/run.sh skips a test that needs a missing one, with that reason.
#   root        we are root (ckpt needs CAP_SYS_ADMIN: ptrace, set_tid)
#   ia32        the kernel executes 32-bit programs
#   iptables    iptables works (the network lock of TCP connections)
#   nft         nft works (a net namespace's own nftables tables)
#   tcp_repair  TCP_REPAIR (CAP_NET_ADMIN)
#   userfaultfd the userfaultfd system call
#   pagemap_scan the PAGEMAP_SCAN ioctl of /proc/PID/pagemap (Linux 6.7)
#   cgroup      a cgroup hierarchy we may make a group in
#   userns      unprivileged user namespaces
#   gpu         an NVIDIA GPU (/dev/nvidiactl) and nvcc
#   deadline    a task may take SCHED_DEADLINE (the kernel's admission)
# CKPT_TEST_NO_IA32=1 says "no ia32" whatever the kernel: with the test
# build of ckpt, which then acts the same, it stands in for a kernel that
# cannot run 32-bit code (tests/README.md).
set -u
cd "$(dirname "$0")/.."
OUT=$1
PYTHON=/usr/bin/python3
[ -x $PYTHON ] || PYTHON=python3
export PATH=$PATH:/usr/sbin:/sbin
: > "$OUT"

cap() {	# NAME OK [REASON]
	if [ "$2" = 1 ]; then echo "$1 1"; else echo "$1 0 $3"; fi >> "$OUT"
}

if [ "$(id -u)" = 0 ]; then cap root 1; else cap root 0 "not root"; fi

if [ -n "${CKPT_TEST_NO_IA32:-}" ]; then
	cap ia32 0 "no 32-bit programs (simulated: CKPT_TEST_NO_IA32=1)"
else
	# (execve itself: a shell or execvp would run an ELF it cannot
	# execute as a script)
	why=$($PYTHON -c '
import subprocess, sys
try:
    rc = subprocess.run([sys.argv[1]], timeout=10).returncode
    print("" if rc == 0 else "true32 exited %d" % rc)
except OSError as e:
    print("execve of true32: %s" % e.strerror)
except subprocess.TimeoutExpired:
    print("true32 did not exit")' build/test/aux/true32 2>&1)
	if [ -z "$why" ]; then
		cap ia32 1
	else
		cap ia32 0 "this kernel cannot run 32-bit programs ($why)"
	fi
fi

if command -v iptables > /dev/null && iptables -w -S INPUT > /dev/null 2>&1; then
	cap iptables 1
else
	cap iptables 0 "no working iptables"
fi
if command -v nft > /dev/null && nft list tables > /dev/null 2>&1; then
	cap nft 1
else
	cap nft 0 "no working nft"
fi

$PYTHON - "$OUT" <<'PY'
import ctypes, errno, os, socket, sys
out = open(sys.argv[1], "a")
def cap(name, ok, why=""):
    out.write("%s 1\n" % name if ok else "%s 0 %s\n" % (name, why))
libc = ctypes.CDLL(None, use_errno=True)
try:
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, 19, 1)         # TCP_REPAIR
    cap("tcp_repair", True)
except OSError as e:
    cap("tcp_repair", False, "no TCP_REPAIR (%s)" % e.strerror)
fd = libc.syscall(323, os.O_CLOEXEC)                # userfaultfd
if fd >= 0:
    os.close(fd)
    cap("userfaultfd", True)
else:
    cap("userfaultfd", False, "no userfaultfd (%s)" % os.strerror(ctypes.get_errno()))
# PAGEMAP_SCAN = _IOWR('f', 16, struct pm_scan_arg): a zeroed argument is
# EINVAL where the ioctl exists, ENOTTY where it does not
fd = os.open("/proc/self/pagemap", os.O_RDONLY)
arg = ctypes.create_string_buffer(96)
r = libc.ioctl(fd, ctypes.c_ulong(0xc0606610), arg)
e = ctypes.get_errno()
os.close(fd)
if r >= 0 or e != errno.ENOTTY:
    cap("pagemap_scan", True)
else:
    cap("pagemap_scan", False, "no PAGEMAP_SCAN ioctl (Linux < 6.7)")
PY

cg=0
for d in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/freezer; do
	[ -d "$d" ] || continue
	if mkdir "$d/ckpt-caps.$$" 2> /dev/null; then
		rmdir "$d/ckpt-caps.$$"
		cg=1
		break
	fi
done
cap cgroup $cg "no writable cgroup hierarchy"

# (struct sched_attr, SCHED_DEADLINE 10 ms of every 100; x86-64's
# sched_setattr; the python process itself takes it, then ends)
why=$($PYTHON -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
a = ctypes.create_string_buffer(struct.pack("=IIQiIQQQ", 48, 6, 0, 0, 0,
                                            10**7, 10**8, 10**8))
print("ok" if libc.syscall(314, 0, a, 0) == 0 else os.strerror(ctypes.get_errno()))
' 2>&1)
if [ "$why" = ok ]; then cap deadline 1; else cap deadline 0 "SCHED_DEADLINE refused: $why"; fi

if [ "$(id -u)" != 0 ] && unshare --user true 2> /dev/null; then
	cap userns 1
elif [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user true 2> /dev/null; then
	cap userns 1
else
	cap userns 0 "no unprivileged user namespaces"
fi

if [ -e /dev/nvidiactl ] && command -v nvcc > /dev/null; then
	cap gpu 1
else
	cap gpu 0 "no NVIDIA GPU"
fi
