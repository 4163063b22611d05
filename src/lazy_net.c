/* lazy_net.c - the loader's pages from a page server (restart --lazy
 * --page-server; pageserver.c): the image is a memfd whose holes are the
 * server's.  Every PAGES payload is streamed through in order (holes
 * from the server, NET_DEPTH requests in flight, the rest from the
 * memfd), its checksum checked, the pages still missing placed on the
 * way; a touched page's 64 KiB block of its hole is asked for at once,
 * and must be the same bytes when the stream passes it.  A reply that
 * is not what was asked, or none, kills the process: never a zero page.
 *
 * With copiers (lazy_copy.c) the first thread only reads and checks the
 * stream, outside their hold, into buffers of theirs, and they place
 * the pieces (lazy_net_take()) while it reads the next: one thread did
 * both, and placing (UFFDIO_COPY into fresh pages) is most of the cost.
 * A fault's block waits for every piece before it, placed then by the
 * first thread itself, under the hold: a page the stream has passed
 * must come from the stream, whose checksums are checked, not from a
 * later reply that nothing compares.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "lazy_int.h"
#include "pageserver.h"

/* (the server answers no more in one request) */
_Static_assert(NET_PIECE <= PS_MAX_GET, "a piece is one request");

#define NET_BLOCK	(64 * 1024)	/* a touched page's request */

struct net_piece {
	uint64_t off, len;
	size_t span;
	bool net, first, last;
};

struct lazy_net {
	int sock;
	struct lazy_hole {
		uint64_t off, end;
		uint64_t block0;	/* its first block's number */
	} *holes;
	size_t nr_holes;
	struct net_piece q[NET_DEPTH * 2];
	size_t qh, qn, qnet;	/* ring head, pieces, those asked for */
	size_t span;		/* the next piece to ask for */
	uint64_t pos;
	uint32_t crc;		/* of the span being checked */
	uint32_t *bcrc;		/* each block sent on touch: its checksum */
	uint8_t *bseen;
	uint64_t nblocks, bytes;
	char *buf, *fbuf;
	char why[256];
};

/* A reply that is not what was asked, or none: the process must not
 * run on without its pages. */
static _Noreturn void net_failed(struct loader *l, uint64_t off)
{
	lazy_ending(l);
	log_err(&l->log, EPROTO,
		"lazy restart: pid %d: %s at image offset %llu, so pid %d is killed",
		l->root, l->net->why, (unsigned long long)off, l->tree);
	lazy_kill_tree(l->tree, 0);
	_exit(1);
}

/* The first hole that ends after @off. */
static size_t hole_after(const struct lazy_net *n, uint64_t off)
{
	size_t lo = 0, hi = n->nr_holes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->holes[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The hole holding @off, or NULL: a byte the memfd does not have. */
static const struct lazy_hole *net_hole(const struct lazy_net *n, uint64_t off)
{
	size_t i = hole_after(n, off);

	return i < n->nr_holes && n->holes[i].off <= off ? &n->holes[i] : NULL;
}

/* The runs of @m's missing pages with image offsets in [off, end): all
 * of them, or (while no area moved, so that offsets grow with addresses)
 * from the first one on. */
static size_t first_run(const struct lazy_mm *m, uint64_t off)
{
	size_t lo = 0, hi = m->pending.n;

	if (m->moved)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lazy_run *r = &m->pending.r[mid];

		if (r->off + r->npages * PAGE <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The runs of @m's missing pages with image offsets in [off, off +
 * len), into @todo (by address). */
static void missing(struct loader *l, struct lazy_mm *m, uint64_t off, uint64_t len,
		    struct lazy_set *todo)
{
	uint64_t end = off + len;

	for (size_t i = first_run(m, off); i < m->pending.n; i++) {
		const struct lazy_run *r = &m->pending.r[i];
		uint64_t a = r->off > off ? r->off : off;
		uint64_t b = r->off + r->npages * PAGE < end ? r->off + r->npages * PAGE : end;

		if (!m->moved && r->off >= end)
			break;
		if (a < b && lazy_set_add(todo, r->addr + (a - r->off), (b - a) / PAGE, a))
			lazy_fetch_failed(l, m, r->addr, a, ENOMEM);
	}
}

/* The image's bytes [off, off + len) at @src: every page of them that a
 * memory still misses, placed.  Pages placed. */
static uint64_t place_range(struct loader *l, uint64_t off, uint64_t len, const char *src)
{
	uint64_t placed = 0;

	for (size_t k = 0; k < l->nr; k++) {
		struct lazy_mm *m = l->mm[k];
		struct lazy_set todo = { 0 };

		if (!m->dead)
			missing(l, m, off, len, &todo);
		for (size_t i = 0; i < todo.n && !m->dead; i++) {
			const struct lazy_run *t = &todo.r[i];
			uint64_t done;

			m->dead = lazy_place(l, m, t->addr, t->npages * PAGE, src + (t->off - off),
					t->off, &done) == 1;
			if (lazy_set_cut(&m->pending, t->addr, t->addr + done))
				lazy_fetch_failed(l, m, t->addr, t->off, ENOMEM);
			placed += done / PAGE;
		}
		lazy_set_free(&todo);
	}
	return placed;
}

size_t lazy_net_take(struct loader *l, uint64_t off, uint64_t len, struct lazy_step **st,
		     size_t *cap)
{
	size_t n = 0;

	for (size_t k = 0; k < l->nr; k++) {
		struct lazy_mm *m = l->mm[k];
		struct lazy_set todo = { 0 };

		if (!m->dead)
			missing(l, m, off, len, &todo);
		for (size_t i = 0; i < todo.n; i++) {
			const struct lazy_run *t = &todo.r[i];

			if (n == *cap) {
				size_t c = *cap ? *cap * 2 : 16;
				void *p = realloc(*st, c * sizeof(**st));

				if (!p)
					lazy_fetch_failed(l, m, t->addr, t->off, ENOMEM);
				*st = p;
				*cap = c;
			}
			(*st)[n++] = (struct lazy_step){ m, t->addr, t->npages, t->off };
			if (lazy_set_cut(&m->pending, t->addr, t->addr + t->npages * PAGE))
				lazy_fetch_failed(l, m, t->addr, t->off, ENOMEM);
		}
		lazy_set_free(&todo);
	}
	return n;
}

/* A streamed piece of the server's, against what was sent on touch. */
static void net_compare(struct loader *l, const struct net_piece *p, const char *data)
{
	struct lazy_net *n = l->net;
	const struct lazy_hole *h = net_hole(n, p->off);

	for (uint64_t at = p->off; at < p->off + p->len;) {
		uint64_t k = (at - h->off) / NET_BLOCK, b = h->block0 + k;
		uint64_t e = h->off + (k + 1) * NET_BLOCK;

		e = e < p->off + p->len ? e : p->off + p->len;
		if (b < n->nblocks && n->bseen[b] &&
		    crc32c(0, data + (at - p->off), e - at) != n->bcrc[b]) {
			snprintf(n->why, sizeof(n->why),
				 "the page server sent two different contents for the same pages (a forged reply)");
			net_failed(l, at);
		}
		at = e;
	}
}

/* The oldest piece read into @buf (NET_PIECE): its reply, or the
 * memfd's bytes; checked into its span's checksum. */
static struct net_piece net_read(struct loader *l, char *buf)
{
	struct lazy_net *n = l->net;
	struct net_piece p = n->q[n->qh];

	n->qh = (n->qh + 1) % (sizeof(n->q) / sizeof(n->q[0]));
	n->qn--;
	if (p.net) {
		n->qnet--;
		if (ps_reply(n->sock, p.off, p.len, buf, n->why, sizeof(n->why)))
			net_failed(l, p.off);
		net_compare(l, &p, buf);
		n->bytes += p.len;
	} else if (pread(l->img_fd, buf, p.len, p.off) != (ssize_t)p.len) {
		snprintf(n->why, sizeof(n->why), "the image's copy cannot be read");
		net_failed(l, p.off);
	}
	if (p.first)
		n->crc = 0;
	n->crc = crc32c(n->crc, buf, p.len);
	if (p.last && n->crc != l->spans[p.span].crc) {
		lazy_ending(l);
		log_err(&l->log, EBADMSG,
			"lazy restart: pid %d: record PAGES at offset %llu: checksum mismatch (corrupt image), so pid %d is killed",
			l->root, (unsigned long long)l->spans[p.span].rec_pos, l->tree);
		lazy_kill_tree(l->tree, 0);
		_exit(1);
	}
	return p;
}

/* The oldest piece, read and placed (no copiers). */
static void net_take(struct loader *l)
{
	struct net_piece p = net_read(l, l->net->buf);

	l->in_bg += place_range(l, p.off, p.len, l->net->buf);
}

/* Pieces asked for up to NET_DEPTH in flight: holes and the memfd's
 * bytes in NET_PIECE steps. */
static void net_ask(struct loader *l)
{
	struct lazy_net *n = l->net;

	while (n->span < l->nr_spans && n->qnet < NET_DEPTH &&
	       n->qn < sizeof(n->q) / sizeof(n->q[0])) {
		const struct ir_span *s = &l->spans[n->span];
		uint64_t start = n->pos > s->off ? n->pos : s->off, end = s->off + s->len;
		const struct lazy_hole *h = net_hole(n, start);
		struct net_piece *p = &n->q[(n->qh + n->qn) % (sizeof(n->q) / sizeof(n->q[0]))];
		int ret;

		if (h) {	/* (blocks and pieces count from the hole's start) */
			uint64_t grid = h->off + ((start - h->off) / NET_PIECE + 1) * NET_PIECE;

			end = h->end < end ? h->end : end;
			end = grid < end ? grid : end;
		} else {
			size_t i = hole_after(n, start);

			if (i < n->nr_holes && n->holes[i].off < end)
				end = n->holes[i].off;
			end = end - start > NET_PIECE ? start + NET_PIECE : end;
		}
		*p = (struct net_piece){ start, end - start, n->span, !!net_hole(n, start),
					 start == s->off, end == s->off + s->len };
		ret = p->net ? ps_get(n->sock, p->off, p->len) : 0;
		if (ret) {
			snprintf(n->why, sizeof(n->why), "the page server's connection was lost (%s)",
				 strerror(-ret));
			net_failed(l, p->off);
		}
		n->qnet += p->net;
		n->qn++;
		n->pos = end;
		if (end == s->off + s->len)
			n->span++;
	}
}

bool lazy_net_streaming(const struct loader *l)
{
	return l->net && (l->net->qn || l->net->span < l->nr_spans);
}

/* (asked for at once, after what is in flight) */
uint64_t lazy_net_fault(struct loader *l, uint64_t off)
{
	struct lazy_net *n = l->net;
	const struct lazy_hole *h = net_hole(n, off);
	uint64_t k = (off - h->off) / NET_BLOCK, a = h->off + k * NET_BLOCK, b = a + NET_BLOCK;
	uint64_t o, len;
	char *buf;
	int ret;

	b = b < h->end ? b : h->end;
	if ((ret = ps_get(n->sock, a, b - a))) {
		snprintf(n->why, sizeof(n->why), "the page server's connection was lost (%s)",
			 strerror(-ret));
		net_failed(l, a);
	}
	/* A page the stream has passed comes from the stream, whose
	 * checksums are checked, never from the block's reply, which
	 * nothing compares then: a piece read and handed over that holds
	 * part of the block is placed now (the copiers are held), and so
	 * is one in flight.  The other pieces in flight go to the copiers
	 * where they can. */
	for (int i = 0; lazy_copiers_queued(l, i, &buf, &o, &len); i++)
		if (o < b && a < o + len)
			l->in_bg += place_range(l, o, len, buf);
	while (n->qn) {
		const struct net_piece *q = &n->q[n->qh];
		bool mine = q->off < b && a < q->off + q->len;
		struct net_piece p;

		buf = mine ? NULL : lazy_copiers_buf(l);
		p = net_read(l, buf ? buf : n->buf);
		if (buf)
			lazy_copiers_push(l, buf, p.off, p.len);
		else
			l->in_bg += place_range(l, p.off, p.len, n->buf);
	}
	if (ps_reply(n->sock, a, b - a, n->fbuf, n->why, sizeof(n->why)))
		net_failed(l, a);
	n->bcrc[h->block0 + k] = crc32c(0, n->fbuf, b - a);
	n->bseen[h->block0 + k] = 1;
	n->bytes += b - a;
	return place_range(l, a, b - a, n->fbuf);
}

/* The holes of the memfd: what the server has. */
static int net_holes(struct loader *l, struct lazy_net *n)
{
	off_t at = 0, h, d;

	while ((uint64_t)at < l->img_len && (h = lseek(l->img_fd, at, SEEK_HOLE)) >= 0 &&
	       (uint64_t)h < l->img_len) {
		void *p = realloc(n->holes, (n->nr_holes + 1) * sizeof(*n->holes));

		if (!p)
			return -ENOMEM;
		d = lseek(l->img_fd, h, SEEK_DATA);
		n->holes = p;
		n->holes[n->nr_holes++] = (struct lazy_hole){ h, d < 0 ? l->img_len : (uint64_t)d,
							      n->nblocks };
		n->nblocks += (n->holes[n->nr_holes - 1].end - h + NET_BLOCK - 1) / NET_BLOCK;
		at = d < 0 ? (off_t)l->img_len : d;
	}
	return 0;
}

int lazy_net_start(struct loader *l, int sock)
{
	struct lazy_net *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	l->net = n;
	n->sock = sock;
	if (net_holes(l, n))
		return -ENOMEM;
	n->bcrc = calloc(n->nblocks + 1, sizeof(*n->bcrc));
	n->bseen = calloc(n->nblocks + 1, 1);
	n->buf = malloc(NET_PIECE);
	n->fbuf = malloc(NET_BLOCK);
	return n->bcrc && n->bseen && n->buf && n->fbuf ? 0 : -ENOMEM;
}

bool lazy_net_has(const struct loader *l, uint64_t off)
{
	return l->net && net_hole(l->net, off);
}

bool lazy_net_waits(const struct loader *l)
{
	const struct lazy_net *n = l->net;

	return lazy_net_streaming(l) && n->qn && n->q[n->qh].net;
}

void lazy_net_step(struct loader *l, bool readable)
{
	struct lazy_net *n = l->net;

	net_ask(l);
	if (n->qn && (!n->q[n->qh].net || readable))
		net_take(l);
}

bool lazy_net_ask(struct loader *l)
{
	struct lazy_net *n = l->net;

	net_ask(l);
	return n->qn && !n->q[n->qh].net;
}

static bool sock_ready(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

void lazy_net_pump(struct loader *l, bool readable)
{
	struct lazy_net *n = l->net;
	struct net_piece p;
	char *buf;

	net_ask(l);
	if (!n->qn || (n->q[n->qh].net && !readable && !sock_ready(n->sock)) ||
	    !(buf = lazy_copiers_buf(l)))
		return;
	p = net_read(l, buf);
	lazy_copiers_push(l, buf, p.off, p.len);
}

int lazy_net_sock(const struct loader *l)
{
	return l->net->sock;
}

uint64_t lazy_net_bytes(const struct loader *l)
{
	return l->net->bytes;
}
