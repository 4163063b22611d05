# timing.sh - the -v breakdown of where a checkpoint's and a restart's time
# goes (src/timing.c): present with -v, its parts adding up, absent without.
t timing_breakdown

# "ckpt: timing: WHAT T ms, a x, b y, ..., other z": the steps add up to T
timing_adds_up() {	# LOG WHAT
	awk -v what="$2" '
	$0 ~ "timing: " what " " {
		sub(/.*timing: /, ""); total = $2; sum = 0
		n = split($0, parts, ", ")
		for (i = 2; i <= n; i++) { k = split(parts[i], w, " "); sum += w[k] }
		found = 1
		d = total - sum; if (d < 0) d = -d
		if (d > 0.05 * total + 0.3) { print "steps sum to " sum " of " total; exit 1 }
	}
	END { exit found ? 0 : 1 }' "$1"
}

test_timing_breakdown() {
	local d=$WORK/timing pid
	start_holder plain $d 8 || return 1
	ckpt checkpoint --kill -v -o $d/img $pid 2> $d/cpt.log || { cat $d/cpt.log; return 1; }
	wait $pid 2>/dev/null
	gone $pid || return 1
	grep 'timing:' $d/cpt.log | sed 's/^/    /'
	timing_adds_up $d/cpt.log checkpoint || { echo "no checkpoint breakdown"; return 1; }
	grep -q 'timing: kinds (ms): .*mm [0-9]' $d/cpt.log || return 1
	grep -Eq 'timing: inside those: [1-9][0-9]* remote calls .* [1-9][0-9.]* MB of pages' \
		$d/cpt.log || return 1
	ckpt restart --detach -v $d/img > $d/pid 2> $d/rst.log || { cat $d/rst.log; return 1; }
	grep 'timing:' $d/rst.log | sed 's/^/    /'
	timing_adds_up $d/rst.log restart || { echo "no restart breakdown"; return 1; }
	grep -q 'timing: kinds (ms): .*mm [0-9]' $d/rst.log || return 1
	ckpt checkpoint -o $d/img2 $(cat $d/pid) 2> $d/quiet.log || return 1
	! grep -q timing $d/quiet.log || return 1
	touch $d/go
	gone $(cat $d/pid) || return 1
	grep -q '^PASS' $d/out
}
