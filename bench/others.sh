# others.sh - other checkpoint/restore tools on the benches' own workloads,
# so that bench.sh and tree.sh can put them next to ckpt in the same run.
# Sourced after lib.sh; expects $WORK and $PIDS.  A missing or broken tool
# never fails a bench: it becomes "not available: <reason>" in the report.
#
# CRIU:  CRIU=PATH picks the binary (default: criu on PATH); CRIU=none skips it.
# DMTCP: DMTCP=DIR, the bin directory of a DMTCP build (default: the one
#        of dmtcp_launch on PATH); DMTCP=none skips it.  It checkpoints
#        only programs started under dmtcp_launch, with a coordinator:
#        dmtcp_start runs the workload so, each run its own coordinator.

CRIU=${CRIU:-criu}
CRIU_STATE=""	# "": not tried yet; ok; na (CRIU_WHY says why)
CRIU_WHY=""

# why criu failed: the first Error line that is not its iptables probe (a
# missing iptables binary is only a warning to criu) and the last one, what
# it gave up on; from its log, else its output; else its last line
criu_reason() {	# LOG
	cat -- "$1" "$WORK/criu.out" 2>/dev/null | awk '
	{ sub(/^\([0-9. ]*\) */, ""); if (NF) any = $0 }
	/Error/ && !/util\.c.*exited, status/ && !/RLIMIT_NOFILE/ { if (f == "") f = $0; l = $0 }
	END {
		if (f == "") print any == "" ? "(it printed nothing)" : any
		else if (f == l) print f
		else print f " ... " l
	}'
}

criu_version() { "$CRIU" --version 2>/dev/null | awk '/^Version/ {print $2; exit}'; }
criu_desc() { echo "criu $(criu_version) ($(command -v "$CRIU"))"; }

# is criu there at all?  (whether it works is found out on the workload)
criu_probe() {
	[ -z "$CRIU_STATE" ] || return 0
	if [ "$CRIU" = none ]; then
		CRIU_STATE=na CRIU_WHY="skipped (CRIU=none)"
	elif ! command -v "$CRIU" >/dev/null; then
		CRIU_STATE=na CRIU_WHY="no criu binary ('$CRIU' not on PATH; Debian: apt-get install criu)"
	fi
}
criu_usable() { criu_probe; [ "$CRIU_STATE" != na ]; }

# criu failed at STEP (exit RC, log LOG): it is out for the rest of the run
criu_out() {	# STEP RC LOG
	CRIU_STATE=na
	CRIU_WHY="criu $(criu_version) $1 failed (exit $2): $(criu_reason "$3")"
	say "criu: not available from here on: $CRIU_WHY"
}

# criu dump of the tree of pid $2 into directory $1 (created empty).  Like
# ckpt checkpoint --kill: the tree is killed once dumped.  With $3 = fsync,
# the image files are fsync'ed too (ckpt fsyncs its image; criu does not).
# Sets OTHER_RC; the log is $WORK/criu-dump.log.
criu_dump() {	# DIR PID [fsync]
	rm -rf -- "$1"
	mkdir -p -- "$1"
	OTHER_RC=0
	{ "$CRIU" dump -t "$2" -D "$1" --shell-job -o "$WORK/criu-dump.log" \
		>"$WORK/criu.out" 2>&1; } 2>/dev/null || OTHER_RC=$?
	[ "$OTHER_RC" != 0 ] || [ "${3:-}" != fsync ] || sync -- "$1"/* "$1" || OTHER_RC=$?
}

# criu restore -d from directory $1; the root pid goes to $WORK/criu.pid.
# Sets OTHER_RC and OTHER_PID; the log is $WORK/criu-restore.log.
criu_restore() {	# DIR
	rm -f "$WORK/criu.pid"
	OTHER_RC=0 OTHER_PID=""
	"$CRIU" restore -D "$1" --shell-job -d --pidfile "$WORK/criu.pid" \
		-o "$WORK/criu-restore.log" >"$WORK/criu.out" 2>&1 || OTHER_RC=$?
	# (criu writes the pid without a newline: read(1) would say it failed)
	[ "$OTHER_RC" != 0 ] || OTHER_PID=$(cat "$WORK/criu.pid") || OTHER_RC=1
	[ -n "$OTHER_PID" ] || OTHER_RC=1
}

# bytes of a criu image directory
criu_size() { du -sb -- "$1" | awk '{print $1}'; }

# DMTCP's tools, or why not
DMTCP=${DMTCP:-$(dirname "$(command -v dmtcp_launch 2>/dev/null || echo /none/x)")}
DMTCP_STATE=""	# "": not tried yet; ok; na (DMTCP_WHY says why)
DMTCP_WHY=""
DMTCP_PORT=""	# the coordinator of the workload now under DMTCP

dmtcp_probe() {
	[ -z "$DMTCP_STATE" ] || return 0
	if [ "$DMTCP" = none ]; then
		DMTCP_STATE=na DMTCP_WHY="skipped (DMTCP=none)"
	elif [ ! -x "$DMTCP/dmtcp_launch" ] || [ ! -x "$DMTCP/dmtcp_restart" ]; then
		DMTCP_STATE=na DMTCP_WHY="no dmtcp_launch (Debian 12 has no dmtcp package; DMTCP=DIR of a build)"
	fi
}
dmtcp_usable() { dmtcp_probe; [ "$DMTCP_STATE" != na ]; }
dmtcp_version() { "$DMTCP/dmtcp_launch" --version 2>/dev/null | awk 'NR == 1 {print $NF; exit}'; }
dmtcp_desc() { echo "dmtcp $(dmtcp_version) ($DMTCP)"; }

# a port no one listens on, for a coordinator of our own
dmtcp_free_port() {
	local p
	for ((p = 7780 + RANDOM % 1000; p < 9000; p++)); do
		ss -ltn "sport = :$p" 2>/dev/null | grep -q LISTEN || { echo $p; return; }
	done
	echo 0
}

# DMTCP failed at STEP (exit RC, log LOG): out for the rest of the run
dmtcp_out() {	# STEP RC LOG
	DMTCP_STATE=na
	DMTCP_WHY="dmtcp $(dmtcp_version) $1 failed (exit $2): $(grep -v '^ *$' "$3" 2>/dev/null | tail -1)"
	say "dmtcp: not available from here on: $DMTCP_WHY"
}

# the workload command $@ under dmtcp_launch, a coordinator of its own,
# images into $1 (uncompressed: DMTCP gzips them by default, which would
# time gzip); sets OTHER_PID (dmtcp_launch execs the program: its pid)
dmtcp_start() {	# DIR CMD...
	local dir=$1
	shift
	rm -rf -- "$dir"
	mkdir -p -- "$dir"
	DMTCP_PORT=$(dmtcp_free_port)
	"$DMTCP/dmtcp_launch" --new-coordinator --coord-port "$DMTCP_PORT" \
		--ckptdir "$dir" --no-gzip "$@" </dev/null >>"$WORK/dmtcp.log" 2>&1 &
	OTHER_PID=$!
}

# checkpoint of the workload under coordinator $DMTCP_PORT, then the
# computation killed (as checkpoint --kill: the clock runs until it is
# gone).  Sets OTHER_RC.
dmtcp_dump() {	# PID
	OTHER_RC=0
	"$DMTCP/dmtcp_command" --coord-port "$DMTCP_PORT" --bcheckpoint \
		>"$WORK/dmtcp-cmd.log" 2>&1 || OTHER_RC=$?
	[ "$OTHER_RC" = 0 ] || return 0
	"$DMTCP/dmtcp_command" --coord-port "$DMTCP_PORT" --kill \
		>>"$WORK/dmtcp-cmd.log" 2>&1 || OTHER_RC=$?
	wait "$1" 2>/dev/null || true
}

# dmtcp_restart of the image in $1 with a coordinator of its own; it
# becomes the restored process, and returns only when that ends: the
# caller times it until the process is alive.  Sets OTHER_RC, OTHER_PID.
dmtcp_restore() {	# DIR
	local img
	OTHER_RC=0 OTHER_PID=""
	img=$(ls -- "$1"/ckpt_*.dmtcp 2>/dev/null | head -1)
	[ -n "$img" ] || { OTHER_RC=1; echo "no ckpt_*.dmtcp in $1" >"$WORK/dmtcp-restart.log"; return 0; }
	DMTCP_PORT=$(dmtcp_free_port)
	"$DMTCP/dmtcp_restart" --new-coordinator --coord-port "$DMTCP_PORT" "$img" \
		</dev/null >"$WORK/dmtcp-restart.log" 2>&1 &
	OTHER_PID=$!
}

# bytes of DMTCP's image (its ckpt_*.dmtcp; the restart script aside)
dmtcp_size() { cat -- "$1"/ckpt_*.dmtcp 2>/dev/null | wc -c; }

# what to say of DMTCP at the end; "undriven": a bench that has no
# driver for it (tree.sh)
dmtcp_status() {	# [undriven]
	dmtcp_probe
	if [ "${1:-}" = undriven ]; then
		echo "not measured here (bench.sh drives it)"
	elif [ -z "$DMTCP_WHY" ]; then
		echo "measured: $(dmtcp_desc), images uncompressed (--no-gzip)"
	else
		echo "not available: $DMTCP_WHY"
	fi
}
