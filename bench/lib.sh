# lib.sh - what the benchmarks share.  Sourced; expects $RES set before
# rec_* is used.

say() { printf '%s\n' "$*" >&2; }

# wait up to $2 seconds (default 10) for pid $1 to leave /proc entirely
# (a detached restored process is init's child: init reaps it, slowly)
wait_gone() {
	local pid=$1 deadline=$((EPOCHSECONDS + ${2:-10}))
	while [ -e /proc/"$pid" ]; do
		[ "$EPOCHSECONDS" -le "$deadline" ] || return 1
		sleep 0.02
	done
}

# one result line: a name and microseconds (as seconds), or a raw value
rec_us() { printf '%s %d.%06d\n' "$1" $(($2 / 1000000)) $(($2 % 1000000)) >>"$RES"; }
rec_s() { printf '%s %s\n' "$1" "$2" >>"$RES"; }

now_us() { local t=$EPOCHREALTIME; echo $((${t/./})); }

wait_until() {	# SECONDS COMMAND...: poll until COMMAND succeeds
	local end=$((EPOCHSECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$EPOCHSECONDS" -le "$end" ] || return 1
		sleep 0.02
	done
}

# pid $1 and its descendants
tree_pids() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
	{ kids[$2] = kids[$2] " " $1 }
	END { todo[1] = root; n = 1
		for (i = 1; i <= n; i++) { print todo[i]; m = split(kids[todo[i]], k, " ")
			for (j = 1; j <= m; j++) todo[++n] = k[j] } }'
}
