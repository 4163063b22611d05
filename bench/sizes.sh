#!/usr/bin/env bash
# bench/sizes.sh - time against image size: ckpt, ckpt --compress, CRIU
# 4.2 and the hardware's limit, checkpoint and restart, for processes of
# several sizes of random (incompressible) memory, images on /dev/shm;
# then draws them as SVG charts with gnuplot (bench/charts/).
#
# usage: bench/sizes.sh        as root; about 3 minutes on the 2-CPU VM
#   SIZES="64 256 1024"   MiB of the workload (bench/workload.c)
#   REPS=3                runs of each (median, min, max)
#   CKPT=PATH             the ckpt binary (default: make build/ckpt)
#   CRIU=PATH             CRIU 4.2 (default: as bench/real.sh); none: skip
#   IMG_DIR=DIR           where images go (default /dev/shm: a tmpfs)
#   CHARTS=DIR            where the SVGs go (default bench/charts); none:
#                         no charts
#
# Every tool's run: the workload started afresh, checkpointed with --kill
# (criu dump), restarted detached (criu restore -d), its memory verified
# by itself (a result other than ok stops the bench).  The limits
# (bench/hwlimit.c): write(2) of the same bytes into a file on IMG_DIR,
# fsync'ed (checkpoint), read(2) of it into fresh memory (restart).
# gnuplot is installed (Debian's gnuplot-nox) if it is missing.
# CPU: user + system seconds of the command (what other users of the
# machine do not change; the limit's: none).  Prints a markdown table; the raw results stay in $WORK/results until
# exit.  Only processes this script started are signalled, by pid.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SIZES=${SIZES:-64 256 1024}
REPS=${REPS:-3}
CHARTS=${CHARTS:-$HERE/charts}
if [ -z "${CRIU:-}" ]; then
	CRIU=criu
	for c in "$ROOT/.zdtm/criu/criu/criu" "$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../.zdtm/criu/criu/criu"; do
		[ -x "$c" ] && { CRIU=$(cd "$(dirname "$c")" && pwd)/criu; break; }
	done
fi
WORK=$(mktemp -d /tmp/ckpt-sizes.XXXXXX)
IMG=$(mktemp -d "${IMG_DIR:-/dev/shm}/ckpt-sizes.XXXXXX")
RES=$WORK/results
PIDS=()
source "$HERE/lib.sh"

cleanup() {
	local pid
	trap - EXIT
	for pid in "${PIDS[@]}"; do
		[ "$(cat /proc/"$pid"/comm 2>/dev/null)" = workload ] && kill -9 "$pid" 2>/dev/null
	done
	rm -rf -- "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { say "sizes: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root"
if [ -z "${CKPT:-}" ]; then
	make -s -C "$ROOT" build/ckpt >&2 || exit 1
	CKPT=$ROOT/build/ckpt
fi
cp "$CKPT" "$WORK/ckpt"
CK=$WORK/ckpt
gcc -std=gnu11 -O2 -o "$WORK/workload" "$HERE/workload.c" || exit 1
gcc -std=gnu11 -O2 -pthread -o "$WORK/hwlimit" "$HERE/hwlimit.c" "$HERE/hwlimit_take.c" || exit 1
if [ "$CHARTS" != none ] && ! command -v gnuplot >/dev/null; then
	say "sizes: installing gnuplot-nox (for the charts)"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get install -y -qq gnuplot-nox || { apt-get update -qq &&
		apt-get install -y -qq gnuplot-nox; }; } >/dev/null 2>&1 ||
		die "no gnuplot, and it could not be installed (CHARTS=none to do without)"
fi
TOOLS="ckpt ckptz"
if [ "$CRIU" != none ] && "$CRIU" --version >/dev/null 2>&1; then
	TOOLS="$TOOLS criu"
else
	say "sizes: CRIU not run ($CRIU)"
fi
: >"$RES"
cd "$WORK" || exit 1
for fd in $(ls /proc/$$/fd); do
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done

# --- the tools: checkpoint --kill of pid $2 into $1, restart -----------
# (each also its CPU time, user + system, into $WORK/cpu: what the other
# users of a shared machine do not change)
T=(/usr/bin/time -o "$WORK/cpu" -f "%U %S")
ckpt_dump() { "${T[@]}" "$CK" checkpoint --kill -q -o "$1" "$2" 2>"$WORK/tool.err"; }
ckpt_restore() { "${T[@]}" "$CK" restart --detach -q "$1" >/dev/null 2>"$WORK/tool.err"; }
ckptz_dump() { "${T[@]}" "$CK" checkpoint --kill -q --compress -o "$1" "$2" 2>"$WORK/tool.err"; }
ckptz_restore() { ckpt_restore "$@"; }
# (as bench/real.sh runs it: its RLIMIT_NOFILE complaint is no failure)
criu_dump() {
	rm -rf -- "$1" && mkdir -p -- "$1"
	"${T[@]}" "$CRIU" dump -t "$2" -D "$1" -o "$WORK/criu-dump.log" >"$WORK/tool.err" 2>&1
}
criu_restore() {
	"${T[@]}" "$CRIU" restore -D "$1" -d -o "$WORK/criu-restore.log" >"$WORK/tool.err" 2>&1
}
cpu() { awk '{ print $1 + $2 }' "$WORK/cpu"; }

# one run of TOOL on a fresh workload of MIB MiB
cycle() {	# TOOL MIB
	local tool=$1 mib=$2 img=$IMG/img.$1 pid t0 t1 t2
	rm -rf -- "$img" "$WORK"/w.*
	setsid "$WORK/workload" "$mib" "$WORK/w.ready" "$WORK/w.go" "$WORK/w.res" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	disown
	PIDS+=("$pid")
	wait_until 120 test -e "$WORK/w.ready" || die "workload of $mib MiB not ready"
	sync
	t0=$(now_us)
	"${tool}_dump" "$img" "$pid" || die "$tool checkpoint of $mib MiB: $(tail -n 2 "$WORK/tool.err")"
	t1=$(now_us)
	rec_s "$tool.$mib.ckptcpu" "$(cpu)"
	wait_gone "$pid" 10 || die "pid $pid still there after $tool's checkpoint"
	touch "$WORK/w.go"
	t2=$(now_us)
	"${tool}_restore" "$img" || die "$tool restart of $mib MiB: $(tail -n 2 "$WORK/tool.err")"
	rec_us "$tool.$mib.restart" $(($(now_us) - t2))
	rec_s "$tool.$mib.restartcpu" "$(cpu)"
	rec_us "$tool.$mib.ckpt" $((t1 - t0))
	rec_s "$tool.$mib.size" "$(du -sb -- "$img" | awk '{print $1}')"
	wait_until 60 grep -q . "$WORK/w.res" || die "$tool: the restored workload of $mib MiB gave no result"
	grep -q '^ok' "$WORK/w.res" || die "$tool: the restored workload: $(cat "$WORK/w.res")"
	wait_gone "$pid" 10
	rm -rf -- "$img"
}

limits() {	# MIB
	local f=$IMG/limit.bin
	rec_s "limit.$1.ckpt" "$("$WORK/hwlimit" write "$f" "$1")" || die "hwlimit write"
	rec_s "limit.$1.restart" "$("$WORK/hwlimit" read "$f")" || die "hwlimit read"
	rec_s "limit.$1.size" $(($1 << 20))
	rm -f "$f"
}

say "sizes: $TOOLS, sizes $SIZES MiB, $REPS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= REPS; r++)); do
	for mib in $SIZES; do
		say "sizes: run $r of $REPS, $mib MiB"
		limits "$mib"
		# the tools in turn first: none always after another
		order=($TOOLS)
		for ((i = 0; i < ${#order[@]}; i++)); do
			cycle "${order[(i + r) % ${#order[@]}]}" "$mib"
		done
	done
done

python3 - "$RES" "$REPS" "$(cut -d' ' -f1-3 /proc/loadavg)" "$WORK" "$TOOLS" <<'EOF'
import sys, statistics as st
res, reps, load, work, tools = sys.argv[1:6]
tools = ["limit"] + tools.split()
v = {}
for line in open(res):
    k, x = line.split()
    v.setdefault(k, []).append(float(x))
name = {"limit": "hardware limit", "ckpt": "ckpt", "ckptz": "ckpt --compress", "criu": "CRIU 4.2"}
sizes = sorted({int(k.split(".")[1]) for k in v})
def med(k): return st.median(v[k]) if k in v else None
def cell(k):
    if k not in v: return "-"
    return "%.0f [%.0f-%.0f]" % (med(k) * 1000, min(v[k]) * 1000, max(v[k]) * 1000)
print("%s runs each; ms, median [min-max]; images on a tmpfs; random (incompressible) memory; load after: %s\n" % (reps, load))
print("| MiB | what | image MB | checkpoint | restart | checkpoint / ckpt's | restart / ckpt's | checkpoint CPU | restart CPU |")
print("|---|---|---|---|---|---|---|---|---|")
for s in sizes:
    for t in tools:
        k = "%s.%d" % (t, s)
        if k + ".ckpt" not in v: continue
        rc = med(k + ".ckpt") / med("ckpt.%d.ckpt" % s)
        rr = med(k + ".restart") / med("ckpt.%d.restart" % s)
        print("| %d | %s | %.1f | %s | %s | %.2f | %.2f | %s | %s |" % (s, name[t], med(k + ".size") / 1e6,
              cell(k + ".ckpt"), cell(k + ".restart"), rc, rr, cell(k + ".ckptcpu"), cell(k + ".restartcpu")))
# the charts' data: one file per tool, rows of size MB and the best
# runs in s (on a shared machine the others' load only adds)
for t in tools:
    with open("%s/%s.dat" % (work, t), "w") as f:
        for s in sizes:
            k = "%s.%d" % (t, s)
            if k + ".ckpt" in v:
                f.write("%.1f %.4f %.4f\n" % (s * 1.048576, min(v[k + ".ckpt"]), min(v[k + ".restart"])))
EOF

[ "$CHARTS" = none ] && exit 0
mkdir -p "$CHARTS"
# time against the process's memory (MB), one line per tool
chart() {	# WHAT COLUMN
	local plots="" t title
	for t in limit $TOOLS; do
		[ -s "$WORK/$t.dat" ] || continue
		case $t in
		limit) title="hardware limit" ;; ckpt) title=ckpt ;;
		ckptz) title="ckpt --compress" ;; criu) title="CRIU 4.2" ;;
		esac
		plots+="${plots:+, }'$WORK/$t.dat' using 1:$2 with linespoints lw 2 title '$title'"
	done
	gnuplot <<-EOF
	set terminal svg size 640,400 dynamic font "sans,12" background "white"
	set output "$CHARTS/$1.svg"
	set title "$1 of a process of random memory, image on tmpfs (best of $REPS)"
	set xlabel "memory (MB)"
	set ylabel "seconds"
	set key top left
	set grid
	set yrange [0:*]
	plot $plots
	EOF
}
chart checkpoint 2 && chart restart 3 && say "sizes: charts in $CHARTS"
