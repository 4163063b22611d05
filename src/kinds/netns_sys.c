/* netns_sys.c - a network namespace's sysctls and its firewall.
 *
 * Sysctls: every file under /proc/sys/net/ipv4, ipv6, core and unix
 * (the namespace's: a new namespace has them all, writable) its owner
 * may read and write (conf/all, conf/default, conf/<dev>, neigh/...,
 * somaxconn, max_dgram_qlen...), saved as read; restart writes those
 * whose value in the new namespace differs, in the saved order: in each
 * directory "all" and "default" before the devices, so that what the
 * first spread to every device the device's own value then corrects.
 * One that cannot be read (an unset stable_secret) has no value to save.
 *
 * Firewall: `iptables-save` and `ip6tables-save`, the host's binaries,
 * run as children of ckpt in the namespace ckpt is in; restart feeds
 * their output to `iptables-restore`.  nftables tables of nft's own
 * (not iptables-nft's) are `nft list ruleset`'s blocks of them, which
 * restart feeds to `nft -f`.  A namespace with tables (legacy
 * ones, iptables-nft's in nftables: netns_check.c) and no binary to save
 * them, or legacy tables beside iptables-nft's, fails the checkpoint.
 * iptables-save of nftables rules iptables cannot say (a set, made with
 * nft in an iptables table) silently says less (the match dropped, the
 * verdict kept): so where nft is, the text is restored in a namespace of
 * a child's own and both rulesets listed and compared, and a difference
 * fails the checkpoint.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns.h"

#define SYSCTL_ROOT	"/proc/sys/net/"
#define SYSCTL_MAX	4096	/* bytes of a value */

/* "all", then "default", then the rest by name. */
static int rank(const char *n)
{
	return !strcmp(n, "all") ? 0 : !strcmp(n, "default") ? 1 : 2;
}

static int by_rank(const struct dirent **a, const struct dirent **b)
{
	int ra = rank((*a)->d_name), rb = rank((*b)->d_name);

	return ra != rb ? ra - rb : strcmp((*a)->d_name, (*b)->d_name);
}

static int no_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

/* The value of a sysctl: its length, or -errno. */
static ssize_t read_value(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, n - 1);
	if (len < 0)
		len = -errno;
	close(fd);
	if (len >= 0)
		buf[len] = 0;
	return len;
}

static int sysctl_file(struct netns_io *io, const char *path, char *buf)
{
	struct rec_net_sysctl r;
	const char *rel = path + strlen(SYSCTL_ROOT);
	ssize_t len = read_value(path, buf, SYSCTL_MAX);
	int ret;

	if (len < 0)	/* EIO: an unset secret; nothing to save */
		return 0;
	if (len >= SYSCTL_MAX - 1 || strlen(buf) != (size_t)len)
		return log_err(io->log, EFBIG, "pid %d: net namespace net:[%lu]: %s: a value ckpt cannot save",
			       io->pid, io->ino, path);
	r.path_len = strlen(rel) + 1;
	r.value_len = len + 1;
	ret = iw_begin(io->w, REC_NET_SYSCTL, sizeof(r) + r.path_len + r.value_len);
	if (!ret)
		ret = iw_write(io->w, &r, sizeof(r));
	if (!ret)
		ret = iw_write(io->w, rel, r.path_len);
	if (!ret)
		ret = iw_write(io->w, buf, r.value_len);
	return ret ? ret : iw_end(io->w);
}

static int sysctl_dir(struct netns_io *io, char *path, size_t len, char *buf, int depth)
{
	struct dirent **ents;
	int n = scandir(path, &ents, no_dots, by_rank), ret = 0;

	if (n < 0)
		return errno == ENOENT ? 0 : log_err(io->log, errno, "pid %d: %s:", io->pid, path);
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (!ret && len + strlen(ents[i]->d_name) + 2 < PATH_MAX) {
			snprintf(path + len, PATH_MAX - len, "/%s", ents[i]->d_name);
			if (lstat(path, &st))
				ret = log_err(io->log, errno, "pid %d: %s:", io->pid, path);
			else if (S_ISDIR(st.st_mode) && depth < 8)
				ret = sysctl_dir(io, path, strlen(path), buf, depth + 1);
			else if (S_ISREG(st.st_mode) && (st.st_mode & S_IRUSR) && (st.st_mode & S_IWUSR))
				ret = sysctl_file(io, path, buf);
			path[len] = 0;
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int netns_sysctls_save(struct netns_io *io)
{
	static const char *const tops[] = { "ipv4", "ipv6", "core", "unix" };
	char path[PATH_MAX], *buf = malloc(SYSCTL_MAX);
	int ret = buf ? 0 : log_err(io->log, ENOMEM, "sysctls:");

	for (int i = 0; i < 4 && !ret; i++) {
		snprintf(path, sizeof(path), SYSCTL_ROOT "%s", tops[i]);
		ret = sysctl_dir(io, path, strlen(path), buf, 0);
	}
	free(buf);
	return ret;
}

int netns_sysctls_make(struct netns_io *io, const struct netns_img *m)
{
	char path[PATH_MAX], cur[SYSCTL_MAX];

	for (size_t i = 0; i < m->nr_sysctls; i++) {
		const char *v = m->sysctl_val[i];
		ssize_t len;
		int fd;

		snprintf(path, sizeof(path), SYSCTL_ROOT "%s", m->sysctl_path[i]);
		len = read_value(path, cur, sizeof(cur));
		if (len >= 0 && !strcmp(cur, v))
			continue;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v)) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			return log_err(io->log, err, "pid %d: setting sysctl net.%s to %.*s:", io->pid,
				       m->sysctl_path[i], (int)strcspn(v, "\n"), v);
		}
		close(fd);
	}
	return 0;
}

/* ---- iptables ---- */

static const char *const ipt_save[3] = { "iptables-save", "ip6tables-save", "nft" };
static const char *const ipt_restore[3] = { "iptables-restore", "ip6tables-restore", "nft" };
static const char *const ipt_what[3] = { "iptables", "ip6tables", "nftables" };
static const char *const ipt_names[2] = { "ip_tables_names", "ip6_tables_names" };

/* @name in $PATH or the system's sbin directories: 0 and @out, or
 * -ENOENT. */
static int find_bin(const char *name, char *out, size_t n)
{
	const char *env = getenv("PATH");
	char dirs[1024];

	snprintf(dirs, sizeof(dirs), "/usr/sbin:/sbin:/usr/bin:/bin:%s", env ? env : "");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, n, "%s/%s", d, name);
		if (*d == '/' && !access(out, X_OK))
			return 0;
	}
	return -ENOENT;
}

/* Run @argv (argv[0] the binary's path) with @in (an fd or -1) as its
 * stdin: its exit status, its stdout and stderr in memfds *out and *err
 * (closed by the caller). */
static int run(char *const argv[], int in, int *out, int *err)
{
	int st;
	pid_t k;

	*out = memfd_create("ckpt-out", MFD_CLOEXEC);
	*err = memfd_create("ckpt-err", MFD_CLOEXEC);
	if (*out < 0 || *err < 0)
		return -errno;
	k = fork();
	if (k == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (dup2(in >= 0 ? in : null, 0) < 0 || dup2(*out, 1) < 0 || dup2(*err, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (k < 0)
		return -errno;
	while (waitpid(k, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return st;
}

/* The bytes of memfd @fd, NUL-terminated (malloc'd), or NULL. */
static char *slurp(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = n >= 0 && n < CKPT_REC_MAX_META ? malloc(n + 1) : NULL;

	if (s && pread(fd, s, n, 0) != n) {
		free(s);
		return NULL;
	}
	if (s) {
		s[n] = 0;
		*len = n;
	}
	return s;
}

/* The output without its comments (which say when it was made). */
static size_t drop_comments(char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		size_t e = i;

		while (e < len && s[e] != '\n')
			e++;
		if (e < len)
			e++;
		if (s[i] != '#') {
			memmove(s + o, s + i, e - i);
			o += e - i;
		}
		i = e;
	}
	s[o] = 0;
	return o;
}

/* Tables of the legacy iptables in this namespace (ckpt's /proc/net is
 * its namespace's): true if any. */
static bool legacy_tables(int fam)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/net/%s", ipt_names[fam]);
	return read_value(path, buf, sizeof(buf)) > 0;
}

/* `*-save`'s output for family @fam (0: IPv4) into *text (malloc'd,
 * without comments; NULL if there is no binary and nothing to save). */
static int ipt_read(struct netns_io *io, int fam, char **text, size_t *len)
{
	char bin[PATH_MAX], *msg = NULL;
	int out = -1, err = -1, st, ret = 0;
	size_t mlen = 0;

	*text = NULL;
	if (find_bin(ipt_save[fam], bin, sizeof(bin))) {
		if (legacy_tables(fam) || io->nft_ipt[fam])
			return log_err(io->log, EOPNOTSUPP, "pid %d: net namespace net:[%lu]: it has %s tables and there is no %s to save them",
				       io->pid, io->ino, fam ? "ip6tables" : "iptables", ipt_save[fam]);
		return 0;
	}
	st = run((char *[]){ bin, NULL }, -1, &out, &err);
	if (st >= 0) {
		*text = slurp(out, len);
		msg = slurp(err, &mlen);
	}
	if (st < 0 || !*text || !msg)
		ret = log_err(io->log, st < 0 ? -st : ENOMEM, "pid %d: running %s:", io->pid, bin);
	else if (st)
		ret = log_err(io->log, EIO, "pid %d: net namespace net:[%lu]: %s failed: %.*s", io->pid,
			      io->ino, bin, (int)strcspn(msg, "\n"), msg);
	else if (strstr(*text, "legacy tables present") || strstr(msg, "legacy tables present"))
		ret = log_err(io->log, EOPNOTSUPP, "pid %d: net namespace net:[%lu]: it has iptables-legacy tables beside %s's",
			      io->pid, io->ino, bin);
	else
		*len = drop_comments(*text, *len);
	free(msg);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

static int ipt_record(struct netns_io *io, int fam, const char *text, size_t len)
{
	struct rec_net_iptables r = { .family = fam == NETNS_NFT ? 1 : fam ? 6 : 4, .len = len };
	int ret = iw_begin(io->w, REC_NET_IPTABLES, sizeof(r) + len);

	if (!ret)
		ret = iw_write(io->w, &r, sizeof(r));
	if (!ret)
		ret = iw_write(io->w, text, len);
	return ret ? ret : iw_end(io->w);
}

/* ---- the rules saved, checked ---- */

/* "counter packets N bytes M" as "counter", in place. */
static void drop_counters(char *s)
{
	static const char key[] = "counter packets ";
	char *p;

	while ((p = strstr(s, key))) {
		char *e = p + sizeof(key) - 1;

		e += strspn(e, "0123456789");
		if (strncmp(e, " bytes ", 7))
			break;
		e += 7;
		e += strspn(e, "0123456789");
		memmove(p + 7, e, strlen(e) + 1);	/* keeps "counter" */
		s = p + 7;
	}
}

struct blocks {
	char **v;
	size_t n, cap;
};

static int add_block(struct blocks *b, const char *table, const char *block)
{
	char *e;

	if (b->n == b->cap) {
		char **v = realloc(b->v, (b->cap ? 2 * b->cap : 32) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = b->cap ? 2 * b->cap : 32;
	}
	if (asprintf(&e, "%s|%s", table, block) < 0)
		return -ENOMEM;
	drop_counters(e);
	b->v[b->n++] = e;
	return 0;
}

/* A chain with no rule whose policy is accept: iptables-nft makes the
 * chains of a table lazily, iptables-restore all of them. */
static bool trivial_chain(const char *block)
{
	const char *body = strchr(block, '\n');

	return !strncmp(block, "chain ", 6) && body && !strchr(body + 1, '\n') &&
	       strstr(body, "policy accept;");
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `nft list ruleset` as a sorted list of its tables' blocks (chains,
 * sets...) and lines, each with its table, counters dropped. */
static int ruleset_blocks(char *text, struct blocks *b)
{
	char table[256] = "", block[8192];
	size_t blen = 0;
	int depth = 0, ret = 0;

	for (char *save, *l = strtok_r(text, "\n", &save); l && !ret; l = strtok_r(NULL, "\n", &save)) {
		int d = depth;

		l += strspn(l, " \t");
		if (!*l || *l == '#')
			continue;
		for (char *c = l; *c; c++)
			depth += (*c == '{') - (*c == '}');
		if (d == 0)
			snprintf(table, sizeof(table), "%s", l);
		else if (d == 1 && depth == 1 && strcmp(l, "}"))
			ret = add_block(b, table, l);
		if (d >= 1 && (depth >= 2 || d >= 2)) {
			if (blen + strlen(l) + 2 > sizeof(block))
				return -E2BIG;
			blen += sprintf(block + blen, "%s%s", blen ? "\n" : "", l);
		}
		if (d >= 2 && depth == 1) {
			block[blen - 2] = 0;	/* its closing brace */
			if (!trivial_chain(block))
				ret = add_block(b, table, block);
			blen = 0;
		}
	}
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), by_str);
	return ret;
}

static void blocks_free(struct blocks *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i]);
	free(b->v);
}

/* `nft list ruleset` in the current namespace: its output (malloc'd) or
 * NULL. */
static char *nft_list(const char *nft)
{
	int out = -1, err = -1, st = run((char *[]){ (char *)nft, "list", "ruleset", NULL }, -1, &out, &err);
	size_t len;
	char *s = st == 0 ? slurp(out, &len) : NULL;

	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return s;
}

/* The command that restores family @fam's text from its stdin. */
static char *const *restore_argv(int fam, char *bin, char *argv[4])
{
	argv[0] = bin;
	argv[1] = fam == NETNS_NFT ? (char *)"-f" : NULL;
	argv[2] = (char *)"/dev/stdin";
	argv[3] = NULL;
	return argv;
}

/* In a child, in a new namespace: the rules restored from @text, then
 * listed into memfd @res.  Exits 0, or the step that failed. */
static void __attribute__((noreturn)) scratch(const char *nft, char *const text[3],
					      const size_t len[3], int res)
{
	char bin[PATH_MAX], *list, *argv[4];

	if (unshare(CLONE_NEWNET))
		_exit(2);
	for (int fam = 0; fam < 3; fam++) {
		int in = memfd_create("ckpt-in", MFD_CLOEXEC), out, err;

		if (!len[fam])
			continue;
		if (find_bin(ipt_restore[fam], bin, sizeof(bin)) || in < 0 ||
		    write(in, text[fam], len[fam]) != (ssize_t)len[fam] || lseek(in, 0, SEEK_SET) ||
		    run(restore_argv(fam, bin, argv), in, &out, &err))
			_exit(3);
	}
	list = nft_list(nft);
	_exit(!list || write(res, list, strlen(list)) != (ssize_t)strlen(list) ? 4 : 0);
}

/* @block, "table ip filter {|chain INPUT {\n...", named in one line:
 * "table ip filter, chain INPUT". */
static int refuse_rules(struct netns_io *io, const char *block)
{
	char where[96];
	size_t o = 0;

	for (size_t i = 0; block[i] && block[i] != '\n' && o < sizeof(where) - 3; i++) {
		if (!strncmp(block + i, " {|", 3)) {
			where[o++] = ',';
			where[o++] = ' ';
			i += 2;
			continue;
		}
		if (!strncmp(block + i, " {", 2) && (!block[i + 2] || block[i + 2] == '\n'))
			break;
		where[o++] = block[i];
	}
	where[o] = 0;
	return log_err(io->log, EOPNOTSUPP, "pid %d: net namespace net:[%lu]: nftables rules that iptables-save or nft would change (%s), which ckpt does not save",
		       io->pid, io->ino, where);
}

/* The rules as nft lists them here, and as the saved text makes them in
 * a new namespace, the same?  Without nft, nothing to compare. */
int netns_ipt_verify(struct netns_io *io, char *const text[3], const size_t len[3])
{
	struct blocks here = { 0 }, there = { 0 };
	char nft[PATH_MAX], *a = NULL, *b = NULL;
	int res, st = -1, ret = 0;
	size_t blen;
	pid_t k;

	if (find_bin("nft", nft, sizeof(nft)) || !(a = nft_list(nft)))
		return 0;
	res = memfd_create("ckpt-nft", MFD_CLOEXEC);
	k = res < 0 ? -1 : fork();
	if (k == 0)
		scratch(nft, text, len, res);
	while (k > 0 && waitpid(k, &st, 0) < 0 && errno == EINTR)
		;
	if (st == 0)
		b = slurp(res, &blen);
	if (!b)
		ret = log_err(io->log, EIO, "pid %d: net namespace net:[%lu]: its iptables-save output does not restore in a new namespace (step %d)",
			      io->pid, io->ino, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	else if (ruleset_blocks(a, &here) || ruleset_blocks(b, &there))
		ret = log_err(io->log, ENOMEM, "pid %d: comparing its nftables rules:", io->pid);
	for (size_t i = 0; !ret && i < here.n; i++)
		if (i >= there.n || strcmp(here.v[i], there.v[i]))
			ret = refuse_rules(io, here.v[i]);
	if (!ret && here.n != there.n)
		ret = refuse_rules(io, there.v[here.n]);
	blocks_free(&here);
	blocks_free(&there);
	free(a);
	free(b);
	if (res >= 0)
		close(res);
	return ret;
}

/* Of `nft list ruleset`'s @list, the tables that are nft's own (not
 * iptables-nft's, which iptables-save saves), whole: *@len bytes. */
static char *native_tables(const char *list, size_t *len)
{
	static const char *const ipt[] = { "filter", "nat", "mangle", "raw", "security" };
	char *out = malloc(strlen(list) + 1), fam[16], name[256];
	size_t o = 0;
	int depth = 0;
	bool keep = false;

	if (!out)
		return NULL;
	for (const char *l = list; *l;) {
		size_t n = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');

		if (depth == 0 && sscanf(l, "table %15s %255s {", fam, name) == 2) {
			bool iptables = false;

			for (size_t i = 0; i < sizeof(ipt) / sizeof(ipt[0]); i++)
				iptables |= !strcmp(name, ipt[i]);
			keep = !iptables || (strcmp(fam, "ip") && strcmp(fam, "ip6"));
		}
		for (size_t i = 0; i < n; i++)
			depth += (l[i] == '{') - (l[i] == '}');
		if (keep) {
			memcpy(out + o, l, n);
			o += n;
		}
		if (depth == 0)
			keep = false;
		l += n;
	}
	out[o] = 0;
	*len = o;
	return out;
}

/* nft's own tables, listed by the host's nft (NULL: none). */
static int nft_read(struct netns_io *io, char **text, size_t *len)
{
	char nft[PATH_MAX], *list;

	*text = NULL;
	if (!io->nft_native)
		return 0;
	if (find_bin("nft", nft, sizeof(nft)))
		return log_err(io->log, EOPNOTSUPP, "pid %d: net namespace net:[%lu]: it has nftables tables of nft's own and there is no nft to save them",
			       io->pid, io->ino);
	list = nft_list(nft);
	*text = list ? native_tables(list, len) : NULL;
	free(list);
	if (!*text)
		return log_err(io->log, EIO, "pid %d: net namespace net:[%lu]: listing its nftables tables with %s failed",
			       io->pid, io->ino, nft);
	return 0;
}

int netns_ipt_save(struct netns_io *io)
{
	char *text[3] = { NULL, NULL, NULL };
	size_t len[3] = { 0, 0, 0 };
	int ret = ipt_read(io, 0, &text[0], &len[0]);

	if (!ret)
		ret = ipt_read(io, 1, &text[1], &len[1]);
	if (!ret)
		ret = nft_read(io, &text[NETNS_NFT], &len[NETNS_NFT]);
	if (!ret && (len[0] || len[1] || len[NETNS_NFT]))
		ret = netns_ipt_verify(io, text, len);
	for (int fam = 0; fam < 3 && !ret; fam++)
		if (len[fam])
			ret = ipt_record(io, fam, text[fam], len[fam]);
	for (int fam = 0; fam < 3; fam++)
		free(text[fam]);
	return ret;
}

int netns_ipt_check(struct ckpt_log *log, const struct netns_img *m)
{
	char bin[PATH_MAX];

	for (int fam = 0; fam < 3; fam++)
		if (m->ipt[fam] && find_bin(ipt_restore[fam], bin, sizeof(bin)))
			return log_err(log, ENOENT, "the image has %s rules and there is no %s here",
				       ipt_what[fam], ipt_restore[fam]);
	return 0;
}

static int ipt_make_one(struct netns_io *io, const struct netns_img *m, int fam)
{
	char bin[PATH_MAX], *msg = NULL, *argv[4];
	int in = -1, out = -1, err = -1, st = -ENOENT, ret = 0;
	size_t mlen;

	if (find_bin(ipt_restore[fam], bin, sizeof(bin)))
		return log_err(io->log, ENOENT, "pid %d: the image has %s rules and there is no %s here",
			       io->pid, ipt_what[fam], ipt_restore[fam]);
	in = memfd_create("ckpt-in", MFD_CLOEXEC);
	if (in >= 0 && write(in, m->ipt[fam], m->ipt_len[fam]) == (ssize_t)m->ipt_len[fam] &&
	    !lseek(in, 0, SEEK_SET))
		st = run(restore_argv(fam, bin, argv), in, &out, &err);
	if (st < 0)
		ret = log_err(io->log, in < 0 ? errno : -st, "pid %d: running %s:", io->pid, bin);
	else if (st) {
		msg = slurp(err, &mlen);
		ret = log_err(io->log, EIO, "pid %d: %s failed: %.*s", io->pid, bin,
			      msg ? (int)strcspn(msg, "\n") : 0, msg ? msg : "");
	}
	free(msg);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

int netns_ipt_make(struct netns_io *io, const struct netns_img *m)
{
	for (int fam = 0; fam < 3; fam++)
		if (m->ipt[fam]) {
			int ret = ipt_make_one(io, m, fam);

			if (ret)
				return ret;
		}
	return 0;
}
