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
