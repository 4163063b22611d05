# killlib.sh - what the kill tests (tests/kill*.sh) share; sourced.

# A descriptor inherited from our caller would be in the target's fd
# table, and ckpt refuses unknown kinds of files.
for fd in /proc/$BASHPID/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

wait_for() {	# FILE PATTERN: within 30 s (a loaded machine, ASan builds)
	local i
	for ((i = 0; i < 3000; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

untraced() {	# PID: its tracer (ckpt, now dead) has let go of every thread
	local i
	for ((i = 0; i < 500; i++)); do
		! grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$1/task/*/status 2>/dev/null &&
			return 0
		sleep 0.01
	done
	return 1
}

gone() {	# PID: /proc/PID is gone, within 3 s
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e /proc/$1 ] || return 0
		sleep 0.01
	done
	return 1
}

# [--quick] ARGS... run under a subreaper that waits for every process
# left behind (init would take a second or two here); exits with the
# first's status.  --quick: at once if that is 0 (a restart that did not
# fail leaves its processes running; the caller kills them).
reaped() {
	local quick=0
	[ "$1" = --quick ] && { quick=1; shift; }
	timeout -k 1 90 /usr/bin/python3 - $quick "$@" <<'PY'
import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1)		# PR_SET_CHILD_SUBREAPER
quick = sys.argv[1] == "1"
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
st = None
while True:
    try:
        p, s = os.wait()
    except ChildProcessError:
        break
    if p == pid:
        st = s
        if quick and s == 0:
            break
sys.exit(os.waitstatus_to_exitcode(st) % 256 if st is not None else 1)
PY
}
