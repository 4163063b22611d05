/* packet_sock.c - AF_PACKET sockets on lo.
 * rx: SOCK_RAW of ethertype 0x88b5 bound to lo, TPACKET_V2, an RX and a TX
 *     ring mapped at one address, PACKET_AUXDATA, a promiscuous
 *     membership; after restart its ring, at the same address, is the new
 *     socket's: a frame we send shows up in it.
 * dg: SOCK_DGRAM bound to lo, PACKET_ORIGDEV, PACKET_RESERVE, a multicast
 *     membership added twice, a fanout group (HASH, DEFRAG), a classic BPF
 *     filter, SO_RCVBUF.
 * v3: TPACKET_V3 RX ring not mapped (its size: mmap of exactly it works).
 * sp: SOCK_PACKET bound to "lo"; sp2 SOCK_PACKET not bound. */
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "tp.h"

#define PROTO	0x88b5		/* local experimental ethertype */
#define BLOCK	16384
#define FRAME	2048
#define NFRAMES	(BLOCK / FRAME)

static uint8_t mcaddr[6] = { 0x01, 0x00, 0x5e, 0x7f };	/* then our pid */
static struct sock_filter insns[] = {
	{ BPF_LD | BPF_H | BPF_ABS, 0, 0, 12 },
	{ BPF_JMP | BPF_JEQ | BPF_K, 0, 1, PROTO },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },
	{ BPF_RET | BPF_K, 0, 0, 0 },
};

/* lo has our multicast address (the kernel's count of it is not shown:
 * a membership added twice is there until dropped twice) */
static bool mc_on_lo(void)
{
	char line[256], want[16];
	FILE *f = fopen("/proc/net/dev_mcast", "r");
	bool found = false;

	for (int i = 0; i < 6; i++)
		sprintf(want + 2 * i, "%02x", mcaddr[i]);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " lo ") && strstr(line, want))
			found = true;
	if (f)
		fclose(f);
	return found;
}

static int opt(int sk, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(sk, SOL_PACKET, name, &v, &l))
		return -errno;
	return v;
}

static void set(int sk, int level, int name, int v)
{
	if (setsockopt(sk, level, name, &v, sizeof(v)))
		printf("setsockopt %d/%d: %s\n", level, name, strerror(errno)), exit(1);
}

static int mc(int sk, int op, int type, const uint8_t *addr)
{
	struct packet_mreq m = { .mr_ifindex = 1, .mr_type = type, .mr_alen = addr ? 6 : 0 };

	if (addr)
		memcpy(m.mr_address, addr, 6);
	return setsockopt(sk, SOL_PACKET, op, &m, sizeof(m)) ? -errno : 0;
}

static void ring(int sk, int name, int nblocks, int tmo)
{
	struct tpacket_req3 r = { BLOCK, nblocks, FRAME, NFRAMES * nblocks, tmo, 0, 0 };

	if (setsockopt(sk, SOL_PACKET, name, &r, sizeof(r)))
		printf("ring %d: %s\n", name, strerror(errno)), exit(1);
}

static void bind_ll(int sk, int proto)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_protocol = htons(proto),
				 .sll_ifindex = 1 };

	if (bind(sk, (void *)&a, sizeof(a)))
		printf("bind: %s\n", strerror(errno)), exit(1);
}

/* Our frame, sent on lo, lands in rx's ring (mapped at @m). */
static bool frame_arrives(int dg, char *m)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_protocol = htons(PROTO),
				  .sll_ifindex = 1, .sll_halen = 6 };
	char msg[32];

	snprintf(msg, sizeof(msg), "ckpt-%d", getpid());
	for (int tries = 0; tries < 50; tries++) {
		if (sendto(dg, msg, sizeof(msg), 0, (void *)&to, sizeof(to)) < 0)
			return false;
		usleep(20000);
		for (int i = 0; i < NFRAMES * 2; i++) {
			volatile struct tpacket2_hdr *h = (void *)(m + i * FRAME);

			if (!(h->tp_status & TP_STATUS_USER))
				continue;
			if (!memcmp((char *)h + h->tp_mac + 14, msg, strlen(msg)))
				return true;
			h->tp_status = TP_STATUS_KERNEL;	/* someone else's */
		}
	}
	return false;
}

static void check_map(void *m, int sk)
{
	char line[512], want[64];
	struct stat st;
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	fstat(sk, &st);
	snprintf(want, sizeof(want), "%lx-", (unsigned long)m);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)) &&
		    strtoull(strchr(strchr(strchr(strchr(line, ' ') + 1, ' ') + 1, ' ') + 1, ' '),
			     NULL, 10) == st.st_ino)
			found = true;
	if (f)
		fclose(f);
	tp_check(found, "the ring mapping at %p is not of socket %lu", m, (unsigned long)st.st_ino);
}

int main(int argc, char **argv)
{
	int rx, dg, v3, sp, sp2, fan, rb = 0;
	struct sock_fprog prog = { 4, insns };
	struct sock_filter got[8];
	socklen_t l = sizeof(rb);
	struct sockaddr sa = { .sa_family = AF_PACKET };
	char *m, *m3;

	tp_init(argc, argv);
	rx = socket(AF_PACKET, SOCK_RAW, htons(PROTO));
	dg = socket(AF_PACKET, SOCK_DGRAM, htons(PROTO));
	v3 = socket(AF_PACKET, SOCK_RAW, 0);
	sp = socket(AF_PACKET, SOCK_PACKET, htons(ETH_P_ALL));
	sp2 = socket(AF_PACKET, SOCK_PACKET, htons(ETH_P_ALL));
	if (rx < 0 || dg < 0 || v3 < 0 || sp < 0 || sp2 < 0)
		return printf("socket: %s\n", strerror(errno)), 1;
	set(rx, SOL_PACKET, PACKET_VERSION, TPACKET_V2);
	set(rx, SOL_PACKET, PACKET_AUXDATA, 1);
	ring(rx, PACKET_RX_RING, 1, 0);
	ring(rx, PACKET_TX_RING, 1, 0);
	bind_ll(rx, PROTO);
	if (mc(rx, PACKET_ADD_MEMBERSHIP, PACKET_MR_PROMISC, NULL))
		return printf("promisc: %s\n", strerror(errno)), 1;
	m = mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, rx, 0);
	if (m == MAP_FAILED)
		return printf("mmap: %s\n", strerror(errno)), 1;

	mcaddr[4] = getpid() >> 8;
	mcaddr[5] = getpid();
	set(dg, SOL_PACKET, PACKET_RESERVE, 40);
	set(dg, SOL_PACKET, PACKET_ORIGDEV, 1);
	set(dg, SOL_SOCKET, SO_RCVBUF, 123456);
	bind_ll(dg, 0);
	if (mc(dg, PACKET_ADD_MEMBERSHIP, PACKET_MR_MULTICAST, mcaddr) ||
	    mc(dg, PACKET_ADD_MEMBERSHIP, PACKET_MR_MULTICAST, mcaddr))
		return printf("multicast: %s\n", strerror(errno)), 1;
	fan = (getpid() & 0xffff) | (PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG) << 16;
	set(dg, SOL_PACKET, PACKET_FANOUT, fan);
	if (setsockopt(dg, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		return printf("filter: %s\n", strerror(errno)), 1;
	getsockopt(dg, SOL_SOCKET, SO_RCVBUF, &rb, &l);

	set(v3, SOL_PACKET, PACKET_VERSION, TPACKET_V3);
	ring(v3, PACKET_RX_RING, 2, 60);

	strcpy(sa.sa_data, "lo");
	if (bind(sp, &sa, sizeof(sa)))
		return printf("bind SOCK_PACKET: %s\n", strerror(errno)), 1;

	tp_ready();
	tp_wait_go();

	check_map(m, rx);
	tp_check(opt(rx, PACKET_VERSION) == TPACKET_V2, "rx version %d", opt(rx, PACKET_VERSION));
	tp_check(opt(rx, PACKET_AUXDATA) == 1, "rx auxdata off");
	tp_check(mc(rx, PACKET_DROP_MEMBERSHIP, PACKET_MR_PROMISC, NULL) == 0,
		 "rx promiscuous membership lost");
	tp_check(frame_arrives(dg, m), "a frame sent on lo did not show in rx's mapped ring");

	tp_check(opt(dg, PACKET_RESERVE) == 40, "dg reserve %d", opt(dg, PACKET_RESERVE));
	tp_check(opt(dg, PACKET_ORIGDEV) == 1, "dg origdev off");
	tp_check(opt(dg, PACKET_FANOUT) == fan, "dg fanout 0x%x, want 0x%x", opt(dg, PACKET_FANOUT), fan);
	tp_check(mc_on_lo(), "dg's multicast membership lost");
	tp_check(!mc(dg, PACKET_DROP_MEMBERSHIP, PACKET_MR_MULTICAST, mcaddr) && mc_on_lo(),
		 "dg's multicast membership, added twice, gone once dropped once");
	tp_check(!mc(dg, PACKET_DROP_MEMBERSHIP, PACKET_MR_MULTICAST, mcaddr) && !mc_on_lo(),
		 "dg's multicast membership, added twice, still there once dropped twice");
	l = 8;
	tp_check(!getsockopt(dg, SOL_SOCKET, SO_GET_FILTER, got, &l) && l == 4 &&
		 !memcmp(got, insns, sizeof(insns)), "dg's filter lost");
	int rb2 = 0;
	l = sizeof(rb2);
	getsockopt(dg, SOL_SOCKET, SO_RCVBUF, &rb2, &l);
	tp_check(rb2 == rb, "dg rcvbuf %d, want %d", rb2, rb);

	tp_check(opt(v3, PACKET_VERSION) == TPACKET_V3, "v3 version %d", opt(v3, PACKET_VERSION));
	m3 = mmap(NULL, 3 * BLOCK, PROT_READ, MAP_SHARED, v3, 0);
	tp_check(m3 == MAP_FAILED, "v3's ring is not 2 blocks");
	m3 = mmap(NULL, 2 * BLOCK, PROT_READ, MAP_SHARED, v3, 0);
	tp_check(m3 != MAP_FAILED, "v3's ring of 2 blocks: %s", strerror(errno));

	l = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	tp_check(!getsockname(sp, &sa, &l) && !strcmp(sa.sa_data, "lo"),
		 "SOCK_PACKET bound to '%s', not lo", sa.sa_data);
	l = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	tp_check(!getsockname(sp2, &sa, &l) && !sa.sa_data[0],
		 "unbound SOCK_PACKET bound to '%s'", sa.sa_data);
	return tp_done();
}
