# state.sh - the state tests (tests/README.md: the protocol of a state
# test): state_NAME for each program of tests/progs, state32_NAME for the
# same built 32-bit and those of tests/progs32.
state_needs() {	# NAME: what else the program needs, beyond root
	case $1 in
	inet|tcp_bigq) echo needs iptables tcp_repair group iptables ;;	# --tcp-established
	sysvshm) echo group sysvshm ;;		# global keys and ids
	mixed_tree) echo needs ia32 ;;		# a 32-bit child
	cgroup) echo needs cgroup group cgroup ;;	# groups of a shared hierarchy
	sched_deadline) echo needs deadline ;;	# the kernel's admission
	esac
}
for p in "$PROGS"/*; do
	[ -x "$p" ] || continue
	n=$(basename "$p")
	t state_$n $(state_needs $n)
	eval "test_state_$n() { state_test '$p'; }"
done
for p in "$PROGS32"/*; do
	[ -x "$p" ] || continue
	n=$(basename "$p")
	t state32_$n needs ia32 $(state_needs $n)
	eval "test_state32_$n() { state_test '$p'; }"
done
