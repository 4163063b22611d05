/* netlock.c - the network lock: while a TCP connection is saved and
 * until it is restored, what its peer sends is dropped silently.
 *
 * Between checkpoint --kill (the socket closed in repair mode, silently)
 * and restart, nothing holds the connection: an ACK of ours the peer
 * answers, its window update or retransmission would get a RST from this
 * host, which ends the connection on the peer's side.  Dropped, they are
 * sent again, and reach the restored socket.  What the held socket sends
 * (its timers run in repair mode) is dropped too, so that the peer never
 * gets bytes the saved state calls unsent.  As CRIU does, the lock is
 * two iptables (ip6tables) rules per connection, one for the packets as
 * they come in (peer -> us), one as they go out, in a chain of its own
 * (jumped to from INPUT and OUTPUT) so that removing a lock removes
 * exactly those rules.  iptables is run with posix_spawn, no
 * shell, its output thrown away: a lock that cannot be made is the
 * caller's warning, never a failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netlock.h"

#define CHAIN	"CKPT-LOCK"
#define WAIT_S	"10"	/* for the xtables lock another iptables holds */

extern char **environ;

/* Exit status of `NAME args...`, or -errno if it could not run. */
static int spawn(const char *name, char *const argv[])
{
	static const char *const dirs[] = { "", "/usr/sbin/", "/sbin/" };
	posix_spawn_file_actions_t fa;
	int ret = ENOENT, status;
	pid_t pid = -1;

	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && ret == ENOENT; i++) {
		char path[64];

		snprintf(path, sizeof(path), "%s%s", dirs[i], name);
		ret = posix_spawnp(&pid, path, &fa, NULL, argv, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -ret;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The rule's family and addresses: an IPv6 socket talking IPv4
 * (v4-mapped addresses) gets IPv4 packets. */
static int rule_addrs(const struct rec_inet *ri, char *src, char *dst, size_t n)
{
	const uint8_t *l = ri->laddr, *r = ri->raddr;
	int family = ri->family;

	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const void *)l) &&
	    IN6_IS_ADDR_V4MAPPED((const void *)r)) {
		family = AF_INET;
		l += 12;
		r += 12;
	}
	if (!inet_ntop(family, r, src, n) || !inet_ntop(family, l, dst, n))
		return -EINVAL;
	return family;
}

/* iptables -w S OP CKPT-LOCK <the connection's incoming packets> -j DROP
 * (@out: its outgoing ones), or with @marked: the incoming ones with
 * NETLOCK_MARK -j ACCEPT */
static int rule(const struct rec_inet *ri, const char *op, bool marked, bool out,
		char *why, size_t n)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], sport[8], dport[8];
	int family = out ? rule_addrs(ri, dst, src, sizeof(src)) :
			   rule_addrs(ri, src, dst, sizeof(src)), ret;
	const char *cmd = family == AF_INET6 ? "ip6tables" : "iptables";

	if (family < 0) {
		snprintf(why, n, "bad address");
		return family;
	}
	snprintf(sport, sizeof(sport), "%u", out ? ri->lport : ri->rport);
	snprintf(dport, sizeof(dport), "%u", out ? ri->rport : ri->lport);
	if (marked)
		ret = spawn(cmd, (char *const[]){ (char *)cmd, "-w", WAIT_S, (char *)op,
			CHAIN, "-p", "tcp", "-s", src, "--sport", sport, "-d", dst,
			"--dport", dport, "-m", "mark", "--mark", NETLOCK_MARK_STR,
			"-j", "ACCEPT", NULL });
	else
		ret = spawn(cmd, (char *const[]){ (char *)cmd, "-w", WAIT_S, (char *)op,
			CHAIN, "-p", "tcp", "-s", src, "--sport", sport, "-d", dst,
			"--dport", dport, "-j", "DROP", NULL });
	if (ret < 0)
		snprintf(why, n, "%s: %s", cmd, strerror(-ret));
	else if (ret)
		snprintf(why, n, "%s %s %s ...: exit status %d", cmd, op, CHAIN, ret);
	return ret;
}

/* @hook's jump to CKPT-LOCK, once. */
static int make_jump(const char *cmd, const char *hook, char *why, size_t n)
{
	char *jump[] = { (char *)cmd, "-w", WAIT_S, "-C", (char *)hook, "-j", CHAIN, NULL };
	int ret = spawn(cmd, jump);

	if (ret == 1) {		/* no such rule yet */
		jump[3] = "-I";
		ret = spawn(cmd, jump);
	}
	if (ret < 0)
		snprintf(why, n, "%s: %s", cmd, strerror(-ret));
	else if (ret)
		snprintf(why, n, "%s %s -j %s: exit status %d", cmd, hook, CHAIN, ret);
	return ret;
}

/* CKPT-LOCK, jumped to from INPUT and OUTPUT. */
static int make_chain(int family, char *why, size_t n)
{
	const char *cmd = family == AF_INET6 ? "ip6tables" : "iptables";

	spawn(cmd, (char *const[]){ (char *)cmd, "-w", WAIT_S, "-N", CHAIN, NULL });
	return make_jump(cmd, "INPUT", why, n) ?: make_jump(cmd, "OUTPUT", why, n);
}

/* Both directions' rules: incoming (what the peer sends), then outgoing
 * (what the held socket's own timers may still send: a loss probe or a
 * retransmission of bytes it had not sent when it was read would reach
 * a peer whose state is saved after, and that peer would then have
 * bytes its restored sender thinks unsent: acknowledgements past its
 * snd_nxt, answered with challenge ACKs, and the connection stalls). */
static int both_rules(const struct rec_inet *ri, char *why, size_t n)
{
	int ret = rule(ri, "-A", false, false, why, n);

	if (!ret && (ret = rule(ri, "-A", false, true, why, n)))
		rule(ri, "-D", false, false, why, n);
	return ret;
}

int netlock_add(const struct rec_inet *ri, bool chain_ready, char *why,
		size_t n)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	int family = rule_addrs(ri, a, b, sizeof(a)), ret;

	if (family < 0)
		return rule(ri, "-A", false, false, why, n);	/* says why */
	/* a chain made for an earlier connection may be the other family's */
	if (chain_ready && !both_rules(ri, why, n))
		return 0;
	ret = make_chain(family, why, n);
	return ret ? ret : both_rules(ri, why, n);
}

int netlock_del(const struct rec_inet *ri, char *why, size_t n)
{
	/* (a lock made before the outgoing rule was has none) */
	char out_why[160];
	int ret = rule(ri, "-D", false, false, why, n);

	rule(ri, "-D", false, true, out_why, sizeof(out_why));
	return ret;
}

int netlock_pass_marked(const struct rec_inet *ri, bool on, char *why, size_t n)
{
	return rule(ri, on ? "-I" : "-D", true, false, why, n);
}
