/* sockhold.c - a target holding a packet or netlink socket in a state
 * ckpt refuses (tests/cases/packet.sh), as holder.c's protocol: READY,
 * then after GOFILE exists, PASS if the state is still as it was.
 * usage: sockhold MODE GOFILE
 * MODE: nlqueued (a NETLINK_USERSOCK socket with a message unread),
 *       txpending (a packet socket's TX ring with a frame to be sent),
 *       ringpart (half of a packet socket's RX ring unmapped),
 *       nlbound (a netlink socket bound to portid pid + 0x30000, which
 *       packet.sh takes while the image is restarted) */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096

static int nl_bound(unsigned int portid)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = portid };
	int sk = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);

	if (sk < 0 || bind(sk, (void *)&a, sizeof(a)))
		printf("netlink: %s\n", strerror(errno)), exit(1);
	return sk;
}

static int packet_ring(int name, int blocks, char **m)
{
	struct tpacket_req r = { BLOCK, blocks, BLOCK / 2, blocks * 2 };
	int sk = socket(AF_PACKET, SOCK_RAW, 0), v = TPACKET_V2;

	if (sk < 0 || setsockopt(sk, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(sk, SOL_PACKET, name, &r, sizeof(r)))
		printf("packet: %s\n", strerror(errno)), exit(1);
	*m = mmap(NULL, blocks * BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, sk, 0);
	if (*m == MAP_FAILED)
		printf("mmap: %s\n", strerror(errno)), exit(1);
	return sk;
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	unsigned int me = getpid() + 0x20000;
	char msg[16] = "queued", got[16] = "", *m = NULL;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = me };
	volatile struct tpacket2_hdr *h;
	int sk = -1, ok = 0;

	if (argc < 3)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(argv[1], "nlqueued")) {
		sk = nl_bound(me);
		if (sendto(socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK), msg, sizeof(msg), 0,
			   (void *)&to, sizeof(to)) < 0)
			return printf("send: %s\n", strerror(errno)), 1;
	} else if (!strcmp(argv[1], "txpending")) {
		sk = packet_ring(PACKET_TX_RING, 1, &m);
		h = (void *)m;
		h->tp_len = 60;
		h->tp_status = TP_STATUS_SEND_REQUEST;	/* and no send() */
	} else if (!strcmp(argv[1], "ringpart")) {
		sk = packet_ring(PACKET_RX_RING, 2, &m);
		munmap(m + BLOCK, BLOCK);
	} else if (!strcmp(argv[1], "nlbound")) {
		sk = nl_bound(getpid() + 0x30000);
	} else {
		return 2;
	}
	printf("READY %d\n", getpid());
	while (access(argv[2], F_OK))
		nanosleep(&ts, NULL);
	if (!strcmp(argv[1], "nlqueued"))
		ok = recv(sk, got, sizeof(got), MSG_DONTWAIT) == sizeof(got) && !strcmp(got, msg);
	else if (!strcmp(argv[1], "txpending"))
		ok = ((volatile struct tpacket2_hdr *)m)->tp_status == TP_STATUS_SEND_REQUEST;
	else if (!strcmp(argv[1], "ringpart"))
		ok = ((volatile struct tpacket2_hdr *)m)->tp_status == TP_STATUS_KERNEL;
	else {
		struct sockaddr_nl a;
		socklen_t l = sizeof(a);

		ok = !getsockname(sk, (void *)&a, &l) && a.nl_pid == (unsigned int)getpid() + 0x30000;
	}
	printf(ok ? "PASS\n" : "FAIL: %s: not as it was\n", argv[1]);
	return !ok;
}
