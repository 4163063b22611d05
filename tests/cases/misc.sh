# misc.sh - the unit tests of tests/unit/, the demo, and the layers of
# the code (tests/layers.sh).
t unit                     noroot
t demo
t layers                   noroot

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

# Calls between the release objects go only downward: no circle between
# groups of files, no call up into an orchestrator (tests/layers.sh).
test_layers() {
	bash tests/layers.sh
}
