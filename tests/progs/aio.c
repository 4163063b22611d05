/* aio.c - an AIO context (io_setup) comes back at its address with its
 * ring: head, tail, size, and the completed events not yet reaped (each
 * with its data and result), and takes new requests. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <sys/syscall.h>

#include "tp.h"

struct ring {
	unsigned id, nr, head, tail, magic, compat, incompat, hdr_len;
};

static long submit(aio_context_t ctx, int fd, char *buf, unsigned long tag)
{
	struct iocb cb = { .aio_data = tag, .aio_lio_opcode = IOCB_CMD_PWRITE,
			   .aio_fildes = fd, .aio_buf = (unsigned long)buf,
			   .aio_nbytes = 1 + tag % 3 }, *p = &cb;

	return syscall(SYS_io_submit, ctx, 1, &p);
}

int main(int argc, char **argv)
{
	aio_context_t ctx = 0;
	struct io_event ev[8];
	struct ring *r, before;
	char buf[4] = "abc";
	int fd, n;

	tp_init(argc, argv);
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || syscall(SYS_io_setup, 16, &ctx))
		return printf("FAIL: io_setup: %s\n", strerror(errno)), 1;
	r = (struct ring *)ctx;
	/* round the ring more than once, leaving 3 events unreaped */
	for (unsigned long i = 0; i < r->nr + 5; i++) {
		if (submit(ctx, fd, buf, i) != 1)
			return printf("FAIL: io_submit %lu: %s\n", i, strerror(errno)), 1;
		if (i < r->nr + 2 &&
		    syscall(SYS_io_getevents, ctx, 1, 1, ev, NULL) != 1)
			return printf("FAIL: io_getevents: %s\n", strerror(errno)), 1;
	}
	before = *r;
	tp_ready();
	tp_wait_go();
	tp_check(r->nr == before.nr && r->head == before.head && r->tail == before.tail,
		 "ring nr/head/tail %u/%u/%u, was %u/%u/%u", r->nr, r->head, r->tail,
		 before.nr, before.head, before.tail);
	n = syscall(SYS_io_getevents, ctx, 0, 8, ev, NULL);
	tp_check(n == 3, "%d events left to reap, want 3 (%s)", n, strerror(errno));
	for (int i = 0; i < n && i < 3; i++) {
		unsigned long tag = before.nr + 2 + i;

		tp_check(ev[i].data == tag && ev[i].res == (long)(1 + tag % 3),
			 "event %d: data %llu res %lld, want %lu %lu", i,
			 (unsigned long long)ev[i].data, (long long)ev[i].res, tag, 1 + tag % 3);
	}
	tp_check(submit(ctx, fd, buf, 7) == 1, "io_submit after restart: %s", strerror(errno));
	n = syscall(SYS_io_getevents, ctx, 1, 8, ev, NULL);
	tp_check(n == 1 && ev[0].data == 7, "new request: %d events", n);
	tp_check(!syscall(SYS_io_destroy, ctx), "io_destroy: %s", strerror(errno));
	return tp_done();
}
