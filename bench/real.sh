#!/usr/bin/env bash
# bench/real.sh - ckpt and CRIU side by side on real programs, alternating
# in one run: each program is started fresh for every tool and every run,
# used, checkpointed with --kill (criu dump), restarted detached (criu
# restore -d), and used again, which must show it carried on with its
# state.  Reports each tool's checkpoint and restart times (wall clock of
# the command, as a user times it) and the ckpt/CRIU ratios.
#
# usage: bench/real.sh          as root, from anywhere; about 3 minutes
#   REPS=3        runs of each program and tool (median, min, max)
#   CKPT=PATH     the ckpt binary (default: make build/ckpt)
#   CRIU=PATH     CRIU 4.2 (default: .zdtm/criu/criu/criu of the main
#                 checkout if built there, else criu on PATH); none: skip
#   ONLY="a b"    only these programs
#   TIMING=1      ckpt -v in the last run of each program, its timing breakdowns shown at the end
#   CKPT_BASE=PATH  another ckpt binary (an older one) in the same run,
#                 alternating with the other two: before and after
#   IMG_DIR=DIR   where images go (default /dev/shm: a tmpfs)
#   COMPRESS=1    ckpt --compress too, a tool of its own ("ckptz"), in the
#                 same run: its image size and times beside ckpt's
#
# Programs (each skipped, saying so, when its command is missing):
#   tiny      bench/workload.c with no memory: a C loop (checks its memory)
#   sqlite3   the sqlite3 shell with a database open, in a tmux server
#             (a row counted before and after)
#   node      a node HTTP server counting its hits (the count goes on)
#   python    python3's threaded http.server (answers after restart)
#   java      an OpenJDK HTTP server, a 200000-entry map (the count goes on)
#   tmux      a tmux server and its shell (a command typed after restart runs)
#   postgres  PostgreSQL (postmaster and its workers, as user postgres; a
#             row inserted before is summed with one inserted after)
#   redis-server  redis with 20000 keys (they are all there after; a
#             counter goes on)
#   nginx     nginx, master and one worker (the same worker answers after);
#             the worker as root: CRIU cannot dump a www-data worker here
#             (prlimit of another uid needs CAP_SYS_RESOURCE)
#   (apt-get install redis-server nginx-light: neither is started as a
#   service without systemd)
# Only processes this script started (or restored) are signalled, by
# pid; everything is removed on exit.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
REPS=${REPS:-3}
IMG_BASE=${IMG_DIR:-/dev/shm}
if [ -z "${CRIU:-}" ]; then
	CRIU=criu
	for c in "$ROOT/.zdtm/criu/criu/criu" "$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../.zdtm/criu/criu/criu"; do
		[ -x "$c" ] && { CRIU=$(cd "$(dirname "$c")" && pwd)/criu; break; }
	done
fi
WORK=$(mktemp -d /tmp/ckpt-real.XXXXXX)
IMG=$(mktemp -d "$IMG_BASE/ckpt-real.XXXXXX")
RES=$WORK/results
PIDS=()
PID=""
NAME=""
source "$HERE/lib.sh"

cleanup() {
	local pid
	trap - EXIT
	for pid in "${PIDS[@]}"; do
		kill -9 "$pid" 2>/dev/null
	done
	for s in "$WORK"/*.tmux; do
		[ -S "$s" ] && tmux -S "$s" kill-server 2>/dev/null
	done
	rm -rf -- "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { say "real: run as root"; exit 1; }
if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt >&2 || exit 1
	CKPT=$ROOT/build/ckpt
fi
cp "$CKPT" "$WORK/ckpt"
CK=$WORK/ckpt
TOOLS="ckpt criu"
if [ -n "${CKPT_BASE:-}" ]; then
	cp "$CKPT_BASE" "$WORK/ckpt-base" || exit 1
	TOOLS="base ckpt criu"
fi
[ -n "${COMPRESS:-}" ] && TOOLS=${TOOLS/ckpt/ckpt ckptz}
cd "$WORK" || exit 1
chmod 755 "$WORK"
: >"$RES"

# Descriptors this shell inherited would be the programs' (and refused).
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

# --- the tools: checkpoint --kill of tree $2 into image $1, restart ------

# TIMING=1: ckpt's last run of each program is made with -v, and its
# timing lines (src/timing.c) are shown after the table.  They are kept
# by cycle(), outside the timed commands: a grep there (a process
# started, 1.5-2 ms here) was counted as ckpt's own in sessions 14-16.
V=
base_dump() { "$WORK/ckpt-base" checkpoint --kill -o "$1" "$2" 2>"$WORK/tool.err"; }
base_restore() { "$WORK/ckpt-base" restart --detach "$1" >/dev/null 2>"$WORK/tool.err"; }
ckpt_dump() { "$CK" checkpoint --kill $V -o "$1" "$2" 2>"$WORK/tool.err"; }
ckpt_restore() { "$CK" restart --detach $V "$1" >/dev/null 2>"$WORK/tool.err"; }
# ckpt's timing lines of the command just timed (-v), into timing.NAME
keep_timing() {	# > or >>
	[ -n "$V" ] || return 0
	if [ "$1" = ">" ]; then
		grep timing: "$WORK/tool.err" >"$WORK/timing.$NAME" || :
	else
		grep timing: "$WORK/tool.err" >>"$WORK/timing.$NAME" || :
	fi
}
ckptz_dump() { "$CK" checkpoint --kill --compress -o "$1" "$2" 2>"$WORK/tool.err"; }
ckptz_restore() { "$CK" restart --detach "$1" >/dev/null 2>"$WORK/tool.err"; }

# CRIU needs --tcp-established for the connections a server may hold,
# and is told the tree has no controlling terminal outside it.  Its
# restore tries to raise RLIMIT_NOFILE to fs.nr_open, which root without
# CAP_SYS_RESOURCE may not: CRIU 4.2 logs that and goes on with the
# limit it has (and so it is started with the hard limit it would keep).
criu_dump() {
	rm -rf -- "$1"
	mkdir -p -- "$1"
	"$CRIU" dump -t "$2" -D "$1" --tcp-established --file-locks \
		-o "$WORK/criu-dump.log" >"$WORK/tool.err" 2>&1 ||
		{ criu_why "$WORK/criu-dump.log"; return 1; }
}
criu_restore() {
	"$CRIU" restore -D "$1" -d --tcp-established --file-locks \
		-o "$WORK/criu-restore.log" >"$WORK/tool.err" 2>&1 ||
		{ criu_why "$WORK/criu-restore.log"; return 1; }
}
criu_why() {	# LOG: its first error and last error, into tool.err
	awk '/Error/ && !/RLIMIT_NOFILE/ { sub(/^\([0-9. ]*\) */, ""); if (f == "") f = $0; l = $0 }
	END { print f == l ? f : f " ... " l }' "$1" >"$WORK/tool.err"
}

CRIU_OK=1
if [ "$CRIU" = none ] || ! "$CRIU" --version >/dev/null 2>&1; then
	CRIU_OK=0
	rec_s "criu.why" "not run (CRIU=$CRIU)"
fi

# checkpoint --kill then restart of the tree of $PID with tool $2,
# recorded as NAME.TOOL.  The restart's clock starts once every pid of
# the tree is free (init reaps the killed ones only every second or two).
cycle() {	# NAME TOOL
	local name=$1 tool=$2 t0 t1 t2 t3 pid pids img=$IMG/$1.$2
	NAME=$name
	pids=$(tree_pids "$PID")
	rec_s "$name.tasks" "$(for p in $pids; do ls /proc/"$p"/task; done 2>/dev/null | wc -l)"
	rm -rf -- "$img"
	sync
	t0=$(now_us)
	"${tool}_dump" "$img" "$PID"
	local rc=$?
	t1=$(now_us)
	[ $rc = 0 ] || { say "real: $name: $tool checkpoint failed: $(tail -n 2 "$WORK/tool.err")"; return 1; }
	[ "$tool" = ckpt ] && keep_timing ">"
	for pid in $pids; do
		wait_gone "$pid" 10 || { say "real: $name: pid $pid still there"; return 1; }
	done
	t2=$(now_us)
	"${tool}_restore" "$img" ||
		{ say "real: $name: $tool restart failed: $(tail -n 2 "$WORK/tool.err")"; return 1; }
	t3=$(now_us)
	[ "$tool" = ckpt ] && keep_timing ">>"
	rec_us "$name.$tool.ckpt" $((t1 - t0))
	rec_us "$name.$tool.restart" $((t3 - t2))
	rec_s "$name.$tool.size" "$(du -sb -- "$img" | awk '{print $1}')"
}

# the end of a program: its tree, by pid; asked first (SIGINT: a
# PostgreSQL left by a failed run then removes its shared memory), then
# killed
stop_tree() {
	local p pids
	pids=$(tree_pids "$PID")
	kill -INT "$PID" 2>/dev/null && wait_gone "$PID" 3
	kill -9 $pids 2>/dev/null
	for p in $pids; do
		wait_gone "$p" 10
	done
}

# --- the programs: start (sets PID), then check after the restart --------

tiny_start() {
	[ -x "$WORK/workload" ] || gcc -O2 -o "$WORK/workload" "$HERE/workload.c" || return 1
	rm -f "$WORK/w.ready" "$WORK/w.go" "$WORK/w.res"
	setsid "$WORK/workload" 0 "$WORK/w.ready" "$WORK/w.go" "$WORK/w.res" </dev/null >/dev/null 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 10 test -e "$WORK/w.ready"
}
tiny_check() {
	touch "$WORK/w.go"
	wait_until 10 grep -q '^ok' "$WORK/w.res" ||
		{ say "real: tiny: $(cat "$WORK/w.res" 2>/dev/null)"; return 1; }
}

tm() { tmux -S "$WORK/$1.tmux" "${@:2}"; }
pane_has() { tm "$1" capture-pane -p | grep -q -- "$2"; }
tmux_server() { pgrep -n -f -- "tmux -S $WORK/$1.tmux"; }

sqlite3_start() {
	rm -f "$WORK/db"
	sqlite3 "$WORK/db" "create table t(x); insert into t values (1);" || return 1
	tm sqlite3 new -d -x 120 -y 30 "sqlite3 $WORK/db" || return 1
	PID=$(tmux_server sqlite3)
	PIDS+=("$PID")
	tm sqlite3 send-keys -l "insert into t values (2); select 'n=' || count(*) from t\\;"
	tm sqlite3 send-keys Enter
	wait_until 10 pane_has sqlite3 '^n=2'
}
sqlite3_check() {
	tm sqlite3 send-keys -l "insert into t values (3); select 'n=' || count(*) from t\\;"
	tm sqlite3 send-keys Enter
	wait_until 10 pane_has sqlite3 '^n=3' || { say "real: sqlite3 did not count 3 rows"; return 1; }
	tm sqlite3 kill-server
}

NODE_PORT=18282
node_start() {
	cat >"$WORK/srv.js" <<-'EOF'
	let n = 0;
	require('http').createServer((q, r) => r.end(String(++n))).listen(+process.argv[2], '127.0.0.1');
	EOF
	setsid node "$WORK/srv.js" $NODE_PORT </dev/null >"$WORK/node.out" 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 10 curl -sf "http://127.0.0.1:$NODE_PORT/" &&
		NODE_N=$(curl -sf "http://127.0.0.1:$NODE_PORT/")
}
node_check() {
	local b
	b=$(curl -sf "http://127.0.0.1:$NODE_PORT/")
	[ "$b" = $((NODE_N + 1)) ] || { say "real: node counted $NODE_N, then '$b'"; return 1; }
}

PY_PORT=18283
python_start() {
	setsid python3 -c '
import http.server, socketserver, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' $PY_PORT \
		</dev/null >"$WORK/py.out" 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 10 curl -sf "http://127.0.0.1:$PY_PORT/results"
}
python_check() {
	curl -sf "http://127.0.0.1:$PY_PORT/results" >/dev/null ||
		{ say "real: python does not answer after restart"; return 1; }
}

JAVA_PORT=18284
java_start() {
	if [ ! -e "$WORK/Srv.class" ]; then
		cat >"$WORK/Srv.java" <<-'EOF'
		import com.sun.net.httpserver.*;
		import java.net.*;
		import java.util.*;
		import java.util.concurrent.atomic.*;
		public class Srv {
		    public static void main(String[] a) throws Exception {
		        Map<Integer, String> m = new HashMap<>();
		        for (int i = 0; i < 200000; i++) m.put(i, "v" + i);
		        AtomicLong n = new AtomicLong();
		        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(a[0])), 0);
		        s.createContext("/", x -> {
		            byte[] b = (n.incrementAndGet() + " " + m.size()).getBytes();
		            x.sendResponseHeaders(200, b.length); x.getResponseBody().write(b); x.close(); });
		        s.start();
		    }
		}
		EOF
		javac -d "$WORK" "$WORK/Srv.java" || return 1
	fi
	setsid java -cp "$WORK" Srv $JAVA_PORT </dev/null >"$WORK/java.out" 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 30 curl -sf "http://127.0.0.1:$JAVA_PORT/" &&
		JAVA_N=$(curl -sf "http://127.0.0.1:$JAVA_PORT/" | cut -d' ' -f1)
}
java_check() {
	local b
	b=$(curl -sf "http://127.0.0.1:$JAVA_PORT/")
	[ "$b" = "$((JAVA_N + 1)) 200000" ] || { say "real: java counted $JAVA_N, then '$b'"; return 1; }
}

tmux_start() {
	tm tmux new -d -x 120 -y 30 "bash --norc --noprofile" || return 1
	PID=$(tmux_server tmux)
	PIDS+=("$PID")
	tm tmux send-keys 'x=before' Enter
	sleep 0.2
}
tmux_check() {
	tm tmux send-keys 'echo "got $x-after"' Enter
	wait_until 10 pane_has tmux '^got before-after' ||
		{ say "real: tmux's shell did not run a command after restart"; return 1; }
	tm tmux kill-server
}

pg_q() { python3 "$HERE/pgquery.py" "$WORK/pg/.s.PGSQL.15434" "$@"; }
postgres_start() {
	if [ ! -d "$WORK/pg/data" ]; then
		mkdir -p "$WORK/pg" && chown postgres "$WORK/pg" || return 1
		su postgres -s /bin/sh -c "initdb -D '$WORK/pg/data' -A trust" >"$WORK/initdb.log" 2>&1 ||
			{ say "real: initdb failed: $(tail -n 1 "$WORK/initdb.log")"; return 1; }
	fi
	setsid su postgres -s /bin/sh -c "exec postgres -D '$WORK/pg/data' -k '$WORK/pg' -p 15434 -c listen_addresses=''" \
		</dev/null >"$WORK/pg.log" 2>&1 &
	disown
	wait_until 20 pg_q "select 1" || { say "real: postgres did not start: $(tail -n 1 "$WORK/pg.log")"; return 1; }
	PID=$(head -n 1 "$WORK/pg/data/postmaster.pid")
	PIDS+=("$PID")
	pg_q "create table if not exists t(x int)" "delete from t" "insert into t values (1)" >/dev/null
}
postgres_check() {
	[ "$(pg_q "insert into t values (2)" "select sum(x) from t" | tail -n 1)" = "[['3']]" ] ||
		{ say "real: postgres lost its row"; return 1; }
	kill -INT "$PID"	# fast shutdown
	wait_gone "$PID" 20
}

rc() { redis-cli -p 16379 "$@"; }
redis-server_start() {
	setsid redis-server --port 16379 --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$WORK" --enable-debug-command local \
		</dev/null >"$WORK/redis.log" 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 10 rc ping || { say "real: redis did not start: $(tail -n 1 "$WORK/redis.log")"; return 1; }
	rc debug populate 20000 >/dev/null && rc set n 5 >/dev/null
}
redis-server_check() {
	local k n
	k=$(rc dbsize) n=$(rc incr n)
	[ "$k $n" = "20001 6" ] || { say "real: redis had '$k' keys and counted '$n'"; return 1; }
	rc shutdown nosave >/dev/null 2>&1
	wait_gone "$PID" 10
}

nginx_start() {
	mkdir -p "$WORK/nginx"
	cat >"$WORK/nginx/conf" <<-EOF
	daemon off;
	master_process on;
	user root root;
	worker_processes 1;
	pid $WORK/nginx/pid;
	error_log $WORK/nginx/err;
	events { worker_connections 64; }
	http {
	    access_log off;
	    client_body_temp_path $WORK/nginx/body;
	    proxy_temp_path $WORK/nginx/proxy;
	    fastcgi_temp_path $WORK/nginx/fcgi;
	    scgi_temp_path $WORK/nginx/scgi;
	    uwsgi_temp_path $WORK/nginx/uwsgi;
	    server {
	        listen 127.0.0.1:18080;
	        location / { return 200 "worker \$pid"; }
	    }
	}
	EOF
	setsid nginx -c "$WORK/nginx/conf" -p "$WORK/nginx" </dev/null >"$WORK/nginx/out" 2>&1 &
	PID=$!
	disown
	PIDS+=("$PID")
	wait_until 10 curl -sf http://127.0.0.1:18080/ ||
		{ say "real: nginx did not start: $(tail -n 1 "$WORK/nginx/err")"; return 1; }
	NGINX_SAID=$(curl -sf http://127.0.0.1:18080/)
}
nginx_check() {
	local b
	b=$(curl -sf http://127.0.0.1:18080/)
	[ "$b" = "$NGINX_SAID" ] || { say "real: nginx said '$NGINX_SAID', then '$b'"; return 1; }
	kill -QUIT "$PID"
	wait_gone "$PID" 10
}

# one program, REPS times, the tools alternating (ckpt first, then CRIU,
# each on a fresh start of the program)
bench() {	# NAME COMMAND
	local i k tool tools=($TOOLS)
	if ! command -v "$2" >/dev/null; then
		rec_s "$1.skip" "no $2 here"
		return 0
	fi
	[ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]] || return 0
	for ((i = 0; i < REPS; i++)); do
		V=
		[ -n "${TIMING:-}" ] && [ $i = $((REPS - 1)) ] && V=-v
		# each round starts with another tool: the first of a round
		# ran 1-3 ms slower (sessions 14 and 16), whichever it was
		for ((k = 0; k < ${#tools[@]}; k++)); do
			tool=${tools[(i + k) % ${#tools[@]}]}
			[ $tool = criu ] && [ $CRIU_OK = 0 ] && continue
			grep -q "^$1.$tool.fail " "$RES" && continue
			say "real: $1 with $tool, run $((i + 1)) of $REPS"
			if ! "$1_start"; then
				say "real: $1 did not start"
				rec_s "$1.$tool.fail" "did not start"
				stop_tree
				continue
			fi
			if ! cycle "$1" $tool; then
				rec_s "$1.$tool.fail" "$(tail -n 1 "$WORK/tool.err" | tr -s ' \t' ' ' | cut -c1-150)"
				stop_tree
				continue
			fi
			if ! "$1_check"; then
				rec_s "$1.$tool.fail" "not working after restart"
			fi
			stop_tree
		done
	done
}

say "real: ckpt $CK, criu $CRIU ($("$CRIU" --version 2>/dev/null | awk '/^Version/ {print $2}')), load $(cut -d' ' -f1-3 /proc/loadavg)"
bench tiny gcc
bench sqlite3 sqlite3
bench node node
bench python python3
bench java java
bench tmux tmux
id postgres >/dev/null 2>&1 && bench postgres initdb
bench redis-server redis-server
bench nginx nginx

python3 - "$RES" "$REPS" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import sys, statistics as st
res, reps, load = sys.argv[1], sys.argv[2], sys.argv[3]
v, txt = {}, {}
for line in open(res):
    k, _, x = line.rstrip("\n").partition(" ")
    try: v.setdefault(k, []).append(float(x))
    except ValueError: txt.setdefault(k, x)
def med(k): return st.median(v[k]) * 1000 if k in v else None
def cell(k):
    if k not in v: return "-"
    return "%.0f [%.0f-%.0f]" % (med(k), min(v[k]) * 1000, max(v[k]) * 1000)
print("%s runs each, ckpt and CRIU alternating; wall ms, median [min-max]; load after: %s" % (reps, load))
print()
base = any(".base." in k for k in list(v) + list(txt))
z = any(".ckptz." in k for k in list(v) + list(txt))
print("ratio: ckpt's median over CRIU's (below 1: ckpt is faster; the goal is 0.5 or less)")
print()
tools = (["base"] if base else []) + ["ckpt"] + (["ckptz"] if z else []) + ["criu"]
head = "| program | threads | ckpt image MB |"
if base: head += " before: checkpoint | before: restart |"
head += " ckpt checkpoint | ckpt restart |"
if z: head += " --compress image MB | --compress checkpoint | --compress restart |"
head += " CRIU checkpoint | CRIU restart | ckpt/CRIU checkpoint | ckpt/CRIU restart |"
print(head)
print("|---" * head.count(" |") + "|")
for n in ["tiny", "sqlite3", "node", "python", "java", "tmux", "postgres", "redis-server", "nginx"]:
    if n + ".skip" in txt:
        print("| %s | skipped: %s |" % (n, txt[n + ".skip"])); continue
    if n + ".tasks" not in v and n + ".ckpt.fail" not in txt: continue
    row = [n, "%d" % st.median(v.get(n + ".tasks", [0]))]
    row.append("%.1f" % (st.median(v[n + ".ckpt.size"]) / 1e6) if n + ".ckpt.size" in v else "-")
    for t in tools:
        if n + "." + t + ".fail" in txt and n + "." + t + ".ckpt" not in v:
            row += ["failed: " + txt[n + "." + t + ".fail"], ""] + ([""] if t == "ckptz" else [])
        else:
            if t == "ckptz":
                row.append("%.1f" % (st.median(v[n + ".ckptz.size"]) / 1e6) if n + ".ckptz.size" in v else "-")
            row += [cell(n + "." + t + ".ckpt"), cell(n + "." + t + ".restart")]
    for d in ["ckpt", "restart"]:
        a, b = med(n + ".ckpt." + d), med(n + ".criu." + d)
        row.append("%.2f" % (a / b) if a and b else "-")
    print("| " + " | ".join(row) + " |")
    for t in tools:
        if n + "." + t + ".fail" in txt and n + "." + t + ".ckpt" in v:
            print("|  | %s failed a run: %s |" % (t, txt[n + "." + t + ".fail"]))
if "criu.why" in txt: print("\nCRIU: " + txt["criu.why"])
EOF
for f in "$WORK"/timing.*; do
	[ -s "$f" ] || continue
	printf '\nckpt -v, %s (its last run):\n' "${f##*/timing.}"
	sed 's/^ckpt: timing: /  /' "$f"
done
