#!/bin/bash
# run.sh SECONDS [JOBS] - fuzz the image reader (build/fuzz/image_fuzz) for
# SECONDS, from the seeds (fuzz/seeds.sh, made once into build/fuzz/seeds)
# and the corpus it grows (FUZZ_CORPUS, default build/fuzz/corpus).
# Limits: no allocation of 256 MiB or more, 384 MiB of RSS in all (the
# fuzzer's corpus and ASan's shadow included: its quarantine is cut to
# 32 MiB), 1 s an input (FUZZ_TIMEOUT to raise it on a loaded machine).  A crash, a sanitizer report, a leak or a limit broken
# leaves its input in build/fuzz/ (crash-*, leak-*, oom-*, timeout-*) and
# fails.  Prints the number of inputs run.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build/fuzz
secs=${1:-60}
jobs=${2:-1}
[ -d "$B/seeds" ] && ls "$B/seeds"/*.img > /dev/null 2>&1 ||
	bash "$ROOT/fuzz/seeds.sh" "$B/seeds" || exit 1
corpus=${FUZZ_CORPUS:-$B/corpus}
mkdir -p "$corpus"
cd "$B"
log=${FUZZ_LOG:-$B/fuzz.log}
# the caller's options first, then ours: a test suite's ASAN_OPTIONS
# (tests/lib.sh) would leave the default 256 MiB quarantine, which alone
# breaks the RSS limit
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:quarantine_size_mb=32 \
"$B/image_fuzz" -max_total_time="$secs" -rss_limit_mb=384 -malloc_limit_mb=256 \
	-timeout="${FUZZ_TIMEOUT:-1}" -max_len=4194304 -len_control=0 \
	-print_final_stats=1 $([ "$jobs" -gt 1 ] && echo "-jobs=$jobs -workers=$jobs") \
	"$corpus" "$B/seeds" > "$log" 2>&1
rc=$?
[ "$jobs" -gt 1 ] && cat "$B"/fuzz-*.log >> "$log" 2>/dev/null
grep -h "stat::number_of_executed_units" "$log" |
	awk '{ n += $2 } END { printf "fuzz: %d inputs in '"$secs"' s\n", n }'
if [ $rc != 0 ]; then
	grep -h -m3 "ERROR\|SUMMARY\|Test unit written" "$log"
	echo "fuzz: FAILED (log: $log)"
fi
exit $rc
