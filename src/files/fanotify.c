/* fanotify.c - fanotify groups (FILE_FANOTIFY): fanotify_init()'s flags
 * and event_f_flags, and every mark with its masks.
 *
 * Checkpoint: fdinfo shows the group ("fanotify flags:F event-flags:E")
 * and one line a mark: an inode's ("fanotify ino:I sdev:D mflags:M
 * mask:K ignored_mask:G ... f_handle:H"), a mount's ("fanotify
 * mnt_id:N ..."), a file system's ("fanotify sdev:D ...").  Each is kept
 * by a path: the inode's path now, found through its handle on a mount
 * of its device (as inotify.c does); the mount's mount point, from the
 * process's mountinfo, checked to reach that very mount from ckpt; for
 * a file system, a mount of it.  A mark that has no such path (a
 * deleted inode, a mount out of reach) or of another kind is refused.
 * Events queued at checkpoint time cannot be read without consuming
 * them: they are not kept (a warning says how many bytes were lost),
 * nor are permission events awaiting an answer.
 *
 * Restart: ckpt makes the group with the saved flags, adds each mark
 * (its mask, then its ignored mask with the flags it had), and hands it
 * over; the file's own flags are set as they were.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../files.h"
#include "fhandle.h"

#define FA_LINK		"anon_inode:[fanotify]"
#define FA_MAX_MARKS	(1 << 16)
#define FA_HANDLE_MAX	128	/* MAX_HANDLE_SZ */
#define FA_MFLAGS	(FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE | FAN_MARK_IGNORE)
/* every fanotify_init() flag there is (the kernel checks which it takes) */
#define FA_INIT_KNOWN	0xffffu
#define FA_EVENT_KNOWN	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
			 O_NOATIME | ARCH_O_LARGEFILE | O_CLOEXEC)

struct mark {
	struct rec_fanotify_mark m;
	char path[CKPT_PATH_MAX];
};

static const char *const mark_kind[] = { "?", "inode", "mount", "file system" };

/* ---- checkpoint ---- */

static bool fa_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, FA_LINK);
}

/* Does @path reach mount @mnt_id from here? */
static bool reaches_mount(const char *path, unsigned int mnt_id)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	char info[64], *s = NULL;
	bool ok = false;
	FILE *f;

	if (fd < 0)
		return false;
	snprintf(info, sizeof(info), "/proc/self/fdinfo/%d", fd);
	f = fopen(info, "re");
	if (f) {
		size_t cap = 0;

		while (!ok && getline(&s, &cap, f) > 0)
			ok = !strncmp(s, "mnt_id:", 7) && strtoul(s + 7, NULL, 10) == mnt_id;
		free(s);
		fclose(f);
	}
	close(fd);
	return ok;
}

/* The mount point of @pid's mount @mnt_id (type MOUNT), or a mount of
 * device @sdev (FS). */
static int mount_path(pid_t pid, struct mark *m, unsigned int key)
{
	char name[64];
	unsigned int id, dev;
	FILE *mi;
	int ret = -ENOENT;

	/* a mount by its id as the process sees it, a file system anywhere */
	if (m->m.type == FANOTIFY_MARK_MOUNT)
		snprintf(name, sizeof(name), "/proc/%d/mountinfo", pid);
	else
		snprintf(name, sizeof(name), "/proc/self/mountinfo");
	mi = fopen(name, "re");
	if (!mi)
		return -errno;
	while (ret && mountinfo_next(mi, &id, &dev, m->path)) {
		struct stat st;

		if (m->m.type == FANOTIFY_MARK_MOUNT && id == key && reaches_mount(m->path, id))
			ret = 0;
		if (m->m.type == FANOTIFY_MARK_FS && dev == key && !stat(m->path, &st) &&
		    major(st.st_dev) == key >> 20 && minor(st.st_dev) == (key & 0xfffff))
			ret = 0;
	}
	fclose(mi);
	return ret;
}

static int parse_inode(const char *line, struct mark *m)
{
	unsigned int sdev, bytes, type;
	unsigned long long ino;
	char hex[2 * FA_HANDLE_MAX + 1];
	struct file_handle *fh;
	int ret;

	if (sscanf(line, "fanotify ino:%llx sdev:%x mflags:%x mask:%x ignored_mask:%x fhandle-bytes:%x fhandle-type:%x f_handle:%256s",
		   &ino, &sdev, &m->m.mflags, &m->m.mask, &m->m.ignored_mask, &bytes,
		   &type, hex) != 8 || bytes > FA_HANDLE_MAX || strlen(hex) != 2 * bytes)
		return -EOPNOTSUPP;
	fh = malloc(sizeof(*fh) + bytes);
	if (!fh)
		return -ENOMEM;
	fh->handle_bytes = bytes;
	fh->handle_type = type;
	for (unsigned int i = 0; i < bytes; i++)
		sscanf(hex + 2 * i, "%2hhx", &fh->f_handle[i]);
	ret = fhandle_path(fh, ino, sdev, m->path);
	free(fh);
	return ret;
}

/* One "fanotify ..." mark line into @m; -errno (not reported). */
static int parse_mark(pid_t pid, const char *line, struct mark *m)
{
	unsigned int key;

	memset(m, 0, sizeof(*m));
	if (!strncmp(line, "fanotify ino:", 13)) {
		m->m.type = FANOTIFY_MARK_INODE;
		return parse_inode(line, m);
	}
	if (sscanf(line, "fanotify mnt_id:%x mflags:%x mask:%x ignored_mask:%x", &key,
		   &m->m.mflags, &m->m.mask, &m->m.ignored_mask) == 4)
		m->m.type = FANOTIFY_MARK_MOUNT;
	else if (sscanf(line, "fanotify sdev:%x mflags:%x mask:%x ignored_mask:%x", &key,
			&m->m.mflags, &m->m.mask, &m->m.ignored_mask) == 4)
		m->m.type = FANOTIFY_MARK_FS;
	else
		return -EOPNOTSUPP;
	return mount_path(pid, m, key);
}

/* What the queue holds is lost; say so. */
static void warn_queued(struct cpt_ctx *c, const struct fd_probe *p)
{
	int pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	int fd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, p->fd, 0), n = 0;

	if (fd >= 0 && !ioctl(fd, FIONREAD, &n) && n > 0)
		log_warn(c->log, "pid %d fd %d: %d bytes of queued fanotify events are not kept",
			 p->pid, p->fd, n);
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
}

static int pack(struct cpt_ctx *c, const struct rec_fanotify *h, struct mark *ms,
		void **extra, uint32_t *extra_len)
{
	size_t len = sizeof(*h);
	char *buf, *q;

	for (uint32_t i = 0; i < h->nr; i++)
		len += sizeof(ms[i].m) + ms[i].m.path_len;
	if (len > MAX_FILE_EXTRA)
		return log_err(c->log, E2BIG, "fanotify: %zu bytes of marks", len);
	q = buf = malloc(len);
	if (!buf)
		return log_err(c->log, ENOMEM, "fanotify:");
	memcpy(q, h, sizeof(*h));
	q += sizeof(*h);
	for (uint32_t i = 0; i < h->nr; i++) {
		memcpy(q, &ms[i].m, sizeof(ms[i].m));
		memcpy(q + sizeof(ms[i].m), ms[i].path, ms[i].m.path_len);
		q += sizeof(ms[i].m) + ms[i].m.path_len;
	}
	*extra = buf;
	*extra_len = len;
	return 0;
}

static int dump_mark(struct cpt_ctx *c, const struct fd_probe *p, const char *line,
		     struct mark *m)
{
	int ret = parse_mark(p->pid, line, m);

	if (ret == -ENOMEM)
		return log_err(c->log, ENOMEM, "fanotify:");
	if (!m->m.type)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: fanotify mark of an unknown kind: %.120s",
			       p->pid, p->fd, line);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: fanotify %s mark with no path to it (deleted, out of reach, or no file handle): %.120s",
			       p->pid, p->fd, mark_kind[m->m.type], line);
	if ((m->m.mflags & ~FA_MFLAGS) || !(m->m.mask | m->m.ignored_mask))
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: fanotify mark with flags %#x, masks %#x/%#x",
			       p->pid, p->fd, m->m.mflags, m->m.mask, m->m.ignored_mask);
	m->m.path_len = strlen(m->path) + 1;
	return 0;
}

static int fa_dump(struct cpt_ctx *c, const struct fd_probe *p,
		   struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const char *g = fdinfo_field(p->fdinfo, "fanotify flags:");
	struct rec_fanotify h = { 0 };
	const char *line = p->fdinfo;
	struct mark *ms = NULL;
	size_t cap = 0;
	int ret = 0;

	if (!g || sscanf(g, "%x event-flags:%x", &h.init_flags, &h.event_f_flags) != 2)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: fanotify: no flags in its fdinfo",
			       p->pid, p->fd);
	while (!ret && (line = strstr(line, "\nfanotify "))) {
		line++;
		if (!strncmp(line, "fanotify flags:", 15))
			continue;
		if (h.nr >= FA_MAX_MARKS || VEC_ROOM(ms, h.nr, cap))
			ret = log_err(c->log, ENOMEM, "pid %d fd %d: fanotify marks", p->pid, p->fd);
		else
			ret = dump_mark(c, p, line, &ms[h.nr++]);
	}
	if (!ret)
		ret = pack(c, &h, ms, extra, extra_len);
	if (!ret)
		warn_queued(c, p);
	free(ms);
	return ret;
}

/* ---- restart ---- */

/* The mark at @off of @extra, validated by fa_load(); the next's offset. */
static size_t mark_at(const char *extra, size_t off, struct rec_fanotify_mark *m,
		      const char **path)
{
	memcpy(m, extra + off, sizeof(*m));
	*path = extra + off + sizeof(*m);
	return off + sizeof(*m) + m->path_len;
}

static int fa_load(struct rst_ctx *c, struct rst_file *f)
{
	const char *x = f->extra;
	size_t off = sizeof(struct rec_fanotify), len = f->f.extra_len;
	struct rec_fanotify h;

	if (len < sizeof(h))
		return log_err(c->log, EBADMSG, "FILE %u: fanotify state missing", f->f.id);
	memcpy(&h, x, sizeof(h));
	if (h.reserved || h.nr > FA_MAX_MARKS || (h.init_flags & ~FA_INIT_KNOWN) ||
	    (h.event_f_flags & ~FA_EVENT_KNOWN) ||
	    (f->f.flags & ~(O_ACCMODE | O_NONBLOCK)))
		return log_err(c->log, EBADMSG, "FILE %u: bad fanotify group (flags %#x/%#x, %u marks)",
			       f->f.id, h.init_flags, h.event_f_flags, h.nr);
	for (uint32_t i = 0; i < h.nr; i++) {
		struct rec_fanotify_mark m;
		const char *path;

		if (len - off < sizeof(m))
			return log_err(c->log, EBADMSG, "FILE %u: fanotify mark %u beyond the record",
				       f->f.id, i);
		memcpy(&m, x + off, sizeof(m));
		if (m.type < FANOTIFY_MARK_INODE || m.type > FANOTIFY_MARK_FS || m.reserved ||
		    (m.mflags & ~FA_MFLAGS) || !(m.mask | m.ignored_mask) ||
		    m.path_len < 2 || m.path_len > CKPT_PATH_MAX ||
		    m.path_len > len - off - sizeof(m))
			return log_err(c->log, EBADMSG, "FILE %u: bad fanotify mark %u (type %u, flags %#x, path_len %u)",
				       f->f.id, i, m.type, m.mflags, m.path_len);
		off = mark_at(x, off, &m, &path);
		if (strnlen(path, m.path_len) != m.path_len - 1 || path[0] != '/')
			return log_err(c->log, EBADMSG, "FILE %u: fanotify mark %u: bad path",
				       f->f.id, i);
	}
	if (off != len)
		return log_err(c->log, EBADMSG, "FILE %u: %zu bytes after the fanotify marks",
			       f->f.id, len - off);
	return 0;
}

static int fa_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct rec_fanotify h;
	size_t off = sizeof(h);
	struct stat st;

	memcpy(&h, f->extra, sizeof(h));
	for (uint32_t i = 0; i < h.nr; i++) {
		struct rec_fanotify_mark m;
		const char *path;

		off = mark_at(f->extra, off, &m, &path);
		if (lstat(path, &st))
			return log_err(c->log, errno, "fanotify %s mark on %s:",
				       mark_kind[m.type], path);
	}
	return 0;
}

static int add_mark(struct rst_ctx *c, int fa, const struct rec_fanotify_mark *m,
		    const char *path)
{
	static const unsigned int type_flag[] = { 0, 0, FAN_MARK_MOUNT, FAN_MARK_FILESYSTEM };
	unsigned int how = FAN_MARK_ADD | type_flag[m->type] | (m->mflags & FAN_MARK_EVICTABLE);
	struct stat st;

	if (m->type == FANOTIFY_MARK_INODE && !lstat(path, &st) && S_ISLNK(st.st_mode))
		how |= FAN_MARK_DONT_FOLLOW;	/* the mark was on the link itself */
	if (m->mask && fanotify_mark(fa, how, m->mask, AT_FDCWD, path))
		return log_err(c->log, errno, "fanotify %s mark on %s (mask %#x):",
			       mark_kind[m->type], path, m->mask);
	how |= m->mflags & FAN_MARK_IGNORE ? FAN_MARK_IGNORE : FAN_MARK_IGNORED_MASK;
	how |= m->mflags & FAN_MARK_IGNORED_SURV_MODIFY;
	if (m->ignored_mask && fanotify_mark(fa, how, m->ignored_mask, AT_FDCWD, path))
		return log_err(c->log, errno, "fanotify %s mark on %s (ignored mask %#x):",
			       mark_kind[m->type], path, m->ignored_mask);
	return 0;
}

static int fa_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		   long *fd)
{
	struct rec_fanotify h;
	size_t off = sizeof(h);
	int fa, ret = 0;

	memcpy(&h, f->extra, sizeof(h));
	fa = fanotify_init(h.init_flags, h.event_f_flags);
	if (fa < 0)
		return log_err(c->log, errno, "fanotify_init(%#x, %#x):", h.init_flags,
			       h.event_f_flags);
	if (fcntl(fa, F_SETFD, FD_CLOEXEC))	/* ours only: not a group flag */
		ret = log_err(c->log, errno, "fanotify: F_SETFD:");
	for (uint32_t i = 0; i < h.nr && !ret; i++) {
		struct rec_fanotify_mark m;
		const char *path;

		off = mark_at(f->extra, off, &m, &path);
		ret = add_mark(c, fa, &m, path);
	}
	if (!ret)
		ret = files_give(t, fa, fd);
	close(fa);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void fa_show(struct info_out *o, const struct rec_file *f,
		    const void *extra, uint32_t extra_len)
{
	struct rec_fanotify h;

	if (extra_len < sizeof(h))
		return;
	memcpy(&h, extra, sizeof(h));
	info_hex(o, "init_flags", h.init_flags);
	info_hex(o, "event_f_flags", h.event_f_flags);
	info_u64(o, "marks", h.nr);
}

const struct file_ops file_fanotify = {
	.kind = FILE_FANOTIFY,
	.name = "fanotify",
	.match = fa_match,
	.dump = fa_dump,
	.load = fa_load,
	.check = fa_check,
	.open = fa_open,
	.show = fa_show,
};
