/* netns_test.c - the netns kind's records and, as a driver for
 * tests/cases/netns.sh, its save and make of a whole network namespace
 * outside any checkpoint:
 *
 *   netns_test                        the records' checks (unit tests)
 *   netns_test save FILE [NETNS]      the namespace (ckpt's, or the one
 *                                     at path NETNS) into FILE
 *   netns_test restore FILE [NETNS]   made again in it from FILE; a
 *                                     veth's outer end in ours
 *   netns_test show FILE              its records as `ckpt info` shows
 *                                     them (which wants a whole image)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "kinds.h"
#include "kinds/netns.h"

#include "check.h"

static int enter(struct ckpt_log *log, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return log_err(log, errno, "joining %s:", path);
	close(fd);
	return 0;
}

static unsigned long own_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : st.st_ino;
}

static int save(struct ckpt_log *log, const char *file, const char *ns)
{
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR };
	struct img_writer w;
	struct netns_io io = { .log = log, .w = &w, .pid = getpid() };
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;

	if (fd < 0)
		return log_err(log, errno, "%s:", file);
	ret = ns ? enter(log, ns) : 0;
	io.ino = own_ino();
	if (!ret)
		ret = iw_init(&w, fd, log);
	if (!ret) {
		ret = iw_record(&w, REC_HEAD, &h, sizeof(h));
		if (!ret)
			ret = netns_save(&io);
		if (!ret)
			ret = iw_tail(&w);
		iw_free(&w);
	}
	close(fd);
	return ret;
}

static int load(struct ckpt_log *log, const char *file, struct netns_img *m)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), ret;
	struct img_reader r;
	struct rec rec;

	if (fd < 0)
		return log_err(log, errno, "%s:", file);
	ret = ir_init(&r, fd, log);
	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		ret = 0;
		if (rec.type >= REC_NET_LINK && rec.type <= REC_NET_BRPORT)
			ret = netns_load_rec(log, m, &rec);
		free(rec.data);
	}
	ir_free(&r);
	close(fd);
	return ret ? ret : netns_img_check(log, m);
}

static int restore(struct ckpt_log *log, const char *file, const char *ns)
{
	struct netns_img m = { 0 };
	struct netns_io io = { .log = log, .pid = getpid() };
	int ret = load(log, file, &m);

	if (!ret) {
		m.caller_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		m.caller_open = m.caller_net >= 0;
		ret = ns ? enter(log, ns) : 0;
	}
	io.ino = own_ino();
	if (!ret)
		ret = netns_make(&io, &m);
	netns_img_free(&m);
	return ret;
}

static int show(struct ckpt_log *log, const char *file)
{
	struct info_out o = { .f = stdout };
	int fd = open(file, O_RDONLY | O_CLOEXEC), ret;
	struct img_reader r;
	struct rec rec;

	if (fd < 0)
		return log_err(log, errno, "%s:", file);
	ret = ir_init(&r, fd, log);
	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		ret = 0;
		if (rec.type >= REC_NET_LINK && rec.type <= REC_NET_BRPORT) {
			printf("%-12s", rec_type_name(rec.type));
			o.fields = 0;
			kind_netns.show(&o, &rec);
			printf("\n");
		}
		free(rec.data);
	}
	ir_free(&r);
	close(fd);
	return ret;
}

/* ---- unit tests: records forged, checked ---- */

static int try(struct netns_img *m, uint32_t type, const void *p, size_t n)
{
	struct ckpt_log log = { .fd = -1 };
	struct rec r = { .type = type, .len = n, .data = (void *)p, .data_len = n };

	return netns_load_rec(&log, m, &r);
}

static void test_links(void)
{
	struct netns_img m = { 0 };
	struct ckpt_log log = { .fd = -1 };
	struct rec_net_link lo = { .ifindex = 1, .kind = NET_LINK_LOOPBACK, .mtu = 65536,
				   .flags = 1, .name = "lo" };
	struct rec_net_link v0 = { .ifindex = 2, .kind = NET_LINK_VETH, .peer = 3, .mtu = 1500,
				   .addr_len = 6, .name = "v0" };
	struct rec_net_link v1 = v0, l;

	v1.ifindex = 3;
	v1.peer = 2;
	strcpy(v1.name, "v1");
	CHECK(try(&m, REC_NET_LINK, &lo, sizeof(lo)) == 0, "lo");
	CHECK(try(&m, REC_NET_LINK, &lo, sizeof(lo) - 1) == -EBADMSG, "short");
	CHECK(try(&m, REC_NET_LINK, &lo, sizeof(lo)) == -EBADMSG, "a second lo");
	l = v0, l.flags = 0x2;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "flag not saved");
	l = v0, l.addr_len = 33;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "address length");
	l = v0, l.addr[7] = 1;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "bytes past the address");
	l = v0, memset(l.name, 'a', sizeof(l.name));
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "name with no NUL");
	l = v0, l.peer = 0;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "veth outside with no peer name");
	l = v0, l.kind = NET_LINK_MACVLAN;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "macvlan without mode");
	l = v0, l.kind = 99;
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == -EBADMSG, "kind");
	CHECK(try(&m, REC_NET_LINK, &v0, sizeof(v0)) == 0, "veth end");
	CHECK(netns_img_check(&log, &m) == -EBADMSG, "veth without its peer");
	CHECK(try(&m, REC_NET_LINK, &v1, sizeof(v1)) == 0, "veth other end");
	CHECK(netns_img_check(&log, &m) == 0, "veth pair");
	l = v0, l.ifindex = 4, strcpy(l.name, "x"), l.master = 1, l.kind = NET_LINK_VETH,
		l.peer = 0, strcpy(l.peer_name, "out");
	CHECK(try(&m, REC_NET_LINK, &l, sizeof(l)) == 0, "veth to outside with a master");
	CHECK(netns_img_check(&log, &m) == -EBADMSG, "a master that is no bridge");
	netns_img_free(&m);
}

static void test_addrs_routes(void)
{
	struct netns_img m = { 0 };
	struct rec_net_addr a = { .family = AF_INET, .prefixlen = 24, .ifindex = 1,
				  .local = { 10, 0, 0, 1 }, .valid = ~0u, .preferred = ~0u }, b;
	struct rec_net_route r = { .family = AF_INET, .dst_len = 0, .type = 1, .table = 254,
				   .protocol = 3, .has = NET_ROUTE_HAS_GW, .gateway = { 10, 0, 0, 2 } },
		q;

	CHECK(try(&m, REC_NET_ADDR, &a, sizeof(a)) == 0, "address");
	b = a, b.prefixlen = 33;
	CHECK(try(&m, REC_NET_ADDR, &b, sizeof(b)) == -EBADMSG, "prefix");
	b = a, b.local[4] = 1;
	CHECK(try(&m, REC_NET_ADDR, &b, sizeof(b)) == -EBADMSG, "IPv4 address past 4 bytes");
	b = a, b.family = AF_INET6, b.has = NET_ADDR_HAS_BRD;
	CHECK(try(&m, REC_NET_ADDR, &b, sizeof(b)) == -EBADMSG, "IPv6 broadcast");
	b = a, b.preferred = 5, b.valid = 4;
	CHECK(try(&m, REC_NET_ADDR, &b, sizeof(b)) == -EBADMSG, "preferred past valid");
	b = a, b.label[0] = 'x';
	CHECK(try(&m, REC_NET_ADDR, &b, sizeof(b)) == -EBADMSG, "label not said");
	CHECK(try(&m, REC_NET_ROUTE, &r, sizeof(r)) == 0, "route");
	q = r, q.protocol = RTPROT_KERNEL;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == -EBADMSG, "kernel route");
	q = r, q.metrics[3] = 1;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == -EBADMSG, "metric not in the mask");
	q = r, q.oif = 3;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == -EBADMSG, "oif not said");
	q = r, q.family = AF_INET6, q.has |= NET_ROUTE_HAS_PREF, q.pref = 2;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == -EBADMSG, "IPv6 preference 2");
	q.pref = 3;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == 0, "IPv6 preference low");
	q = r, q.type = 0;
	CHECK(try(&m, REC_NET_ROUTE, &q, sizeof(q)) == -EBADMSG, "type");
	netns_img_free(&m);
}

static void test_sysctl_ipt(void)
{
	struct netns_img m = { 0 };
	char buf[256];
	struct rec_net_sysctl *s = (void *)buf;
	struct rec_net_iptables *p = (void *)buf;

	s->path_len = sizeof("ipv4/ip_forward");
	s->value_len = 3;
	memcpy(buf + 8, "ipv4/ip_forward", s->path_len);
	memcpy(buf + 8 + s->path_len, "1\n", 3);
	CHECK(try(&m, REC_NET_SYSCTL, buf, 8 + s->path_len + 3) == 0, "sysctl");
	CHECK(try(&m, REC_NET_SYSCTL, buf, 8 + s->path_len + 4) == -EBADMSG, "sysctl length");
	memcpy(buf + 8, "ipv4/../../x_fwd", s->path_len);
	CHECK(try(&m, REC_NET_SYSCTL, buf, 8 + s->path_len + 3) == -EBADMSG, "sysctl ..");
	memcpy(buf + 8, "bridge/x_abcdef", s->path_len);
	CHECK(try(&m, REC_NET_SYSCTL, buf, 8 + s->path_len + 3) == -EBADMSG, "not ipv4/6, core, unix");
	p->family = 4;
	p->len = 5;
	memcpy(buf + 8, "*nat\n", 5);
	CHECK(try(&m, REC_NET_IPTABLES, buf, 13) == 0, "iptables");
	CHECK(try(&m, REC_NET_IPTABLES, buf, 13) == -EBADMSG, "iptables twice");
	p->family = 5;
	CHECK(try(&m, REC_NET_IPTABLES, buf, 13) == -EBADMSG, "family");
	p->family = 6;
	buf[9] = 0;
	CHECK(try(&m, REC_NET_IPTABLES, buf, 13) == -EBADMSG, "a NUL in the text");
	netns_img_free(&m);
}

int main(int argc, char **argv)
{
	struct ckpt_log log = { .fd = 2 };

	if (argc >= 3 && !strcmp(argv[1], "save"))
		return save(&log, argv[2], argc > 3 ? argv[3] : NULL) ? 1 : 0;
	if (argc >= 3 && !strcmp(argv[1], "restore"))
		return restore(&log, argv[2], argc > 3 ? argv[3] : NULL) ? 1 : 0;
	if (argc >= 3 && !strcmp(argv[1], "show"))
		return show(&log, argv[2]) ? 1 : 0;
	test_links();
	test_addrs_routes();
	test_sysctl_ipt();
	printf("netns_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
