/* mm_aio.c - AIO contexts (io_setup): the ring mapping ("/[aio]
 * (deleted)") is the context, its address the context's id.  Its file
 * cannot be opened (map_files says ENXIO), but its memory reads as any
 * other.  At checkpoint the ring is saved (REC_AIO: the header's
 * nr/head/tail and the events after it); at restart io_setup makes a ring
 * of the same size, as many no-op requests as it takes bring its kernel
 * side to the saved tail (the kernel's own position is not in the ring),
 * the saved events and head are written into it, and it is moved
 * (mremap, which the kernel follows) to its saved address.
 *
 * Requests still in flight cannot be seen from outside the kernel: a
 * context is saved with its completed events only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/aio_abi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mm.h"
#include "../page.h"

#define AIO_MAGIC	0xa10a10a1u
#define AIO_HDR		32u	/* struct aio_ring, before the events */
#define AIO_EVENT	32u	/* struct io_event */
#define AIO_MAX_LEN	(8ULL << 20)
#define AIO_MAX		4096	/* rings a process may have in an image */

struct aio_hdr {
	uint32_t id, nr, head, tail;
	uint32_t magic, compat_features, incompat_features, header_length;
};

bool mm_aio_area(const struct vma *v)
{
	return v->perms[3] == 's' && !strcmp(v->path, "/[aio] (deleted)");
}

int mm_aio_dump(struct cpt_ctx *c, struct cpt_task *t, const struct vma *v)
{
	uint64_t len = v->end - v->start;
	struct rec_aio a = { .addr = v->start, .len = len };
	struct aio_hdr *h;
	uint8_t *buf;
	int ret;

	if (len < PAGE || len > AIO_MAX_LEN)
		return log_err(c->log, EOPNOTSUPP, "pid %d: AIO ring at 0x%" PRIx64 " of %" PRIu64 " bytes: not supported",
			       t->pid, v->start, len);
	buf = malloc(len);
	if (!buf)
		return log_err(c->log, ENOMEM, "AIO ring:");
	ret = remote_read(&t->rm, v->start, buf, len);
	h = (struct aio_hdr *)buf;
	if (ret)
		ret = log_err(c->log, -ret, "pid %d: reading the AIO ring at 0x%" PRIx64 ":",
			      t->pid, v->start);
	else if (h->magic != AIO_MAGIC || h->header_length != AIO_HDR ||
		 h->nr != (len - AIO_HDR) / AIO_EVENT || h->head >= h->nr || h->tail >= h->nr)
		ret = log_err(c->log, EOPNOTSUPP, "pid %d: AIO ring at 0x%" PRIx64 ": not a ring ckpt knows (magic 0x%x, nr %u, head %u, tail %u)",
			      t->pid, v->start, h->magic, h->nr, h->head, h->tail);
	if (!ret) {
		a.nr = h->nr;
		a.head = h->head;
		a.tail = h->tail;
		a.data_len = len - AIO_HDR;
		ret = iw_begin(&c->w, REC_AIO, sizeof(a) + a.data_len);
		if (!ret)
			ret = iw_write(&c->w, &a, sizeof(a));
		if (!ret)
			ret = iw_write(&c->w, buf + AIO_HDR, a.data_len);
		if (!ret)
			ret = iw_end(&c->w);
	}
	free(buf);
	return ret;
}

int mm_aio_load(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_aio *a = r->data;
	int ret = rec_want(c->log, r, sizeof(*a), "AIO");

	if (ret)
		return ret;
	if (a->addr % PAGE || a->len % PAGE || a->len < PAGE || a->len > AIO_MAX_LEN ||
	    a->addr > TASK_SIZE_64 - a->len ||
	    a->nr != (a->len - AIO_HDR) / AIO_EVENT || a->nr < 2 ||
	    a->head >= a->nr || a->tail >= a->nr || a->data_len != a->len - AIO_HDR ||
	    r->data_len != sizeof(*a) + a->data_len)
		return log_err(c->log, EBADMSG, "AIO record %llu: bad ring",
			       (unsigned long long)r->index);
	if ((s->nr && s->vmas[s->nr - 1].v.end > a->addr) || a->addr < s->aio_end)
		return log_err(c->log, EBADMSG, "AIO ring 0x%llx overlaps or is out of order",
			       (unsigned long long)a->addr);
	if (s->nr_aio == AIO_MAX)
		return log_err(c->log, EBADMSG, "too many AIO records");
	if (VEC_ROOM(s->aio, s->nr_aio, s->cap_aio))
		return log_err(c->log, ENOMEM, "AIO rings:");
	s->aio[s->nr_aio++] = a;
	s->aio_end = a->addr + a->len;
	return 0;
}

/* The new ring's kernel side brought to the saved tail: completions are
 * what moves it, so no-op writes to /dev/null are submitted, the ring's
 * head moved along so that it never fills (the kernel reads the head
 * from the ring).  Past the head the count goes round once more, as the
 * kernel counts completed events from a full turn. */
static int aio_advance(struct rst_task *t, uint64_t ctx, const struct rec_aio *a,
		       long nullfd)
{
	uint32_t count = a->tail < a->head ? a->nr + a->tail : a->tail;
	uint64_t iocb_at, ptrs_at, buf_at;
	size_t batch = (t->scratch_len - 256) / 8;
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PWRITE, .aio_nbytes = 1 };
	int ret;

	if (batch > a->nr - 1)
		batch = a->nr - 1;
	ret = rst_scratch_put(t, 0, NULL, 0, &buf_at);
	cb.aio_fildes = nullfd;
	cb.aio_buf = buf_at;
	if (!ret)
		ret = rst_scratch_put(t, 64, &cb, sizeof(cb), &iocb_at);
	if (!ret)
		ret = rst_scratch_put(t, 256, NULL, 0, &ptrs_at);
	for (size_t i = 0; i < batch && !ret; i++)
		ret = remote_write(&t->rm, ptrs_at + i * 8, &iocb_at, 8);
	for (uint32_t done = 0; done < count && !ret;) {
		uint32_t n = count - done < batch ? count - done : batch, head;
		long got;

		ret = rcheck(&t->rm, &got, "io_submit", SYS_io_submit, ctx, n, ptrs_at);
		if (!ret && got <= 0)
			ret = log_err(t->rm.log, EIO, "pid %d: io_submit of no-op requests: %ld",
				      t->pid, got);
		if (ret)
			break;
		done += got;
		head = done < a->head ? done : a->head;
		ret = remote_write(&t->rm, ctx + offsetof(struct aio_hdr, head), &head, 4);
	}
	return ret;
}

static int aio_restore_one(struct rst_task *t, const struct rec_aio *a)
{
	uint64_t ctx = 0, ctx_at;
	struct aio_hdr h;
	long nullfd = -1, res;
	int ret = rst_scratch_put(t, 0, &ctx, 8, &ctx_at);

	/* the kernel doubles what is asked, and rounds up to whole pages */
	if (!ret)
		ret = rcheck(&t->rm, NULL, "io_setup", SYS_io_setup, (a->nr - 2) / 2, ctx_at);
	if (!ret)
		ret = remote_read(&t->rm, ctx_at, &ctx, 8);
	if (!ret)
		ret = remote_read(&t->rm, ctx, &h, sizeof(h));
	if (!ret && h.nr != a->nr)
		ret = log_err(t->rm.log, EINVAL, "pid %d: AIO ring 0x%llx: io_setup made a ring of %u events, not %u (another number of CPUs?)",
			      t->pid, (unsigned long long)a->addr, h.nr, a->nr);
	if (!ret && (a->head || a->tail)) {
		ret = mm_open_file(t, "/dev/null", O_WRONLY, &nullfd);
		if (!ret)
			ret = aio_advance(t, ctx, a, nullfd);
		if (nullfd >= 0)
			rcall(&t->rm, &res, SYS_close, nullfd);
	}
	if (!ret)
		ret = remote_write(&t->rm, ctx + AIO_HDR, a + 1, a->data_len);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "mremap of the AIO ring", SYS_mremap, ctx,
			     a->len, a->len, MREMAP_MAYMOVE | MREMAP_FIXED, a->addr);
	return ret;
}

int mm_aio_restore(struct rst_task *t, const struct mm_state *s)
{
	int ret = 0;

	for (int i = 0; i < s->nr_aio && !ret; i++)
		ret = aio_restore_one(t, s->aio[i]);
	return ret;
}
