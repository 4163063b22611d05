/* mntns_test.c - a driver of the mntns kind's two sides, until the
 * container framework calls them: `save PID IMAGE` writes the mounts of
 * PID's mount namespace (HEAD, MNT..., TAIL), `restore PID IMAGE` reads
 * them back (each record through the kind's load(), then its check())
 * and builds them in PID's mount namespace, pivoting its root.  Without
 * arguments (as a unit test) it checks that load() refuses a few forged
 * MNT records.  `restore PID IMAGE KEY:PATH...`: with those --external
 * arguments.  tests/cases/mntns.sh runs it on a container-like tree. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "kinds.h"
#include "kinds/mntns.h"
#include "kinds/ns.h"

#include "check.h"

static int save(pid_t pid, const char *img)
{
	struct ckpt_log log = { .fd = 2 };
	struct cpt_ctx c = { .log = &log };
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR,
			      .minor = CKPT_FMT_MINOR, .arch = CKPT_ARCH_X86_64 };
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;

	if (fd < 0 || iw_init(&c.w, fd, &log))
		return perror(img), 1;
	ret = iw_record(&c.w, REC_HEAD, &h, sizeof(h));
	if (!ret)
		ret = mntns_save(&c, pid);
	if (!ret)
		ret = iw_tail(&c.w);
	iw_free(&c.w);
	close(fd);
	return ret ? 1 : 0;
}

/* Every record of @fd through the kind's load(): 0 or -errno. */
static int load_all(struct rst_ctx *c, int fd)
{
	struct img_reader r;
	struct rec rec;
	int ret = ir_init(&r, fd, c->log);

	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		ret = kind_for_type(rec.type) == &kind_mntns ?
			kind_mntns.load(c, c->tasks[0], &rec) : 0;
		free(rec.data);
	}
	ir_free(&r);
	return ret;
}

/* @ext: --external's "KEY:PATH" arguments, @n of them. */
static int restore(pid_t pid, const char *img, const char *const *ext, int n)
{
	struct ckpt_log log = { .fd = 2 };
	struct rst_task t = { .pid = 1 };
	struct rst_task *tasks[1] = { &t };
	struct ckpt_restart_opts o = { .external = ext, .nr_external = n };
	struct rst_ctx c = { .log = &log, .tasks = tasks, .nr_tasks = 1, .here = true,
			     .ns_own = 1u << NS_MNT, .opts = &o };
	int ret;

	c.img_fd = open(img, O_RDONLY | O_CLOEXEC);
	if (c.img_fd < 0)
		return perror(img), 1;
	ret = load_all(&c, c.img_fd);
	if (!ret)
		ret = kind_mntns.check(&c, &t);
	if (!ret && !mntns_state(&c))
		ret = log_err(&log, EBADMSG, "no MNT record");
	if (!ret)
		ret = mntns_build(&c, mntns_state(&c), pid);
	kind_mntns.free_ctx(mntns_state(&c));
	close(c.img_fd);
	if (ret)
		fprintf(stderr, "restore: %s\n", log.msg);
	return ret ? 1 : 0;
}

/* ---- forged records ---- */

/* A MNT record of @m and its six strings into @buf: its length. */
static size_t mnt_rec(char *buf, struct rec_mnt m, const char *const s[6])
{
	uint32_t *len[6] = { &m.mp_len, &m.type_len, &m.source_len, &m.root_len,
			     &m.opts_len, &m.host_len };
	size_t off = sizeof(m);

	for (int i = 0; i < 6; i++) {
		*len[i] = strlen(s[i]) + 1;
		memcpy(buf + sizeof(m) + (off - sizeof(m)), s[i], *len[i]);
		off += *len[i];
	}
	memcpy(buf, &m, sizeof(m));
	return off;
}

static int load_one(struct rst_ctx *c, uint32_t type, void *data, size_t n)
{
	struct rec r = { .type = type, .len = n, .data = malloc(n + 1), .data_len = n };
	int ret;

	memcpy(r.data, data, n);
	((char *)r.data)[n] = 0;
	ret = kind_mntns.load(c, c->tasks[0], &r);
	free(r.data);
	return ret;
}

static void test_forged(void)
{
	struct ckpt_log log = { .fd = -1 };
	struct rst_task t = { .pid = 1 };
	struct rst_task *tasks[1] = { &t };
	struct rst_ctx c = { .log = &log, .tasks = tasks, .nr_tasks = 1 };
	const char *root[6] = { "", "tmpfs", "tmpfs", "", "mode=755", "" };
	const char *dotdot[6] = { "a/../b", "tmpfs", "tmpfs", "", "", "" };
	const char *relhost[6] = { "usr", "ext4", "/dev/x", "usr", "", "usr" };
	const char *host[6] = { "usr", "ext4", "/dev/x", "usr", "", "/usr" };
	struct rec_mnt m = { .id = 10, .how = MNT_NEW_TMPFS, .flags = MNT_F_RELATIME };
	char buf[1024];
	size_t n;

	n = mnt_rec(buf, (struct rec_mnt){ .id = 10, .parent = 3, .how = MNT_NEW_TMPFS }, root);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "a first mount with a parent is refused");
	n = mnt_rec(buf, m, root);
	CHECK(load_one(&c, REC_MNT, buf, n - 1) < 0, "a string cut short is refused");
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "the root loads");
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "a repeated id is refused");
	m.id = 11;
	m.parent = 10;
	n = mnt_rec(buf, m, dotdot);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "a mountpoint with .. is refused");
	m.how = MNT_BIND;
	n = mnt_rec(buf, m, relhost);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "a relative host path is refused");
	m.flags = 0x100;
	n = mnt_rec(buf, m, host);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "an unknown flag is refused");
	m.flags = 0;
	m.parent = 99;
	n = mnt_rec(buf, m, host);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "an unknown parent is refused");
	m.parent = 10;
	m.master = 5;
	n = mnt_rec(buf, m, host);
	CHECK(load_one(&c, REC_MNT, buf, n) < 0, "a slave of an unknown group is refused");
	m.master = 0;
	n = mnt_rec(buf, m, host);
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "a bind of /usr loads");
	struct { struct rec_mnt_file f; char p[8]; } f = {
		{ .mode = 040755, .path_len = 1 }, "" };
	CHECK(load_one(&c, REC_MNT_FILE, &f, sizeof(f.f) + 1) < 0,
	      "a file after a mount that is not a tmpfs is refused");
	kind_mntns.free_ctx(mntns_state(&c));
}

/* A MNT_FILE of @mode, @size, @path (and @target) into @buf: its length. */
static size_t file_rec(char *buf, uint32_t mode, uint64_t size, const char *path,
		       const char *target)
{
	struct rec_mnt_file f = { .mode = mode, .size = size, .mtime = 77,
				  .path_len = strlen(path) + 1,
				  .target_len = target ? strlen(target) + 1 : 0 };

	memcpy(buf, &f, sizeof(f));
	memcpy(buf + sizeof(f), path, f.path_len);
	if (target)
		memcpy(buf + sizeof(f) + f.path_len, target, f.target_len);
	return sizeof(f) + f.path_len + f.target_len;
}

/* mntns_stat(): the container's paths, from the model alone. */
static void test_stat(void)
{
	struct ckpt_log log = { .fd = -1 };
	struct rst_task t = { .pid = 1 };
	struct rst_task *tasks[1] = { &t };
	struct rst_ctx c = { .log = &log, .tasks = tasks, .nr_tasks = 1 };
	const char *root[6] = { "", "tmpfs", "tmpfs", "", "", "" };
	const char *usr[6] = { "host", "ext4", "/dev/x", "usr", "", "/usr" };
	const char *proc[6] = { "proc", "proc", "proc", "", "", "" };
	const char *peer[6] = { "again", "ext4", "/dev/x", "bin", "", "" };
	char buf[512];
	struct stat st;
	size_t n;

	n = mnt_rec(buf, (struct rec_mnt){ .id = 1, .how = MNT_NEW_TMPFS }, root);
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "stat: root");
	n = file_rec(buf, S_IFDIR | 0755, 0, "", NULL);
	CHECK(load_one(&c, REC_MNT_FILE, buf, n) == 0, "stat: root dir");
	n = file_rec(buf, S_IFREG | 0640, 5, "a", NULL);
	CHECK(load_one(&c, REC_MNT_FILE, buf, n) == 0, "stat: a");
	n = file_rec(buf, S_IFLNK | 0777, 0, "l", "a");
	CHECK(load_one(&c, REC_MNT_FILE, buf, n) == 0, "stat: l");
	n = mnt_rec(buf, (struct rec_mnt){ .id = 2, .parent = 1, .how = MNT_BIND }, usr);
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "stat: host");
	n = mnt_rec(buf, (struct rec_mnt){ .id = 3, .parent = 1, .how = MNT_NEW }, proc);
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "stat: proc");
	n = mnt_rec(buf, (struct rec_mnt){ .id = 4, .parent = 1, .how = MNT_PEER, .bind_of = 2 },
		    peer);
	CHECK(load_one(&c, REC_MNT, buf, n) == 0, "stat: peer");
	CHECK(mntns_stat(&c, "/a", false, &st) == -EINVAL, "no own mount namespace: stat as ever");
	c.ns_own = 1u << NS_MNT;
	CHECK(mntns_stat(&c, "/a", true, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 5 &&
	      st.st_mtim.tv_sec == 77, "a tmpfs file");
	CHECK(mntns_stat(&c, "/", false, &st) == 0 && S_ISDIR(st.st_mode), "the root");
	CHECK(mntns_stat(&c, "/nope", false, &st) == -ENOENT, "no such tmpfs file");
	CHECK(mntns_stat(&c, "/l", false, &st) == 0 && S_ISLNK(st.st_mode), "a symlink");
	CHECK(mntns_stat(&c, "/l", true, &st) == 1, "a symlink followed: not known");
	CHECK(mntns_stat(&c, "/host/bin", true, &st) == 0 && S_ISDIR(st.st_mode),
	      "a host bind's directory");
	CHECK(mntns_stat(&c, "/host/no-such-dir", true, &st) == -ENOENT, "a host bind's missing file");
	CHECK(mntns_stat(&c, "/again/sh", true, &st) == 0 && S_ISREG(st.st_mode),
	      "a bind of part of another (/usr/bin/sh)");
	CHECK(mntns_stat(&c, "/proc/self", false, &st) == 1, "a proc file: not known");
	CHECK(mntns_stat(&c, "/hostx", false, &st) == -ENOENT, "a name that only starts as a mountpoint");
	kind_mntns.free_ctx(mntns_state(&c));
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "save"))
		return save(atoi(argv[2]), argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "restore"))
		return restore(atoi(argv[2]), argv[3], (const char *const *)argv + 4, argc - 4);
	test_forged();
	test_stat();
	printf("mntns_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
