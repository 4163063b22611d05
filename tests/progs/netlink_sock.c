/* netlink_sock.c - AF_NETLINK sockets of NETLINK_USERSOCK (no kernel
 * traffic on it), checked after restart by what they carry.
 * ssk: bound to portid = our pid + 0x10000, groups 5 (by bind) and 32 (by
 *      NETLINK_ADD_MEMBERSHIP), NETLINK_PKTINFO, NETLINK_NO_ENOBUFS, a
 *      classic BPF filter, SO_RCVBUF.
 * bsk: bound to group 32 only (its portid chosen by the kernel), the
 *      same filter.
 * csk: connected to ssk's portid and group 32 (so autobound).
 * dsk: SOCK_DGRAM, not bound. */
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tp.h"

#include <arpa/inet.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Only messages of our own type: other tests (this one built 32-bit, run
 * beside it) send to the same groups. */
static uint16_t tag;
static struct sock_filter insns[] = {
	{ BPF_LD | BPF_H | BPF_ABS, 0, 0, 4 },	/* nlmsg_type, read big-endian */
	{ BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0 },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },
	{ BPF_RET | BPF_K, 0, 0, 0 },
};

static uint32_t portid_of(int sk, bool peer, uint32_t *groups)
{
	struct sockaddr_nl a = { 0 };
	socklen_t l = sizeof(a);

	if (peer ? getpeername(sk, (void *)&a, &l) : getsockname(sk, (void *)&a, &l))
		return 0;
	if (groups)
		*groups = a.nl_groups;
	return a.nl_pid;
}

static int nlopt(int sk, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	return getsockopt(sk, SOL_NETLINK, name, &v, &l) ? -errno : v;
}

static void set(int sk, int level, int name, int v)
{
	if (setsockopt(sk, level, name, &v, sizeof(v)))
		printf("setsockopt %d/%d: %s\n", level, name, strerror(errno)), exit(1);
}

/* @from sends @seq, to @to's portid if @to, else to where it is connected;
 * @at gets it within a second. */
static bool carries(int from, uint32_t to, int at, uint32_t seq)
{
	struct {
		struct nlmsghdr h;
		uint32_t body;
	} m = { { sizeof(m), tag, NLM_F_REQUEST, seq, 0 }, seq }, r;
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = to };
	struct pollfd pf = { .fd = at, .events = POLLIN };

	if (sendto(from, &m, sizeof(m), 0, to ? (void *)&a : NULL, to ? sizeof(a) : 0) < 0) {
		printf("send: %s\n", strerror(errno));
		return false;
	}
	/* earlier messages may wait before it (a connected socket's go to
	 * its peer and its group) */
	while (poll(&pf, 1, 1000) == 1)
		if (recv(at, &r, sizeof(r), MSG_DONTWAIT) == sizeof(r) &&
		    r.h.nlmsg_seq == seq && r.body == seq)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	struct sock_fprog prog = { 4, insns };
	struct sock_filter got[8];
	uint32_t me = getpid() + 0x10000, bport, cport, groups, g[4] = { 0 };
	int ssk, bsk, csk, dsk, rb = 0, rb2 = 0;
	socklen_t l = sizeof(rb);

	tp_init(argc, argv);
	tag = 0x1000 + getpid() % 0xe000;
	insns[1].k = htons(tag);	/* its host-order bytes, read big-endian */
	ssk = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
	bsk = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
	csk = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
	dsk = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_USERSOCK);
	if (ssk < 0 || bsk < 0 || csk < 0 || dsk < 0)
		return printf("socket: %s\n", strerror(errno)), 1;
	a.nl_pid = me;
	a.nl_groups = 1 << 4;
	if (bind(ssk, (void *)&a, sizeof(a)))
		return printf("bind: %s\n", strerror(errno)), 1;
	set(ssk, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 32);
	set(ssk, SOL_NETLINK, NETLINK_PKTINFO, 1);
	set(ssk, SOL_NETLINK, NETLINK_NO_ENOBUFS, 1);
	set(ssk, SOL_SOCKET, SO_RCVBUF, 77777);
	getsockopt(ssk, SOL_SOCKET, SO_RCVBUF, &rb, &l);
	if (setsockopt(ssk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    setsockopt(bsk, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		return printf("filter: %s\n", strerror(errno)), 1;
	a.nl_pid = 0;
	a.nl_groups = 1u << 31;
	if (bind(bsk, (void *)&a, sizeof(a)))
		return printf("bind groups: %s\n", strerror(errno)), 1;
	a.nl_pid = me;
	if (connect(csk, (void *)&a, sizeof(a)))
		return printf("connect: %s\n", strerror(errno)), 1;
	bport = portid_of(bsk, false, NULL);
	cport = portid_of(csk, false, NULL);

	tp_ready();
	tp_wait_go();

	tp_check(portid_of(ssk, false, &groups) == me && groups == (1u << 4 | 1u << 31),
		 "ssk bound to %u groups 0x%x", portid_of(ssk, false, NULL), groups);
	l = sizeof(g);
	tp_check(!getsockopt(ssk, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &l) &&
		 g[0] == (1u << 4 | 1u << 31), "ssk's groups 0x%x", g[0]);
	tp_check(nlopt(ssk, NETLINK_PKTINFO) == 1 && nlopt(ssk, NETLINK_NO_ENOBUFS) == 1 &&
		 nlopt(ssk, NETLINK_BROADCAST_ERROR) == 0, "ssk's options");
	l = sizeof(rb2);
	getsockopt(ssk, SOL_SOCKET, SO_RCVBUF, &rb2, &l);
	tp_check(rb2 == rb, "ssk rcvbuf %d, want %d", rb2, rb);
	l = 8;
	tp_check(!getsockopt(ssk, SOL_SOCKET, SO_GET_FILTER, got, &l) && l == 4 &&
		 !memcmp(got, insns, sizeof(insns)), "ssk's filter lost");
	tp_check(portid_of(bsk, false, &groups) == bport && groups == 1u << 31,
		 "bsk bound to %u groups 0x%x, want %u", portid_of(bsk, false, NULL), groups, bport);
	tp_check(portid_of(csk, false, NULL) == cport, "csk's portid %u, want %u",
		 portid_of(csk, false, NULL), cport);
	tp_check(portid_of(csk, true, &groups) == me && groups == 1u << 31,
		 "csk connected to %u group 0x%x", portid_of(csk, true, NULL), groups);
	tp_check(portid_of(dsk, false, NULL) == 0, "dsk bound");
	tp_check(carries(csk, 0, ssk, 1), "csk to ssk");
	tp_check(carries(csk, 0, bsk, 2), "csk to group 32 (bsk)");
	tp_check(carries(dsk, me, ssk, 3), "dsk to ssk's portid");
	tp_check(carries(ssk, cport, csk, 4), "ssk to csk's portid");
	return tp_done();
}
