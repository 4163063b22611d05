/* ipcns_dump.c - checkpoint of the ipc namespace ckpt is in (the
 * container's own: ckpt joined it), read without changing it:
 * - its sysctls (IPC_NS);
 * - each SysV message queue (IPC_MSQ) and its messages in order
 *   (IPC_MSG), copied with msgrcv(MSG_COPY), which leaves them queued;
 * - each SysV semaphore set with its values (IPC_SEM);
 * - each POSIX message queue (IPC_MQ), listed through an mqueue mount of
 *   the namespace that is never attached anywhere (fsmount), and its
 *   messages (IPC_MQ_MSG): POSIX has no way to read a message and leave
 *   it, so they are received and at once sent back in the order they
 *   came, with their priorities, which is the order they were in.  No
 *   process of the tree can be blocked sending to it meanwhile (held,
 *   each is out of its call, which it makes again once let go), and a
 *   queue with a notification registered is refused (putting a message
 *   back would fire it);
 * - the SysV segments no process attaches (sysvshm.c).
 * A POSIX message queue open in a process (of any tree) is refused: its
 * descriptor is not restored (the kinds of open file would take it for
 * a file of that name).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <mqueue.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipcns.h"
#include "sysvshm.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC	0x19800202
#endif

#define DERR(c, what, err, fmt, ...) \
	log_err((c)->log, (err), "%s: " fmt, (what), ##__VA_ARGS__)

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

/* ---- sysctls ---- */

static int sysctl_read(const char *name, char *buf, size_t n)
{
	char path[64];
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	k = read(fd, buf, n - 1);
	n = errno;
	close(fd);
	if (k < 0)
		return -(int)n;
	buf[k] = 0;
	return 0;
}

static int save_ns(struct cpt_ctx *c, const char *what, struct rec_ipc_ns *ns)
{
	char buf[128];
	int ret;

	memset(ns, 0, sizeof(*ns));
	for (const struct ipc_sysctl *s = ipc_sysctls; s->name; s++) {
		void *f = (char *)ns + s->off;
		unsigned long long v;
		char *end;

		ret = sysctl_read(s->name, buf, sizeof(buf));
		if (ret == -ENOENT && s->next_id) {
			*(int32_t *)f = -1;	/* no CONFIG_CHECKPOINT_RESTORE */
			continue;
		}
		if (ret)
			return DERR(c, what, -ret, "/proc/sys/%s:", s->name);
		errno = 0;
		v = s->wide ? strtoull(buf, &end, 10) : (unsigned long long)strtol(buf, &end, 10);
		if (errno || end == buf)
			return DERR(c, what, EINVAL, "/proc/sys/%s: \"%s\"", s->name, buf);
		if (s->wide)
			*(uint64_t *)f = v;
		else
			*(int32_t *)f = (int32_t)v;
	}
	ret = sysctl_read("kernel/sem", buf, sizeof(buf));
	if (ret)
		return DERR(c, what, -ret, "/proc/sys/kernel/sem:");
	if (sscanf(buf, "%d %d %d %d", &ns->sem[0], &ns->sem[1], &ns->sem[2], &ns->sem[3]) != 4)
		return DERR(c, what, EINVAL, "/proc/sys/kernel/sem: \"%s\"", buf);
	return iw_record(&c->w, REC_IPC_NS, ns, sizeof(*ns));
}

/* ---- SysV message queues ---- */

static int save_msgs(struct cpt_ctx *c, const char *what, int id,
		     const struct msqid_ds *ds)
{
	size_t cap = ds->__msg_cbytes;
	struct { long mtype; char text[]; } *m = malloc(sizeof(long) + cap + 1);
	uint64_t sum = 0;
	int ret = 0;

	if (!m)
		return DERR(c, what, ENOMEM, "SysV message queue %d:", id);
	for (unsigned long i = 0; i < ds->msg_qnum && !ret; i++) {
		/* the i-th message, copied: it stays queued */
		ssize_t n = msgrcv(id, m, cap, (long)i, MSG_COPY | IPC_NOWAIT);
		struct rec_ipc_msg h = { .len = (uint32_t)n };

		if (n < 0) {
			ret = DERR(c, what, errno, "SysV message queue %d: copying message %lu%s:", id, i,
				   errno == ENOSYS ? " (MSG_COPY needs a kernel with CONFIG_CHECKPOINT_RESTORE)" : "");
			break;
		}
		if ((size_t)n > CKPT_REC_MAX_META - sizeof(h)) {
			ret = DERR(c, what, EOPNOTSUPP, "SysV message queue %d: a message of %zd bytes is not supported",
				   id, n);
			break;
		}
		h.mtype = m->mtype;
		sum += n;
		ret = iw_begin(&c->w, REC_IPC_MSG, sizeof(h) + n);
		if (!ret)
			ret = iw_write(&c->w, &h, sizeof(h));
		if (!ret)
			ret = iw_write(&c->w, m->text, n);
		if (!ret)
			ret = iw_end(&c->w);
	}
	free(m);
	if (!ret && sum != ds->__msg_cbytes)
		ret = DERR(c, what, ESTALE, "SysV message queue %d: %llu bytes of messages, but %lu said",
			   id, (unsigned long long)sum, (unsigned long)ds->__msg_cbytes);
	return ret;
}

static int save_msq(struct cpt_ctx *c, const char *what, int id)
{
	struct rec_ipc_msq q = { .id = id };
	struct msqid_ds ds;
	int ret;

	if (msgctl(id, IPC_STAT, &ds) < 0)
		return DERR(c, what, errno, "SysV message queue %d:", id);
	if (ds.msg_qnum > UINT32_MAX || ds.msg_qbytes > INT64_MAX)
		return DERR(c, what, EOPNOTSUPP, "SysV message queue %d: %lu messages, %lu bytes: not supported",
			    id, (unsigned long)ds.msg_qnum, (unsigned long)ds.msg_qbytes);
	q.key = ds.msg_perm.__key;
	q.mode = ds.msg_perm.mode & 0777;
	q.uid = ds.msg_perm.uid;
	q.gid = ds.msg_perm.gid;
	q.cuid = ds.msg_perm.cuid;
	q.cgid = ds.msg_perm.cgid;
	q.nr_msgs = ds.msg_qnum;
	q.qbytes = ds.msg_qbytes;
	q.cbytes = ds.__msg_cbytes;
	q.stime = ds.msg_stime;
	q.rtime = ds.msg_rtime;
	q.ctime = ds.msg_ctime;
	q.lspid = ds.msg_lspid;
	q.lrpid = ds.msg_lrpid;
	ret = iw_record(&c->w, REC_IPC_MSQ, &q, sizeof(q));
	return ret ? ret : save_msgs(c, what, id, &ds);
}

/* ---- SysV semaphore sets ---- */

static int save_sem(struct cpt_ctx *c, const char *what, int id)
{
	struct rec_ipc_sem s = { .id = id };
	struct semid_ds ds;
	unsigned short *val;
	int ret;

	if (semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds }) < 0)
		return DERR(c, what, errno, "SysV semaphore set %d:", id);
	if (ds.sem_nsems == 0 || ds.sem_nsems > (CKPT_REC_MAX_META - sizeof(s)) / 2)
		return DERR(c, what, EOPNOTSUPP, "SysV semaphore set %d: %lu semaphores: not supported",
			    id, (unsigned long)ds.sem_nsems);
	s.key = ds.sem_perm.__key;
	s.mode = ds.sem_perm.mode & 0777;
	s.uid = ds.sem_perm.uid;
	s.gid = ds.sem_perm.gid;
	s.cuid = ds.sem_perm.cuid;
	s.cgid = ds.sem_perm.cgid;
	s.nsems = ds.sem_nsems;
	s.otime = ds.sem_otime;
	s.ctime = ds.sem_ctime;
	val = calloc(s.nsems, sizeof(*val));
	if (!val)
		return DERR(c, what, ENOMEM, "SysV semaphore set %d:", id);
	if (semctl(id, 0, GETALL, (union semun){ .array = val }) < 0) {
		ret = DERR(c, what, errno, "SysV semaphore set %d: GETALL:", id);
		goto out;
	}
	ret = iw_begin(&c->w, REC_IPC_SEM, sizeof(s) + s.nsems * sizeof(*val));
	if (!ret)
		ret = iw_write(&c->w, &s, sizeof(s));
	if (!ret)
		ret = iw_write(&c->w, val, s.nsems * sizeof(*val));
	if (!ret)
		ret = iw_end(&c->w);
out:
	free(val);
	return ret;
}

/* Each id of /proc/sysvipc/@file saved by @save. */
static int save_all(struct cpt_ctx *c, const char *what, const char *file,
		    int (*save)(struct cpt_ctx *, const char *, int))
{
	int *ids, n, ret = sysvipc_ids(file, &ids, &n);

	if (ret)
		return DERR(c, what, -ret, "/proc/sysvipc/%s:", file);
	for (int i = 0; i < n && !ret; i++)
		ret = save(c, what, ids[i]);
	free(ids);
	return ret;
}

/* ---- POSIX message queues ---- */

struct mq_msg {
	uint32_t prio, len;
	char *data;
};

/* Every message of @fd received (in order), then sent back as it was. */
static int mq_take(struct cpt_ctx *c, const char *what, const char *name, int fd,
		   const struct mq_attr *a, struct mq_msg *m, long *n)
{
	char *buf = malloc(a->mq_msgsize + 1);
	int ret = 0;

	*n = 0;
	if (!buf)
		return DERR(c, what, ENOMEM, "POSIX message queue /%s:", name);
	while (*n < a->mq_maxmsg) {
		unsigned int prio;
		ssize_t k = mq_receive(fd, buf, a->mq_msgsize, &prio);

		if (k < 0) {
			if (errno != EAGAIN)
				ret = DERR(c, what, errno, "POSIX message queue /%s: mq_receive:", name);
			break;
		}
		m[*n] = (struct mq_msg){ prio, (uint32_t)k, malloc(k + 1) };
		if (!m[*n].data) {
			/* this one in buf, put back in its turn below */
			ret = DERR(c, what, ENOMEM, "POSIX message queue /%s:", name);
			m[(*n)++].data = buf;
			buf = NULL;
			break;
		}
		memcpy(m[(*n)++].data, buf, k);
	}
	free(buf);
	for (long i = 0; i < *n; i++)
		if (mq_send(fd, m[i].data, m[i].len, m[i].prio) && !ret)
			ret = DERR(c, what, errno, "POSIX message queue /%s: putting message %ld of %ld back:",
				   name, i, *n);
	return ret;
}

static int mq_write(struct cpt_ctx *c, const struct rec_ipc_mq *q, const struct mq_msg *m)
{
	int ret = iw_record(&c->w, REC_IPC_MQ, q, sizeof(*q));

	for (uint32_t i = 0; i < q->nr_msgs && !ret; i++) {
		struct rec_ipc_mq_msg h = { m[i].prio, m[i].len };

		ret = iw_begin(&c->w, REC_IPC_MQ_MSG, sizeof(h) + h.len);
		if (!ret)
			ret = iw_write(&c->w, &h, sizeof(h));
		if (!ret)
			ret = iw_write(&c->w, m[i].data, h.len);
		if (!ret)
			ret = iw_end(&c->w);
	}
	return ret;
}

/* Whether a process has a notification registered on @fd: the status
 * file says 0 for a SIGEV_SIGNAL one, and no pid for one outside ckpt's
 * pid namespace; ckpt's own registration is refused then (EBUSY), and
 * else taken back at once. */
static bool notified(int fd)
{
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };

	if (mq_notify(fd, &ev))
		return errno == EBUSY;
	mq_notify(fd, NULL);
	return false;
}

/* Refusals: a notification registered (mq_notify), sizes past the
 * records'. */
static int mq_stat(struct cpt_ctx *c, const char *what, const char *name, int fd,
		   struct rec_ipc_mq *q, struct mq_attr *a)
{
	int notify = 0, signo = 0, npid = 0;
	char buf[160];
	struct stat st;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);

	if (k < 0 || fstat(fd, &st) || mq_getattr(fd, a))
		return DERR(c, what, errno, "POSIX message queue /%s:", name);
	buf[k] = 0;
	if (sscanf(buf, "QSIZE:%*u NOTIFY:%d SIGNO:%d NOTIFY_PID:%d", &notify, &signo, &npid) != 3)
		return DERR(c, what, EINVAL, "POSIX message queue /%s: \"%s\"", name, buf);
	if (notified(fd))
		return npid ? DERR(c, what, EOPNOTSUPP, "POSIX message queue /%s: pid %d is notified of its messages (mq_notify), not supported",
				   name, npid) :
			      DERR(c, what, EOPNOTSUPP, "POSIX message queue /%s: a process outside the container is notified of its messages (mq_notify), not supported",
				   name);
	if (a->mq_maxmsg < 1 || a->mq_maxmsg > MQ_MSG_HARD || a->mq_msgsize < 1 ||
	    a->mq_msgsize > MQ_SIZE_HARD || a->mq_curmsgs < 0 || a->mq_curmsgs > a->mq_maxmsg)
		return DERR(c, what, EOPNOTSUPP, "POSIX message queue /%s: %ld messages of %ld bytes at most: not supported",
			    name, a->mq_maxmsg, a->mq_msgsize);
	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->mode = st.st_mode & 0777;
	q->uid = st.st_uid;
	q->gid = st.st_gid;
	q->maxmsg = a->mq_maxmsg;
	q->msgsize = a->mq_msgsize;
	return 0;
}

static int save_mq(struct cpt_ctx *c, const char *what, int mnt, const char *name)
{
	int fd = openat(mnt, name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	struct rec_ipc_mq q;
	struct mq_attr a;
	struct mq_msg *m = NULL;
	long n = 0;
	int ret;

	if (fd < 0)
		return DERR(c, what, errno, "POSIX message queue /%s:", name);
	ret = mq_stat(c, what, name, fd, &q, &a);
	if (!ret && !(m = calloc(a.mq_maxmsg, sizeof(*m))))
		ret = DERR(c, what, ENOMEM, "POSIX message queue /%s:", name);
	if (!ret)
		ret = mq_take(c, what, name, fd, &a, m, &n);
	if (!ret && n != a.mq_curmsgs)
		ret = DERR(c, what, ESTALE, "POSIX message queue /%s: %ld messages read, %ld said",
			   name, n, a.mq_curmsgs);
	q.nr_msgs = n;
	if (!ret)
		ret = mq_write(c, &q, m);
	for (long i = 0; i < n; i++)
		free(m[i].data);
	free(m);
	close(fd);
	return ret;
}

/* The namespace's queues, listed through a mount of its own mqueue
 * filesystem that no mount namespace sees (fsopen takes ckpt's ipc
 * namespace), gone with its fd. */
static int save_mqs(struct cpt_ctx *c, const char *what)
{
	int fs = syscall(SYS_fsopen, "mqueue", FSOPEN_CLOEXEC), mnt = -1, ret = 0;
	struct dirent *e;
	DIR *d = NULL;

	if (fs >= 0 && !syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	if (mnt >= 0)
		d = fdopendir(openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!d)
		ret = DERR(c, what, errno, "mounting its mqueue filesystem:");
	while (d && !ret && (errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ret = save_mq(c, what, mnt, e->d_name);
	if (d && !ret && errno)
		ret = DERR(c, what, errno, "listing its POSIX message queues:");
	if (d)
		closedir(d);
	if (mnt >= 0)
		close(mnt);
	if (fs >= 0)
		close(fs);
	return ret;
}

int ipcns_mq_fds(struct cpt_ctx *c, pid_t pid)
{
	char path[300], name[256];
	struct dirent *e;
	struct statfs sf;
	int ret = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return log_err(c->log, errno, "pid %d: %s:", pid, path);
	while (!ret && (e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, e->d_name);
		/* the magic link followed: the file's own filesystem */
		if (statfs(path, &sf) || sf.f_type != MQUEUE_MAGIC)
			continue;
		n = readlink(path, name, sizeof(name) - 1);
		name[n < 0 ? 0 : n] = 0;
		ret = log_err(c->log, EOPNOTSUPP, "pid %d: fd %s is POSIX message queue %s, not supported",
			      pid, e->d_name, name);
	}
	closedir(d);
	return ret;
}

int ipcns_save(struct cpt_ctx *c, const char *what)
{
	struct rec_ipc_ns ns;
	int ret = save_ns(c, what, &ns);

	if (!ret)
		ret = save_all(c, what, "msg", save_msq);
	if (!ret)
		ret = save_all(c, what, "sem", save_sem);
	if (!ret)
		ret = save_mqs(c, what);
	if (!ret)
		ret = sysv_save_unattached(c, what, ns.shm_rmid_forced);
	return ret;
}
