/* locks.c - file locks (LOCK) and fd owners (FOWN), put back once the fds
 * exist: late in phase STATE, when every thread (an owner may be one)
 * exists and the credentials F_SETOWN records are the process's own.
 *
 * Locks are read from the "lock:" lines of /proc/PID/fdinfo/N (kept by
 * the files kind as it read them: files_notes()), which
 * list the locks held through that description: a POSIX lock belongs to
 * the process (its fd table) and is taken again by that process; a flock
 * or OFD lock belongs to the description and is taken again on it (a
 * description shared by several processes gets it from each, which is
 * harmless).  A lease belongs to the description too, written once
 * and taken again by the process with the first fd of it (a lease being
 * broken is broken again, see break_lease()).  Anything else (a
 * delegation) is refused at checkpoint.
 *
 * At checkpoint the tree still holds its locks; at restart after --kill
 * they are free.  A lock held meanwhile by someone else (the original,
 * still running, or any other process) fails the restart naming the file
 * and, where the kernel tells, the holder.
 *
 * F_SETOWN/F_SETSIG: asked of each fd with remote fcntl calls, written
 * only when set, and set again at restart (the owner must exist then).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"

#define MAX_FD_NUM	(1 << 20)
#define MAX_LOCKS	(1 << 20)
#define MAX_OWNER	(1 << 22)	/* PID_MAX_LIMIT */

static const char *const lock_names[] = { "?", "POSIX", "flock", "OFD", "lease" };

/* ---- checkpoint ---- */

/* A lease's line: "LEASE  ACTIVE|BREAKING  READ|WRITE|UNLCK", the type
 * of a breaking one being the one it goes to (see LEASE_TO_*). */
static int parse_lease(const char *state, const char *type, int acc,
		       struct rec_lock *l)
{
	bool breaking = !strcmp(state, "BREAKING");

	l->kind = LOCK_LEASE;
	if (!breaking && strcmp(state, "ACTIVE"))
		return -EOPNOTSUPP;
	if (!breaking) {
		l->type = !strcmp(type, "READ") ? F_RDLCK : F_WRLCK;
		return strcmp(type, "READ") && strcmp(type, "WRITE") ? -EOPNOTSUPP : 0;
	}
	/* only a writable description can hold a write lease; a read-only
	 * one's is taken as a read lease, which breaks the same way */
	l->type = acc == O_RDONLY ? F_RDLCK : F_WRLCK;
	l->lease_break = !strcmp(type, "UNLCK") ? LEASE_TO_NONE :
			 !strcmp(type, "READ") && l->type == F_WRLCK ? LEASE_TO_READ : 0;
	return l->lease_break ? 0 : -EOPNOTSUPP;
}

/* One "lock:" line of fdinfo into @l (@acc: the description's access
 * mode); -EOPNOTSUPP with @what set for a lock we do not restore (a
 * delegation...). */
static int parse_lock(const char *line, int acc, struct rec_lock *l, char *what,
		      size_t n)
{
	char kind[16] = "", state[16] = "", type[16] = "", end[32] = "";
	unsigned long long start = 0;

	if (sscanf(line, "%*d: %15s %15s %15s %*d %*s %llu %31s", kind, state, type, &start,
		   end) != 5 || start > INT64_MAX) {
		snprintf(what, n, "unreadable lock line");
		return -EOPNOTSUPP;
	}
	memset(l, 0, sizeof(*l));
	snprintf(what, n, "%s %s %s", kind, state, type);
	if (!strcmp(kind, "LEASE"))
		return parse_lease(state, type, acc, l);
	l->kind = !strcmp(kind, "POSIX") ? LOCK_POSIX : !strcmp(kind, "FLOCK") ? LOCK_FLOCK :
		  !strcmp(kind, "OFDLCK") ? LOCK_OFD : 0;
	l->type = !strcmp(type, "READ") ? F_RDLCK : !strcmp(type, "WRITE") ? F_WRLCK : F_UNLCK;
	if (!l->kind || l->type == F_UNLCK)
		return -EOPNOTSUPP;
	l->start = start;
	if (strcmp(end, "EOF")) {
		unsigned long long e = strtoull(end, NULL, 10);

		if (e < start || e > INT64_MAX - 1)
			return -EOPNOTSUPP;
		l->len = e - start + 1;
	}
	return 0;
}

/* The checkpoint's: the descriptions whose lease is written (once each,
 * however many fds and processes have it). */
struct locks_cpt {
	uint32_t *leased;
	int n;
	size_t cap;
};

/* Is this lease written already?  Else noted as written. */
static int lease_seen(struct cpt_ctx *c, pid_t pid, int fd, bool *seen)
{
	struct locks_cpt *lc = kind_dump_state(c, &kind_locks);
	uint32_t id = files_known(c, pid, fd), *slot;

	*seen = false;
	for (int i = 0; i < lc->n && !*seen; i++)
		*seen = lc->leased[i] == id;
	if (*seen)
		return 0;
	slot = VEC_PUSH(lc->leased, lc->n, lc->cap);
	if (!slot)
		return log_err(c->log, ENOMEM, "leases:");
	*slot = id;
	return 0;
}

static int dump_fd_locks(struct cpt_ctx *c, struct cpt_task *t, int fd,
			 const char *info, int acc)
{
	const char *q = info;
	int ret = 0;

	while (!ret && (q = strstr(q, "\nlock:\t"))) {
		struct rec_lock l;
		char what[64], path[CKPT_PATH_MAX] = "?", name[32];
		bool seen = false;

		q += 7;
		ret = parse_lock(q, acc, &l, what, sizeof(what));
		l.fd = fd;
		if (ret) {
			snprintf(name, sizeof(name), "fd/%d", fd);
			proc_readlink(t->pid, name, path, sizeof(path));
			return log_err(c->log, -ret, "pid %d fd %d: a %s lock (or lease) on %s, not supported",
				       t->pid, fd, what, path);
		}
		if (l.kind == LOCK_LEASE)
			ret = lease_seen(c, t->pid, fd, &seen);
		if (!ret && !seen)
			ret = iw_record(&c->w, REC_LOCK, &l, sizeof(l));
	}
	return ret;
}

/* Owners read at once (remote_calls()): two calls a descriptor, their
 * f_owner_ex structs in the scratch, the table after them. */
#define FOWN_BATCH	(REMOTE_BATCH_MAX / 2)
#define FOWN_TABLE	256

_Static_assert(FOWN_BATCH * sizeof(struct f_owner_ex) <= FOWN_TABLE,
	       "the owners fit below the table");

/* The owner and signal of @fds (F_SETOWN, F_SETSIG), where set. */
static int dump_owners(struct cpt_ctx *c, struct cpt_task *t, const int *fds, int n)
{
	struct f_owner_ex ow[FOWN_BATCH];
	long nr[2 * FOWN_BATCH], a[2 * FOWN_BATCH][6], res[2 * FOWN_BATCH];
	const char *what[2 * FOWN_BATCH];
	int ret = 0;

	if (t->scratch_len < FOWN_TABLE + REMOTE_BATCH_BYTES)
		return log_err(c->log, ENOSPC, "pid %d: scratch too small for fd owners", t->pid);
	for (int i = 0; i < n && !ret; i += FOWN_BATCH) {
		int m = n - i < FOWN_BATCH ? n - i : FOWN_BATCH;

		memset(a, 0, sizeof(a));
		for (int j = 0; j < m; j++) {
			nr[2 * j] = nr[2 * j + 1] = SYS_fcntl;
			a[2 * j][0] = a[2 * j + 1][0] = fds[i + j];
			a[2 * j][1] = F_GETOWN_EX;
			a[2 * j][2] = t->scratch + j * sizeof(ow[0]);
			a[2 * j + 1][1] = F_GETSIG;
			what[2 * j] = "fcntl(F_GETOWN_EX) of fd";
			what[2 * j + 1] = "fcntl(F_GETSIG) of fd";
		}
		ret = remote_calls(&t->rm, t->scratch + FOWN_TABLE, 2 * m, what, nr,
				   (const long (*)[6])a, res);
		if (!ret)
			ret = remote_read(&t->rm, t->scratch, ow, m * sizeof(ow[0]));
		for (int j = 0; j < m && !ret; j++) {
			struct rec_fown r = { .fd = fds[i + j], .owner_type = ow[j].type,
					      .owner = ow[j].pid, .signo = res[2 * j + 1] };

			if (ow[j].pid || r.signo)
				ret = iw_record(&c->w, REC_FOWN, &r, sizeof(r));
		}
	}
	return ret;
}

/* The fds the files kind wrote, from its notes: their lock lines, and
 * those that may have an owner into @fds. */
static int dump_noted(struct cpt_ctx *c, struct cpt_task *t, const struct fd_note *nt,
		      size_t nn, int *fds, int *n)
{
	int ret = 0;

	for (size_t i = 0; i < nn && !ret; i++) {
		if (nt[i].locks)
			ret = dump_fd_locks(c, t, nt[i].fd, nt[i].locks, nt[i].flags & O_ACCMODE);
		/* an O_PATH fd has no owner: fcntl refuses it */
		if (!(nt[i].flags & O_PATH))
			fds[(*n)++] = nt[i].fd;
	}
	return ret;
}

static int locks_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	const struct fd_note *nt;
	int *fds, n = 0, ret;
	size_t nn;

	if (t->shares_files)
		return 0;	/* its parent's table: its locks are written there */
	/* every fd the image has, the files kind noted (one it left out,
	 * --skip-unsupported, has no locks in the image) */
	nt = files_notes(c, t->pid, &nn);
	fds = malloc((nn ? nn : 1) * sizeof(*fds));
	if (!fds)
		return log_err(c->log, ENOMEM, "pid %d: fds:", t->pid);
	ret = dump_noted(c, t, nt, nn, fds, &n);
	if (!ret)
		ret = dump_owners(c, t, fds, n);
	free(fds);
	return ret;
}

static void locks_dump_free(struct cpt_ctx *c, void *state)
{
	struct locks_cpt *lc = state;

	(void)c;
	free(lc->leased);
}

/* ---- restart ---- */

struct locks_state {
	struct rec_lock *l;
	uint32_t nl;
	size_t cap_l;
	struct rec_fown *o;
	uint32_t no;
	size_t cap_o;
};

static int load_lock(struct rst_ctx *c, struct locks_state *s, struct rec *r)
{
	const struct rec_lock *l = r->data;
	bool lease;

	if (r->data_len != sizeof(*l))
		return log_err(c->log, EBADMSG, "bad LOCK record %llu: %llu bytes",
			       (unsigned long long)r->index, (unsigned long long)r->data_len);
	lease = l->kind == LOCK_LEASE;
	if (l->fd >= MAX_FD_NUM ||
	    l->kind < LOCK_POSIX || l->kind > LOCK_LEASE ||
	    (l->type != F_RDLCK && l->type != F_WRLCK) || l->start > INT64_MAX ||
	    l->len > INT64_MAX - l->start || s->nl >= MAX_LOCKS ||
	    ((l->kind == LOCK_FLOCK || lease) && (l->start || l->len)) ||
	    (!lease && l->lease_break) || l->lease_break > LEASE_TO_NONE ||
	    (l->lease_break == LEASE_TO_READ && l->type != F_WRLCK))
		return log_err(c->log, EBADMSG, "bad LOCK record %llu",
			       (unsigned long long)r->index);
	if (VEC_ROOM(s->l, s->nl, s->cap_l))
		return log_err(c->log, ENOMEM, "locks:");
	s->l[s->nl++] = *l;
	return 0;
}

static int load_fown(struct rst_ctx *c, struct locks_state *s, struct rec *r)
{
	const struct rec_fown *o = r->data;

	if (r->data_len != sizeof(*o) || o->fd >= MAX_FD_NUM || o->owner < 0 ||
	    o->owner >= MAX_OWNER || o->signo > 64 || s->no >= MAX_FD_NUM ||
	    (o->owner_type != F_OWNER_TID && o->owner_type != F_OWNER_PID &&
	     o->owner_type != F_OWNER_PGRP))
		return log_err(c->log, EBADMSG, "bad FOWN record %llu",
			       (unsigned long long)r->index);
	if (VEC_ROOM(s->o, s->no, s->cap_o))
		return log_err(c->log, ENOMEM, "fd owners:");
	s->o[s->no++] = *o;
	return 0;
}

static int locks_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct locks_state *s = kind_state(t, &kind_locks, sizeof(*s));

	if (!s)
		return log_err(c->log, ENOMEM, "locks state:");
	if (t->t.flags & TASK_SHARES_FILES)
		return log_err(c->log, EBADMSG, "pid %d: LOCK/FOWN record, but it shares its parent's fds",
			       t->pid);
	return r->type == REC_LOCK ? load_lock(c, s, r) : load_fown(c, s, r);
}

/* Each names an fd the process has. */
static int locks_check(struct rst_ctx *c, struct rst_task *t)
{
	const struct locks_state *s = KSTATE(t, kind_locks);

	for (uint32_t i = 0; s && i < s->nl; i++)
		if (!files_id_at(c, t, s->l[i].fd))
			return log_err(c->log, EBADMSG, "pid %d: LOCK on fd %u, which it has not",
				       t->pid, s->l[i].fd);
	for (uint32_t i = 0; s && i < s->no; i++)
		if (!files_id_at(c, t, s->o[i].fd))
			return log_err(c->log, EBADMSG, "pid %d: FOWN of fd %u, which it has not",
				       t->pid, s->o[i].fd);
	return 0;
}

/* Someone else has it: say who, as far as the kernel tells. */
static int conflict(struct rst_task *t, const struct rec_lock *l, uint64_t at)
{
	struct flock fl = { 0 };
	char name[32], path[CKPT_PATH_MAX] = "?";
	long got = -1;

	snprintf(name, sizeof(name), "fd/%u", l->fd);
	proc_readlink(t->pid, name, path, sizeof(path));
	if (l->kind != LOCK_FLOCK &&
	    !rcall(&t->rm, &got, SYS_fcntl, l->fd,
		   l->kind == LOCK_OFD ? F_OFD_GETLK : F_GETLK, at) && !got &&
	    !remote_read(&t->rm, at, &fl, sizeof(fl)) && fl.l_type != F_UNLCK &&
	    fl.l_pid > 0)
		return log_err(t->rm.log, EAGAIN,
			       "pid %d fd %u: %s is locked by another process (pid %d): cannot take its %s lock again",
			       t->pid, l->fd, path, fl.l_pid, lock_names[l->kind]);
	return log_err(t->rm.log, EAGAIN,
		       "pid %d fd %u: %s is locked by another process: cannot take its %s lock again",
		       t->pid, l->fd, path, lock_names[l->kind]);
}

static int take_lock(struct rst_task *t, const struct rec_lock *l)
{
	struct flock fl = { .l_type = l->type, .l_whence = SEEK_SET,
			    .l_start = l->start, .l_len = l->len };
	uint64_t at;
	long got;
	int ret = rst_scratch_put(t, 0, &fl, sizeof(fl), &at);

	if (ret)
		return ret;
	if (l->kind == LOCK_FLOCK)
		ret = rcall(&t->rm, &got, SYS_flock, l->fd,
			    (l->type == F_WRLCK ? LOCK_EX : LOCK_SH) | LOCK_NB);
	else
		ret = rcall(&t->rm, &got, SYS_fcntl, l->fd,
			    l->kind == LOCK_OFD ? F_OFD_SETLK : F_SETLK, at);
	if (ret)
		return ret;
	if (got == -EAGAIN || got == -EACCES)
		return conflict(t, l, at);
	if (got < 0)
		return log_err(t->rm.log, (int)-got, "pid %d fd %u: taking its %s lock:",
			       t->pid, l->fd, lock_names[l->kind]);
	return 0;
}

/* Broken again as it was being broken at the checkpoint: ckpt opens the
 * file the way that breaks it, without waiting (EWOULDBLOCK).  Its
 * break signal was delivered before the checkpoint: this break sends
 * none, the description having no owner meanwhile (its FOWN, after, puts
 * the owner back). */
static int break_lease(struct rst_task *t, const struct rec_lock *l)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%u", t->pid, l->fd);
	fd = open(path, (l->lease_break == LEASE_TO_NONE ? O_WRONLY : O_RDONLY) |
		 O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return log_err(t->rm.log, EIO, "pid %d fd %u: its lease did not break again",
			       t->pid, l->fd);
	}
	if (errno != EWOULDBLOCK)
		return log_err(t->rm.log, errno, "pid %d fd %u: breaking its lease again:",
			       t->pid, l->fd);
	return 0;
}

/* A lease is the description's, taken by the process as its own
 * credentials allow (the file's owner, or CAP_LEASE). */
static int take_lease(struct rst_task *t, const struct rec_lock *l)
{
	long got;
	int ret = rcall(&t->rm, &got, SYS_fcntl, l->fd, F_SETLEASE, l->type);

	if (!ret && got == -EAGAIN)
		return log_err(t->rm.log, EAGAIN,
			       "pid %d fd %u: cannot take its %s lease again: the file is open elsewhere",
			       t->pid, l->fd, l->type == F_WRLCK ? "write" : "read");
	if (!ret && got < 0)
		return log_err(t->rm.log, (int)-got, "pid %d fd %u: taking its %s lease again:",
			       t->pid, l->fd, l->type == F_WRLCK ? "write" : "read");
	/* F_SETLEASE made the process the owner: the FOWN record says who */
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETOWN)", SYS_fcntl, l->fd, F_SETOWN, 0);
	return ret || !l->lease_break ? ret : break_lease(t, l);
}

static int set_fown(struct rst_task *t, const struct rec_fown *o)
{
	struct f_owner_ex ow = { .type = o->owner_type, .pid = o->owner };
	uint64_t at;
	long got = 0;
	int ret = rst_scratch_put(t, 0, &ow, sizeof(ow), &at);

	if (!ret && o->owner)
		ret = rcall(&t->rm, &got, SYS_fcntl, o->fd, F_SETOWN_EX, at);
	if (!ret && o->owner && got < 0)
		return log_err(t->rm.log, (int)-got, "pid %d fd %u: setting its owner %s %d again:",
			       t->pid, o->fd, o->owner_type == F_OWNER_TID ? "thread" :
			       o->owner_type == F_OWNER_PID ? "process" : "process group",
			       o->owner);
	if (!ret && o->signo)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETSIG)", SYS_fcntl, o->fd,
			     F_SETSIG, o->signo);
	return ret;
}

static int locks_restore(struct rst_ctx *c, struct rst_task *t)
{
	const struct locks_state *s = KSTATE(t, kind_locks);
	int ret = 0;

	for (uint32_t i = 0; s && i < s->nl && !ret; i++)
		ret = s->l[i].kind == LOCK_LEASE ? take_lease(t, &s->l[i]) : take_lock(t, &s->l[i]);
	for (uint32_t i = 0; s && i < s->no && !ret; i++)
		ret = set_fown(t, &s->o[i]);
	return ret;
}

static void locks_free(struct rst_task *t, void *state)
{
	struct locks_state *s = state;

	free(s->l);
	free(s->o);
	free(s);
}

static void locks_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_LOCK) {
		const struct rec_lock *l = r->data;

		info_u64(o, "fd", l->fd);
		info_str(o, "kind", l->kind <= LOCK_LEASE ? lock_names[l->kind] : "?");
		info_str(o, "type", l->type == F_RDLCK ? "read" : l->type == F_WRLCK ? "write" : "?");
		if (l->lease_break)
			info_str(o, "breaking_to", l->lease_break == LEASE_TO_READ ? "read" : "none");
		info_u64(o, "start", l->start);
		info_u64(o, "len", l->len);
	} else {
		const struct rec_fown *w = r->data;

		info_u64(o, "fd", w->fd);
		info_u64(o, "owner_type", (uint32_t)w->owner_type);
		info_u64(o, "owner", (uint32_t)w->owner);
		info_u64(o, "signo", w->signo);
	}
}

static const struct rec_desc locks_recs[] = {
	{ REC_LOCK, "LOCK", sizeof(struct rec_lock) },
	{ REC_FOWN, "FOWN", sizeof(struct rec_fown) },
	{ 0 }
};

const struct kind_ops kind_locks = {
	.name = "locks",
	.recs = locks_recs,
	.phase = PHASE_STATE,
	.dump = locks_dump,
	.dump_size = sizeof(struct locks_cpt),
	.dump_free = locks_dump_free,
	.load = locks_load,
	.check = locks_check,
	.restore = locks_restore,
	.free = locks_free,
	.show = locks_show,
};
