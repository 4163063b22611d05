/* unpriv.c - what ckpt does differently as an ordinary user.
 *
 * Checkpoint: /proc/PID/map_files, which names the file behind each
 * area, needs CAP_CHECKPOINT_RESTORE in the first user namespace.  A
 * file mapped from a path is known without it: maps gives the area's
 * device and inode, and the file at the path must have them.  An area
 * whose file has no path (a memfd, a deleted file, shared anonymous
 * memory) can only be opened through map_files: it is refused, naming
 * pid and address.  Memory is read through /proc/PID/mem as always (a
 * traced child of our own user may be read).  A memfd or deleted file
 * that a process of the tree also has open is read through that fd.
 *
 * Restart: clone3(set_tid) and PR_SET_MM_MAP need CAP_CHECKPOINT_RESTORE
 * in the user namespace that owns the pid namespace, and the pids of the
 * image are free only in a new one: restart makes a user namespace that
 * maps the user's own uid and gid to themselves (nothing else exists in
 * it: files of others stay theirs) together with the pid namespace, as
 * --pidns does.  Its setgroups is "deny", as the kernel requires of a
 * map written without CAP_SETGID: the processes keep ckpt's groups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "caps.h"
#include "ctx.h"
#include "files.h"
#include "unpriv.h"

bool unpriv_user(void)
{
	return geteuid() != 0;
}

bool unpriv_needs_ns(void)
{
	return unpriv_user() && !cap_effective(CAP_SYS_ADMIN);
}

bool unpriv_groups_fixed(void)
{
	char buf[16] = "";
	int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 && !strncmp(buf, "deny", 4);
}

int unpriv_vma_stat(const struct vma *v, struct stat *st)
{
	if (stat(v->path, st))
		return -errno;
	if (st->st_ino != v->ino || st->st_dev != makedev(v->dev_major, v->dev_minor))
		return -ESTALE;
	return 0;
}

struct fd_match {
	const struct vma *v;
	char *path;
	size_t len;
};

static int fd_match(struct cpt_ctx *c, pid_t pid, int fd, void *arg)
{
	struct fd_match *m = arg;
	char path[64];
	struct stat st;

	(void)c;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st) || st.st_ino != m->v->ino ||
	    st.st_dev != makedev(m->v->dev_major, m->v->dev_minor))
		return 0;
	snprintf(m->path, m->len, "%s", path);
	return 1;
}

int unpriv_vma_fd(struct cpt_ctx *c, const struct vma *v, char *path, size_t len)
{
	struct fd_match m = { v, path, len };
	int ret = files_each_fd(c, fd_match, &m);

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

int unpriv_map_refused(struct ckpt_log *log, pid_t pid, const struct vma *v,
		       const char *what)
{
	return log_err(log, EPERM,
		       "pid %d: area 0x%" PRIx64 " (%s%s): %s can only be saved through /proc/%d/map_files, which needs CAP_CHECKPOINT_RESTORE (not an ordinary user's)",
		       pid, v->start, v->path[0] ? "" : "anonymous", v->path, what, pid);
}

static int write_file(struct ckpt_log *log, pid_t pid, const char *name, const char *s)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = log_err(log, errno, "the new user namespace: writing \"%.*s\" to %s:",
			      (int)strcspn(s, "\n"), s, path);
	if (fd >= 0)
		close(fd);
	return ret;
}

int unpriv_ns_map(struct ckpt_log *log, pid_t child, int sync[2])
{
	char map[64];
	int ret;

	close(sync[0]);
	snprintf(map, sizeof(map), "%u %u 1\n", geteuid(), geteuid());
	ret = write_file(log, child, "uid_map", map);
	if (!ret)
		ret = write_file(log, child, "setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", getegid(), getegid());
	if (!ret)
		ret = write_file(log, child, "gid_map", map);
	/* the child goes on only on a byte: closed without one, it ends */
	if (!ret && write(sync[1], "", 1) != 1)
		ret = log_err(log, errno, "the new user namespace:");
	close(sync[1]);
	return ret;
}

int unpriv_ns_wait(int sync[2])
{
	char b;

	close(sync[1]);
	if (read(sync[0], &b, 1) != 1) {
		close(sync[0]);
		return -EPERM;
	}
	close(sync[0]);
	return 0;
}
