# misc.sh - the unit tests of tests/unit/ and the demo.
t unit                     noroot
t demo

# The demo, non-interactively.
test_demo() {
	ckpt demo > $WORK/demo.out 2>&1 || { cat $WORK/demo.out; return 1; }
	grep -q "finished all 30 steps" $WORK/demo.out
}

test_unit() {
	local u rc=0
	for u in build/test/unit/*; do
		[ -x "$u" ] || continue
		"$u" || rc=1
	done
	return $rc
}
