# fuzz.sh - a minute of libFuzzer over the image reader, the kinds' load()
# and checks and `ckpt info` (fuzz/image_fuzz.c, `make fuzz` for a long
# run): no crash, sanitizer report, leak, or input over the limits.
t fuzz_images timeout 400

test_fuzz_images() {
	step "build the fuzzer (clang)"
	make -s -C "$ROOT" build/fuzz/image_fuzz > $WORK/build.log 2>&1 ||
		{ tail -20 $WORK/build.log; return 1; }
	step "fuzz for 60 s"
	# a new corpus each run (the seeds are made once, in build/fuzz);
	# the machine is loaded by the other tests: 10 s an input
	FUZZ_CORPUS=$WORK/corpus FUZZ_LOG=$WORK/fuzz.log FUZZ_TIMEOUT=10 \
		bash "$ROOT/fuzz/run.sh" 60 || { tail -30 $WORK/fuzz.log; return 1; }
}
