/* chain.c - restart of an incremental image (checkpoint --parent): the
 * image and its parents, up to a whole one, made into one whole image in
 * a memfd that the restart then reads as any other.
 *
 * Each image names its parent by path and by the parent's size, HEAD
 * time and TAIL (record count and checksum chain): a parent missing or
 * not that one is refused before anything is made.  Every parent is
 * read whole, every record's checksum checked, from the oldest: each one
 * gives, per process, where each page it has is (its own PAGES, its
 * PAGES_PARENT resolved in its parent, its PAGES_REF in its parent
 * process).  The last image is copied into a memfd, its own pages with
 * it, each PAGES_PARENT made a PAGES_AT that says in which parent and
 * where its pages are: restart reads them from there (the parents stay
 * open), so that the unchanged gigabytes are not copied once more into
 * fresh memory, which costs more here than reading them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "auth.h"
#include "chain.h"
#include "ctx.h"
#include "image.h"
#include "vec.h"
#include "page.h"

#define MAX_CHAIN	CKPT_MAX_CHAIN
#define COPY_BUF	(1 << 20)

/* Pages at @addr: @npages of them in file @fd at @off. */
struct src {
	uint64_t addr, npages;
	int fd;
	uint64_t off;
};

struct pview {		/* one process's pages in one image */
	pid_t pid;
	struct src *s;
	size_t n, cap;
};

struct view {		/* an image's */
	struct pview *p;
	size_t n, cap;
};

struct link {
	int fd;
	char *path;		/* as opened */
	struct rec_parent want;	/* what its child recorded of it */
	struct view v;
	bool shared;		/* others may write it */
};

struct walk {
	struct ckpt_log *log;
	struct link *l;		/* the image walked */
	const struct link *all;	/* the chain: all[0] the last image */
	int n;
	bool copy_all;		/* every page copied out, none left where it
				 * is (a container's: its engine restarts it) */
	const struct view *pv;	/* its parent's view, NULL for the root */
	struct img_writer *out;	/* the last image's: written out */
	pid_t pid, ppid;
	struct pview *cur;
	struct src *pend;	/* a VMA's pages waiting for all of them */
	size_t npend, cap_pend;
	uint64_t pend_vma;
	char *buf;
};

static int src_cmp(const void *a, const void *b)
{
	const struct src *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static struct pview *view_of(const struct view *v, pid_t pid)
{
	for (size_t i = 0; v && i < v->n; i++)
		if (v->p[i].pid == pid)
			return &v->p[i];
	return NULL;
}

static const struct src *src_at(const struct pview *p, uint64_t addr)
{
	size_t lo = 0, hi = p ? p->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct src *s = &p->s[mid];

		if (s->addr + s->npages * PAGE <= addr)
			lo = mid + 1;
		else if (s->addr > addr)
			hi = mid;
		else
			return s;
	}
	return NULL;
}

static int pend_add(struct walk *w, uint64_t addr, uint64_t n, int fd, uint64_t off)
{
	struct src *s = VEC_PUSH(w->pend, w->npend, w->cap_pend);

	if (!s)
		return log_err(w->log, ENOMEM, "image chain:");
	*s = (struct src){ addr, n, fd, off };
	return 0;
}

/* Pages the image has that its own PAGES_REF gives: in the view only. */
static int view_add(struct walk *w, uint64_t addr, uint64_t n, int fd, uint64_t off)
{
	struct src *s = VEC_PUSH(w->cur->s, w->cur->n, w->cur->cap);

	if (!s)
		return log_err(w->log, ENOMEM, "image chain:");
	*s = (struct src){ addr, n, fd, off };
	return 0;
}

/* The runs of @p's pages @run resolved in @from (a parent image's or
 * the parent process's view), into the pending pages. */
static int resolve(struct walk *w, const struct pview *from,
		   const struct rec_pages_run *run, uint32_t n, const char *what,
		   bool view_only)
{
	int ret = 0;

	for (uint32_t i = 0; i < n && !ret; i++) {
		uint64_t a = run[i].addr, end = a + run[i].npages * PAGE;

		while (a < end && !ret) {
			const struct src *s = src_at(from, a);
			uint64_t send, k;

			if (!s)
				return log_err(w->log, EBADMSG,
					       "%s: pid %d's page 0x%llx is not in %s",
					       w->l->path, w->pid, (unsigned long long)a, what);
			send = s->addr + s->npages * PAGE;
			k = ((send < end ? send : end) - a) / PAGE;
			if (!k)		/* a run or source not on a page */
				return log_err(w->log, EBADMSG, "%s: pid %d's page 0x%llx: runs not on pages",
					       w->l->path, w->pid, (unsigned long long)a);
			ret = (view_only ? view_add : pend_add)(w, a, k, s->fd,
								 s->off + (a - s->addr));
			a += k * PAGE;
		}
	}
	return ret;
}

static int copy_out(struct walk *w, int fd, uint64_t off, uint64_t len)
{
	while (len) {
		size_t n = len < COPY_BUF ? len : COPY_BUF;
		ssize_t k = pread(fd, w->buf, n, off);

		if (k != (ssize_t)n)
			return log_err(w->log, k < 0 ? errno : EIO, "reading an image of the chain:");
		if (iw_write(w->out, w->buf, n))
			return -EIO;
		off += n;
		len -= n;
	}
	return 0;
}

static int file_of(const struct walk *w, int fd)
{
	for (int k = 0; k < w->n; k++)
		if (w->all[k].fd == fd)
			return k;
	return -1;
}

/* The last image's own pages of the pending ones, out as a PAGES
 * record with their data. */
static int out_own(struct walk *w, struct rec_pages_run *runs)
{
	struct rec_pages ph = { .vma_start = w->pend_vma };
	uint64_t head, at;
	int ret = 0;

	for (size_t i = 0; i < w->npend; i++) {
		const struct src *s = &w->pend[i];
		struct rec_pages_run *last = ph.nr_runs ? &runs[ph.nr_runs - 1] : NULL;

		if (s->fd != w->l->fd && !w->copy_all)
			continue;
		if (last && s->addr == last->addr + last->npages * PAGE)
			last->npages += s->npages;
		else
			runs[ph.nr_runs++] = (struct rec_pages_run){ s->addr, s->npages };
		ph.npages += s->npages;
	}
	if (!ph.nr_runs)
		return 0;
	head = sizeof(ph) + ph.nr_runs * sizeof(*runs);
	at = w->out->pos + sizeof(struct rec_hdr) + head;
	ph.pad_len = (PAGE - (at & (PAGE - 1))) & (PAGE - 1);
	ret = iw_begin(w->out, REC_PAGES, head + ph.pad_len + ph.npages * PAGE);
	if (!ret)
		ret = iw_write(w->out, &ph, sizeof(ph));
	if (!ret)
		ret = iw_write(w->out, runs, ph.nr_runs * sizeof(*runs));
	if (!ret)
		ret = iw_zero(w->out, ph.pad_len);
	for (size_t i = 0; i < w->npend && !ret; i++)
		if (w->pend[i].fd == w->l->fd || w->copy_all)
			ret = copy_out(w, w->pend[i].fd, w->pend[i].off,
				       w->pend[i].npages * PAGE);
	return ret ? ret : iw_end(w->out);
}

/* ... and those in its parents, out as a PAGES_AT naming where: their
 * data is read from there at restart, not copied. */
static int out_parents(struct walk *w, struct rec_pages_at *at)
{
	struct rec_pages_ref h = { .vma_start = w->pend_vma };
	int ret;

	for (size_t i = 0; i < w->npend; i++) {
		const struct src *s = &w->pend[i];
		int k = file_of(w, s->fd);

		if (k <= 0)
			continue;
		at[h.nr_runs++] = (struct rec_pages_at){ s->addr, s->npages, s->off, k, 0 };
		h.npages += s->npages;
	}
	if (!h.nr_runs)
		return 0;
	ret = iw_begin(w->out, REC_PAGES_AT, sizeof(h) + h.nr_runs * sizeof(*at));
	if (!ret)
		ret = iw_write(w->out, &h, sizeof(h));
	if (!ret)
		ret = iw_write(w->out, at, h.nr_runs * sizeof(*at));
	return ret ? ret : iw_end(w->out);
}

/* The pending pages of a VMA: into the view, and out (the last image). */
static int flush(struct walk *w)
{
	struct rec_pages_at *at;
	int ret = 0;

	if (!w->npend)
		return 0;
	qsort(w->pend, w->npend, sizeof(*w->pend), src_cmp);
	for (size_t i = 0; i < w->npend && !ret; i++) {
		const struct src *s = &w->pend[i];

		if (i && s->addr < w->pend[i - 1].addr + w->pend[i - 1].npages * PAGE)
			ret = log_err(w->log, EBADMSG, "%s: pid %d's page 0x%llx saved twice",
				      w->l->path, w->pid, (unsigned long long)s->addr);
		if (!ret && w->cur && !VEC_PUSH(w->cur->s, w->cur->n, w->cur->cap))
			ret = log_err(w->log, ENOMEM, "image chain:");
		if (!ret && w->cur)
			w->cur->s[w->cur->n - 1] = *s;
	}
	at = ret || !w->out ? NULL : calloc(w->npend, sizeof(*at));
	if (!ret && w->out && !at)
		ret = log_err(w->log, ENOMEM, "image chain:");
	if (!ret && w->out)
		ret = out_own(w, (struct rec_pages_run *)at);
	if (!ret && w->out && !w->copy_all)
		ret = out_parents(w, at);
	free(at);
	w->npend = 0;
	return ret;
}

static int new_task(struct walk *w, const struct rec *r)
{
	const struct rec_task *t = r->data;

	if (r->data_len < sizeof(*t))
		return log_err(w->log, EBADMSG, "%s: short TASK record", w->l->path);
	if (w->cur && w->cur->n)	/* done: its children look pages up in it */
		qsort(w->cur->s, w->cur->n, sizeof(*w->cur->s), src_cmp);
	w->pid = t->pid;
	w->ppid = t->ppid;
	if (view_of(&w->l->v, w->pid))
		return log_err(w->log, EBADMSG, "%s: pid %d twice", w->l->path, w->pid);
	w->cur = VEC_PUSH(w->l->v.p, w->l->v.n, w->l->v.cap);
	if (!w->cur)
		return log_err(w->log, ENOMEM, "image chain:");
	*w->cur = (struct pview){ .pid = w->pid };
	return 0;
}

static int copy_record(struct walk *w, const struct rec *r, const void *head);

/* Runs on pages, in order, none empty, none past the address space:
 * the chain is walked before the memory kind checks anything. */
static bool runs_bad(const struct rec_pages_run *run, uint32_t n, uint64_t *total)
{
	uint64_t next = 0;

	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (run[i].addr % PAGE || run[i].addr < next || !run[i].npages ||
		    run[i].npages > (UINT64_MAX - run[i].addr) / PAGE)
			return true;
		next = run[i].addr + run[i].npages * PAGE;
		*total += run[i].npages;
	}
	return false;
}

/* PAGES, PAGES_PARENT, PAGES_REF: the pages of a VMA, gathered. */
static int vma_pages(struct walk *w, const struct rec *r)
{
	const struct rec_pages_ref *h = r->data;
	const struct rec_pages_run *run = (const void *)(h + 1);
	uint64_t off;
	int ret = 0;

	uint64_t total;

	if (!w->cur || r->data_len < sizeof(*h) ||
	    (r->type != REC_PAGES &&
	     r->data_len != sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*run)) ||
	    (r->type == REC_PAGES &&
	     r->data_len < sizeof(struct rec_pages) + (uint64_t)h->nr_runs * sizeof(*run)) ||
	    runs_bad(run, h->nr_runs, &total))
		return log_err(w->log, EBADMSG, "%s: bad %s record %llu", w->l->path,
			       rec_type_name(r->type), (unsigned long long)r->index);
	if (w->npend && w->pend_vma != h->vma_start && (ret = flush(w)))
		return ret;
	w->pend_vma = h->vma_start;
	if (r->type == REC_PAGES_REF) {	/* and written out as it is */
		ret = flush(w);
		if (!ret)
			ret = resolve(w, view_of(&w->l->v, w->ppid), run, h->nr_runs,
				      "its parent process", true);
		return !ret && w->out ? copy_record(w, r, r->data) : ret;
	}
	if (r->type == REC_PAGES_PARENT) {
		if (!h->nr_runs || h->reserved || total != h->npages)
			return log_err(w->log, EBADMSG, "%s: PAGES_PARENT record %llu: bad header",
				       w->l->path, (unsigned long long)r->index);
		if (!w->pv)
			return log_err(w->log, EBADMSG, "%s: PAGES_PARENT in an image with no parent",
				       w->l->path);
		return resolve(w, view_of(w->pv, w->pid), run, h->nr_runs,
			       "its parent image", false);
	}
	/* PAGES: the reader checked its runs' sizes against its length */
	off = sizeof(struct rec_pages) + h->nr_runs * sizeof(*run) +
	      (uint64_t)((const struct rec_pages *)h)->pad_len;
	if (off > r->len)
		return log_err(w->log, EBADMSG, "%s: PAGES record %llu: padding past its end",
			       w->l->path, (unsigned long long)r->index);
	off += r->off;
	for (uint32_t i = 0; i < h->nr_runs && !ret; i++) {
		if (run[i].npages > (r->off + r->len - off) / PAGE)
			return log_err(w->log, EBADMSG, "%s: PAGES record %llu: sizes do not add up",
				       w->l->path, (unsigned long long)r->index);
		ret = pend_add(w, run[i].addr, run[i].npages, w->l->fd, off);
		off += run[i].npages * PAGE;
	}
	return ret;
}

static int copy_record(struct walk *w, const struct rec *r, const void *head)
{
	int ret = iw_begin(w->out, r->type, r->len);

	if (!ret && head)
		ret = iw_write(w->out, head, r->len);
	else if (!ret)
		ret = copy_out(w, w->l->fd, r->off, r->len);
	return ret ? ret : iw_end(w->out);
}

/* Every record of image @l, checked, into its view; and with w->out,
 * out again as one whole image. */
static int walk(struct walk *w)
{
	struct img_reader r;
	struct rec rec;
	int ret = ir_init(&r, w->l->fd, w->log);

	while (!ret && (ret = ir_next(&r, &rec)) == 1) {
		ret = 0;
		if (rec.type == REC_PAGES_AT) {	/* ours, made here: never in a file */
			free(rec.data);
			ret = log_err(w->log, EBADMSG, "%s: record %llu: PAGES_AT in an image file",
				      w->l->path, (unsigned long long)rec.index);
			break;
		}
		if (rec.type == REC_PAGES || rec.type == REC_PAGES_PARENT ||
		    rec.type == REC_PAGES_REF) {
			ret = vma_pages(w, &rec);
			free(rec.data);
			continue;
		}
		ret = flush(w);
		if (!ret && rec.type == REC_TASK)
			ret = new_task(w, &rec);
		if (!ret && rec.type == REC_HEAD && rec.data_len >= sizeof(struct rec_head)) {
			struct rec_head *h = rec.data;

			h->flags &= ~(uint64_t)CKPT_PARENT;	/* whole now */
		}
		if (!ret && w->out && rec.type != REC_PARENT && rec.type != REC_AUTH)
			ret = copy_record(w, &rec, rec.data_len == rec.len ? rec.data : NULL);
		free(rec.data);
	}
	if (!ret)
		ret = flush(w);
	/* (a task with no pages has none to sort: qsort takes no NULL) */
	if (!ret && w->cur && w->cur->n)
		qsort(w->cur->s, w->cur->n, sizeof(*w->cur->s), src_cmp);
	if (!ret && w->out)
		ret = iw_tail(w->out);
	ir_free(&r);
	return ret;
}

/* The image's HEAD, and its PARENT if it has one (*@has). */
static int scan_parent(struct ckpt_log *log, struct link *l, struct rec_head *head,
		       struct rec_parent *p, char **path)
{
	struct img_reader r;
	struct rec rec;
	int ret = ir_init(&r, l->fd, log);

	*path = NULL;
	r.defer = true;
	while (!ret && (ret = ir_next(&r, &rec)) == 1) {
		ret = 0;
		if (rec.type == REC_HEAD && rec.data_len >= sizeof(*head)) {
			*head = *(struct rec_head *)rec.data;
		} else if (rec.type == REC_PARENT) {
			const struct rec_parent *rp = rec.data;
			const char *s = rec.data_len >= sizeof(*rp) ?
					rec_str(&rec, sizeof(*rp), rp->path_len) : NULL;

			if (!s || !*s || *path || rp->path_len > PATH_MAX)
				ret = log_err(log, EBADMSG, "%s: bad PARENT record", l->path);
			else if (!(*path = strdup(s)))
				ret = log_err(log, ENOMEM, "image chain:");
			else
				*p = *rp;
		}
		free(rec.data);
	}
	ir_free(&r);
	if (!ret && !!(head->flags & CKPT_PARENT) != !!*path)
		ret = log_err(log, EBADMSG, "%s: HEAD and PARENT records disagree", l->path);
	return ret;
}

static int tail_of(int fd, uint64_t size, struct rec_tail *t)
{
	uint64_t at = size - sizeof(struct rec_trailer) - sizeof(*t);

	if (size < 64 || pread(fd, t, sizeof(*t), at) != (ssize_t)sizeof(*t))
		return -EIO;
	return 0;
}

/* @l's parent, opened and checked against what @l recorded of it. */
static int open_parent(struct ckpt_log *log, const struct link *l, const char *rel,
		       const struct rec_parent *want, struct link *p)
{
	const char *slash = strrchr(l->path, '/');
	struct rec_tail t;
	struct rec_head h = { 0 };
	struct rec_parent dummy;
	struct stat st;
	char *pp;
	off_t size;
	int ret;

	if (rel[0] == '/' || !slash)
		p->path = strdup(rel);
	else if (asprintf(&p->path, "%.*s/%s", (int)(slash - l->path), l->path, rel) < 0)
		p->path = NULL;
	if (!p->path)
		return log_err(log, ENOMEM, "image chain:");
	p->want = *want;
	/* a path from the image: a regular file only (a FIFO would hang
	 * the restart, a device be opened for nothing) */
	p->fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (p->fd < 0)
		return log_err(log, errno, "parent image %s of %s:", p->path, l->path);
	if (fstat(p->fd, &st) || !S_ISREG(st.st_mode))
		return log_err(log, EINVAL, "parent image %s of %s: not a regular file", p->path,
			       l->path);
	/* its pages are read from it after every check, at the very end:
	 * one that others may write is copied first */
	p->shared = (st.st_mode & 022) || st.st_uid != geteuid();
	size = lseek(p->fd, 0, SEEK_END);
	if (size != (off_t)want->size || tail_of(p->fd, size, &t) ||
	    t.nr_records != want->nr_records || t.chain != want->chain)
		return log_err(log, ESTALE, "parent image %s is not the one %s was made from (its size or checksum differs)",
			       p->path, l->path);
	ret = scan_parent(log, p, &h, &dummy, &pp);
	free(pp);
	if (!ret && h.time_ns != want->time_ns)
		ret = log_err(log, ESTALE, "parent image %s is not the one %s was made from (its time differs)",
			      p->path, l->path);
	/* its pages are read where they lie in it */
	if (!ret && (h.flags & CKPT_COMPRESS))
		ret = log_err(log, EOPNOTSUPP, "parent image %s is compressed, which an incremental image's parent cannot be",
			      p->path);
	return ret;
}

/* @keep: the parents' fds are the caller's now */
static void links_free(struct link *l, int n, bool keep)
{
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < l[i].v.n; k++)
			free(l[i].v.p[k].s);
		free(l[i].v.p);
		free(l[i].path);
		if (i && !keep && l[i].fd >= 0)
			close(l[i].fd);
	}
}

/* The chain from @l[0], the image, to a whole one: *@n links. */
static int find_chain(struct ckpt_log *log, struct link *l, int *n,
		      const void *key, size_t key_len)
{
	struct rec_head h = { 0 };
	struct rec_parent p;
	char *rel;
	int ret = 0;

	*n = 1;
	while (!ret) {
		ret = scan_parent(log, &l[*n - 1], &h, &p, &rel);
		if (ret || !rel) {
			free(rel);
			break;
		}
		if (*n == MAX_CHAIN) {
			ret = log_err(log, ELOOP, "%s: a chain of more than %d images", l[0].path,
				      MAX_CHAIN);
			free(rel);
			break;
		}
		ret = open_parent(log, &l[*n - 1], rel, &p, &l[*n]);
		if (l[*n].path)
			++*n;
		if (!ret && key)
			ret = auth_verify(l[*n - 1].fd, key, key_len, log);
		free(rel);
	}
	return ret;
}

int chain_depth(const char *path, struct ckpt_log *log)
{
	struct link l[MAX_CHAIN] = { 0 };
	int n = 0, ret;

	l[0].fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	l[0].path = strdup(path);
	if (l[0].fd < 0 || !l[0].path)
		ret = log_err(log, l[0].path ? errno : ENOMEM, "parent image %s:", path);
	else
		ret = find_chain(log, l, &n, NULL, 0);
	links_free(l, n ? n : 1, false);
	if (l[0].fd >= 0)
		close(l[0].fd);
	return ret ? ret : n;
}

/* Its HEAD's flags; 0 for an image the reader will say is bad. */
static uint64_t head_flags(int fd)
{
	struct rec_hdr hd;
	struct rec_head h;

	if (pread(fd, &hd, sizeof(hd), 0) != sizeof(hd) || hd.type != REC_HEAD ||
	    hd.len < sizeof(h) || pread(fd, &h, sizeof(h), sizeof(hd)) != sizeof(h))
		return 0;
	return h.flags;
}

int chain_open(int *img, int orig, const void *key, size_t key_len,
	       struct ckpt_log *log, int *fds, int *nr)
{
	struct link l[MAX_CHAIN] = { 0 };
	struct img_writer out;
	struct walk w = { .log = log };
	char self[64], path[PATH_MAX];
	ssize_t k;
	int n = 0, mfd = -1, ret;

	uint64_t flags = head_flags(*img);

	if (!(flags & CKPT_PARENT))
		return 0;
	/* a container's image is restarted by its engine, in its
	 * namespaces, from the memfd alone: its pages are all copied */
	w.copy_all = (flags & HEAD_CONTAINER) || key;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", orig);
	k = readlink(self, path, sizeof(path) - 1);
	if (k <= 0 || path[0] != '/')
		return log_err(log, EINVAL, "an incremental image read from a pipe: restart it from its file, beside its parents");
	path[k] = '\0';
	l[0].fd = *img;
	l[0].path = strdup(path);
	ret = l[0].path ? find_chain(log, l, &n, key, key_len) :
			  log_err(log, ENOMEM, "image chain:");
	for (int i = 1; i < n; i++)
		w.copy_all |= l[i].shared;
	w.all = l;
	w.n = n;
	w.buf = ret ? NULL : malloc(COPY_BUF);
	if (!ret && !w.buf)
		ret = log_err(log, ENOMEM, "image chain:");
	for (int i = n - 1; i > 0 && !ret; i--) {	/* the oldest first */
		w.l = &l[i];
		w.pv = i + 1 < n ? &l[i + 1].v : NULL;
		w.cur = NULL;
		ret = walk(&w);
	}
	if (!ret) {
		mfd = memfd_create("ckpt-chain", MFD_CLOEXEC);
		ret = mfd < 0 ? log_err(log, errno, "memfd for the image chain:") :
				iw_init(&out, mfd, log);
	}
	if (!ret) {
		w.l = &l[0];
		w.pv = n > 1 ? &l[1].v : NULL;
		w.cur = NULL;
		w.out = &out;
		ret = walk(&w);
		iw_free(&out);
	}
	log_info(log, "image chain of %d: %s", n, ret ? "refused" : "assembled");
	free(w.buf);
	free(w.pend);
	if (!ret && !w.copy_all) {
		for (int i = 1; i < n; i++)
			fds[i - 1] = l[i].fd;
		*nr = n - 1;
	}
	links_free(l, n ? n : 1, !ret && !w.copy_all);
	if (ret) {
		if (mfd >= 0)
			close(mfd);
		return ret;
	}
	if (*img != orig)
		close(*img);
	*img = mfd;
	return 0;
}
