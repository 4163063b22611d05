#!/usr/bin/env bash
# bench/programs.sh - ckpt on real programs found on this machine: each is
# started, used, checkpointed with --kill, restarted with --detach, and
# used again, which must show it carried on (its state kept).  Reports the
# checkpoint and restart times and the image size of each.
#
# usage: bench/programs.sh           as root, from anywhere; about 30 s
#   REPS=3       runs of each program (median, min and max reported)
#   CKPT=PATH    the binary to measure (default: make build/ckpt)
#
# Programs (each skipped, saying so, when its command is missing):
#   python-http  python3's threaded http.server, fetched with curl
#   node-http    a node http server counting its hits (the count goes on)
#   java         a JVM (about 20 threads) printing a tick count (it goes on)
#   tmux         a tmux server and its shell, with a line typed ahead
#                (the shell reads it after the restart)
#   postgres     a PostgreSQL server (postmaster, its 5 workers, a SysV
#                segment), made with initdb as user postgres: a row
#                inserted before is summed with one inserted after
# Only processes this script started are ever signalled; everything it
# made is removed on exit.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
REPS=${REPS:-3}
WORK=$(mktemp -d /tmp/ckpt-programs.XXXXXX)
RES=$WORK/results
PIDS=()
source "$HERE/lib.sh"

cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -9 "$pid" 2>/dev/null
	done
	[ -S "$WORK/tmux.sock" ] && tmux -S "$WORK/tmux.sock" kill-server 2>/dev/null
	rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { say "programs: run as root"; exit 1; }
if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt >&2 || exit 1
	CKPT=$ROOT/build/ckpt
fi
cp "$CKPT" "$WORK/ckpt"
CK=$WORK/ckpt
cd "$WORK" || exit 1
: >"$RES"

# Descriptors this shell inherited would be the programs' (and refused).
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

# the pid of the newest process whose command line matches $1
newest() { pgrep -n -f -- "$1"; }

# checkpoint --kill then restart --detach of pid $2, recorded under $1.
# The restart's clock starts once every pid of the tree is free (init
# reaps the killed children only every second or two).
cycle() {	# NAME PID
	local t0 t1 t2 rc tasks pid pids
	tasks=$(ls -d /proc/"$2"/task/* 2>/dev/null | wc -l)
	pids=$(tree_pids "$2")
	t0=$(now_us)
	"$CK" checkpoint --kill -o "$WORK/$1.img" "$2" 2>"$WORK/$1.err"
	rc=$?
	t1=$(now_us)
	[ $rc = 0 ] || { say "programs: $1: checkpoint failed: $(cat "$WORK/$1.err")"; return 1; }
	for pid in $pids; do
		wait_gone "$pid" 10 || { say "programs: $1: pid $pid still there"; return 1; }
	done
	t2=$(now_us)
	"$CK" restart --detach "$WORK/$1.img" >/dev/null 2>"$WORK/$1.rerr" ||
		{ say "programs: $1: restart failed: $(cat "$WORK/$1.rerr")"; return 1; }
	rec_us "$1.ckpt" $((t1 - t0))
	rec_us "$1.restart" $(($(now_us) - t2))
	rec_s "$1.size" "$(stat -c %s "$WORK/$1.img")"
	rec_s "$1.tasks" "$tasks"
}

python_http() {
	local pid port=18181
	setsid python3 -c '
import http.server, socketserver, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' $port \
		</dev/null >"$WORK/py.out" 2>&1 &
	pid=$!
	disown	# its end is no job-control news
	PIDS+=("$pid")
	wait_until 10 curl -sf "http://127.0.0.1:$port/results" || return 1
	cycle python-http "$pid" || return 1
	curl -sf "http://127.0.0.1:$port/results" >/dev/null ||
		{ say "programs: python-http does not answer after restart"; return 1; }
	kill "$pid"
	wait_gone "$pid" 10
}

node_http() {
	local pid port=18182 a b
	cat >"$WORK/srv.js" <<-'EOF'
	let n = 0;
	require('http').createServer((q, r) => r.end(String(++n))).listen(+process.argv[2], '127.0.0.1');
	EOF
	setsid node "$WORK/srv.js" $port </dev/null >"$WORK/node.out" 2>&1 &
	pid=$!
	disown	# its end is no job-control news
	PIDS+=("$pid")
	wait_until 10 curl -sf "http://127.0.0.1:$port/" || return 1
	a=$(curl -sf "http://127.0.0.1:$port/")
	cycle node-http "$pid" || return 1
	b=$(curl -sf "http://127.0.0.1:$port/")
	[ "$b" = $((a + 1)) ] || { say "programs: node-http counted $a, then $b"; return 1; }
	kill "$pid"
	wait_gone "$pid" 10
}

java_ticks() {
	local pid before after
	cat >"$WORK/Tick.java" <<-'EOF'
	public class Tick {
	    public static void main(String[] a) throws Exception {
	        for (long i = 0; ; i++) { System.out.println(i); Thread.sleep(20); }
	    }
	}
	EOF
	javac -d "$WORK" "$WORK/Tick.java" || return 1
	setsid java -cp "$WORK" Tick </dev/null >"$WORK/java.out" 2>&1 &
	pid=$!
	disown	# its end is no job-control news
	PIDS+=("$pid")
	wait_until 20 grep -q '^20$' "$WORK/java.out" || return 1
	cycle java "$pid" || return 1
	before=$(tail -n 1 "$WORK/java.out")
	sleep 0.5
	after=$(tail -n 1 "$WORK/java.out")
	[ "$after" -gt "$before" ] 2>/dev/null ||
		{ say "programs: java ticked $before, then $after"; return 1; }
	kill "$pid"
	wait_gone "$pid" 10
}

tmux_typeahead() {
	local pid sock=$WORK/tmux.sock
	tmux -S "$sock" new -d "sleep 1; read line; echo \"got \$line\"; sleep 600" || return 1
	tmux -S "$sock" send-keys 'typed ahead' Enter
	pid=$(newest "tmux -S $sock")
	[ -n "$pid" ] || return 1
	PIDS+=("$pid")
	cycle tmux "$pid" || return 1
	wait_until 10 sh -c "tmux -S '$sock' capture-pane -p | grep -q '^got typed ahead'" ||
		{ say "programs: tmux's shell never read the line typed ahead"; return 1; }
	tmux -S "$sock" kill-server
	wait_gone "$pid" 10
}

pg_q() { python3 "$HERE/pgquery.py" "$WORK/pg/.s.PGSQL.15433" "$@"; }

postgres_rows() {
	local pid
	if [ ! -d "$WORK/pg/data" ]; then
		mkdir -p "$WORK/pg" && chown postgres "$WORK/pg" && chmod 755 "$WORK" || return 1
		su postgres -s /bin/sh -c "initdb -D '$WORK/pg/data' -A trust" >"$WORK/initdb.log" 2>&1 ||
			{ say "programs: initdb failed: $(tail -n 1 "$WORK/initdb.log")"; return 1; }
	fi
	setsid su postgres -s /bin/sh -c "exec postgres -D '$WORK/pg/data' -k '$WORK/pg' -p 15433 -c listen_addresses=''" \
		</dev/null >"$WORK/pg.log" 2>&1 &
	disown
	wait_until 20 pg_q "select 1" || { say "programs: postgres did not start: $(tail -n 1 "$WORK/pg.log")"; return 1; }
	pid=$(head -n 1 "$WORK/pg/data/postmaster.pid")
	PIDS+=("$pid")
	pg_q "create table if not exists t(x int)" "delete from t" "insert into t values (1)" >/dev/null || return 1
	cycle postgres "$pid" || return 1
	[ "$(pg_q "insert into t values (2)" "select sum(x) from t" | tail -n 1)" = "[['3']]" ] ||
		{ say "programs: postgres lost its row"; return 1; }
	kill -INT "$pid"	# fast shutdown
	wait_gone "$pid" 20
}

run() {	# NAME FUNCTION COMMAND
	local i
	if ! command -v "$3" >/dev/null; then
		rec_s "$1.skip" "no $3"
		return 0
	fi
	for ((i = 0; i < REPS; i++)); do
		say "programs: $1, run $((i + 1)) of $REPS"
		"$2" || { rec_s "$1.fail" 1; return 0; }
	done
}

run python-http python_http python3
run node-http node_http node
run java java_ticks java
run tmux tmux_typeahead tmux
id postgres >/dev/null 2>&1 && command -v initdb >/dev/null &&
	run postgres postgres_rows postgres

awk -v reps="$REPS" '
function median(k,   n, i, j, t, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++) a[i] = val[k, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo = a[1]; hi = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ cnt[$1]++; val[$1, cnt[$1]] = $2; if (!($1 in seen)) { seen[$1]; order[++no] = $1 } }
END {
	printf "%d runs of each: checkpoint --kill and restart --detach, median [min - max] in ms\n\n", reps
	printf "  %-12s %7s %9s  %22s  %22s\n", "program", "threads", "image MB", "checkpoint", "restart"
	split("python-http node-http java tmux postgres", names, " ")
	for (i = 1; i <= 5; i++) {
		n = names[i]
		if ((n ".skip") in cnt) { printf "  %-12s skipped: %s\n", n, val[n ".skip", 1]; continue }
		if ((n ".fail") in cnt) { printf "  %-12s FAILED (see the lines above)\n", n; continue }
		if (!((n ".ckpt") in cnt)) continue
		c = median(n ".ckpt"); cl = lo; ch = hi
		r = median(n ".restart"); rl = lo; rh = hi
		printf "  %-12s %7d %9.1f  %7.1f [%5.1f - %5.1f]  %7.1f [%5.1f - %5.1f]\n", n,
			median(n ".tasks"), median(n ".size") / 1e6,
			c * 1000, cl * 1000, ch * 1000, r * 1000, rl * 1000, rh * 1000
	}
}' "$RES"
