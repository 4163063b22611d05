# state.sh - the state tests (tests/README.md: the protocol of a state
# test): state_NAME for each program of tests/progs, state32_NAME for the
# same built 32-bit and those of tests/progs32.
# Forks cost milliseconds each on some machines, and every test loads
# this file: no command substitution here.
state_needs() {	# NAME: sets NEEDS, what else the program needs, beyond root
	case $1 in
	inet|tcp_bigq) NEEDS="needs iptables tcp_repair group iptables" ;;	# --tcp-established
	sysvshm) NEEDS="group sysvshm" ;;		# global keys and ids
	mixed_tree) NEEDS="needs ia32" ;;		# a 32-bit child
	cgroup) NEEDS="needs cgroup group cgroup" ;;	# groups of a shared hierarchy
	sched_deadline) NEEDS="needs deadline" ;;	# the kernel's admission
	*) NEEDS= ;;
	esac
}
for p in "$PROGS"/*; do
	[ -x "$p" ] || continue
	n=${p##*/}
	state_needs $n
	t state_$n $NEEDS
	eval "test_state_$n() { state_test '$p'; }"
done
for p in "$PROGS32"/*; do
	[ -x "$p" ] || continue
	n=${p##*/}
	state_needs $n
	t state32_$n needs ia32 $NEEDS
	eval "test_state32_$n() { state_test '$p'; }"
done
