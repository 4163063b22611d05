# others.sh - other checkpoint/restore tools on the benches' own workloads,
# so that bench.sh and tree.sh can put them next to ckpt in the same run.
# Sourced after lib.sh; expects $WORK and $PIDS.  A missing or broken tool
# never fails a bench: it becomes "not available: <reason>" in the report.
#
# CRIU:  CRIU=PATH picks the binary (default: criu on PATH); CRIU=none skips it.
# DMTCP: only looked for.  It checkpoints programs started under
#        dmtcp_launch, with a coordinator; no driver for that exists here.

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

# DMTCP: whether it is there; it is not driven (see the top)
dmtcp_status() {
	if command -v dmtcp_launch >/dev/null; then
		echo "not measured: dmtcp_launch is installed, but DMTCP only checkpoints programs started under dmtcp_launch and this script has no driver for it"
	else
		echo "not available: no dmtcp_launch on PATH (Debian 12 has no dmtcp package)"
	fi
}
