/* pageserver.c - restart --lazy from another machine.  `ckpt page-server`
 * holds the image; `restart --lazy --page-server` gets all of it but the
 * data of the pages its loader brings on touch (lazy.c), so the target
 * machine never holds a copy of the process's memory: the restart reads
 * a memfd of the image with holes where those pages were, and the loader
 * asks the server for them over the same connection.
 *
 * One TCP connection, requests answered in order (the loader keeps
 * several in flight).  With a key, each side proves it holds it
 * (HMAC-SHA256 over both sides' fresh nonces) before anything of the
 * image is sent; without one, anyone who can connect reads the image.
 * The bytes themselves are not encrypted.  Every reply is checked by
 * the loader (which pages, how many bytes) and every request by the
 * server (only the holes it made, no more than PS_MAX_GET).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "auth.h"
#include "image.h"
#include "lazy.h"
#include "pageserver.h"
#include "sha256.h"
#include "page.h"

#define PS_MAGIC	0x53506b63u	/* "ckPS" */
#define PS_VERSION	1
#define PS_GET		1
#define PS_BYE		2
#define PS_NAME		"ckpt-page-server:"
#define MAX_HOLES	(1u << 24)

struct ps_hello {
	uint32_t magic, version;
	uint32_t keyed;		/* whether this side has a key */
	uint32_t reserved;
	uint8_t nonce[32];
	char name[128];		/* the image's base name, NUL-ended */
};

/* The server's answer to a proven client: the image's size and holes;
 * then the image's bytes, holes left out. */
struct ps_image {
	uint32_t magic, status;	/* status: 0, or an errno: nothing follows */
	uint64_t size;
	uint64_t nr_holes;	/* struct ps_hole[nr_holes] follow */
};

struct ps_hole {
	uint64_t off, len;
};

struct ps_msg {			/* a request, or a reply's head */
	uint32_t magic, type;	/* a reply: its status */
	uint64_t off, len;
};

struct server {
	struct ckpt_log *log;
	int fd;			/* the image */
	uint64_t size;
	struct ps_hole *holes;
	size_t nr;
	const void *key;
	size_t key_len;
	const char *image;
	uint64_t streamed;	/* test build: the end of the stream's pieces sent */
};

/* ---- bytes on a socket ---- */

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {	/* (WAITALL: one call a reply) */
		ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_WAITALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		got += r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		put += r;
	}
	return 0;
}

static int send_file(int sock, int fd, uint64_t off, uint64_t len)
{
	off_t o = off;

	while (len) {
		ssize_t r = sendfile(sock, fd, &o, len < (1 << 30) ? len : (1 << 30));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ENODATA;
		len -= r;
	}
	return 0;
}

/* ---- the key ---- */

/* HMAC(key, @label, @a, @b): what a side holding the key answers to the
 * other's nonce (@a), bound to its own (@b). */
static void prove(const void *key, size_t key_len, const char *label, const uint8_t *a,
		  const uint8_t *b, uint8_t out[SHA256_LEN])
{
	struct hmac_sha256 m;

	hmac_sha256_init(&m, key, key_len);
	hmac_sha256_update(&m, label, strlen(label) + 1);
	hmac_sha256_update(&m, a, 32);
	hmac_sha256_update(&m, b, 32);
	hmac_sha256_final(&m, out);
}

static int hello_make(struct ps_hello *h, bool keyed, const char *image)
{
	const char *base = strrchr(image, '/') ? strrchr(image, '/') + 1 : image;

	*h = (struct ps_hello){ PS_MAGIC, PS_VERSION, keyed, 0, { 0 }, { 0 } };
	snprintf(h->name, sizeof(h->name), "%s", base);
	return getrandom(h->nonce, sizeof(h->nonce), 0) == sizeof(h->nonce) ? 0 : -EIO;
}

/* ---- the server ---- */

/* The data of @rec (a PAGES record of @vma) as a hole, if the loader
 * will bring it (mm_lazy_vma). */
static int hole_of(struct server *s, const struct rec *rec, const struct rec_vma *vma)
{
	const struct rec_pages *ph = rec->data;
	uint64_t data, len;
	void *p;

	if (!vma || !mm_lazy_vma(vma) || rec->data_len < sizeof(*ph))
		return 0;
	data = rec->off + sizeof(*ph) + ph->nr_runs * sizeof(struct rec_pages_run) + ph->pad_len;
	len = ph->npages * PAGE;
	if (data % PAGE || !len || ph->npages > rec->len / PAGE || data + len != rec->off + rec->len)
		return 0;	/* (not as the loader expects: sent whole) */
	if (s->nr == MAX_HOLES)
		return 0;
	p = realloc(s->holes, (s->nr + 1) * sizeof(*s->holes));
	if (!p)
		return log_err(s->log, ENOMEM, "page-server: holes:");
	s->holes = p;
	s->holes[s->nr++] = (struct ps_hole){ data, len };
	return 0;
}

/* The holes: the page data of each area the loader will bring.  An
 * area with pages shared with a child (PAGES_REF) or guard pages is
 * restored whole, as mm_lazy_area says: its last hole is taken back. */
static int find_holes(struct server *s)
{
	struct img_reader r;
	struct rec rec;
	struct rec_vma vma;
	bool have_vma = false;
	size_t vma_first = 0;
	int ret = ir_init(&r, s->fd, s->log);

	r.defer = true;
	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		ret = 0;
		if (rec.type == REC_PARENT || rec.type == REC_PAGES_PARENT)
			ret = log_err(s->log, EOPNOTSUPP,
				      "page-server: the image is incremental (it names a parent image): serve a whole image (a plain checkpoint)");
		else if (rec.type == REC_VMA && rec.data_len >= sizeof(vma)) {
			memcpy(&vma, rec.data, sizeof(vma));
			have_vma = true;
			vma_first = s->nr;
		} else if (rec.type == REC_PAGES)
			ret = hole_of(s, &rec, have_vma ? &vma : NULL);
		else if (rec.type == REC_PAGES_REF || rec.type == REC_VMA_GUARDS)
			s->nr = vma_first;
		else if (rec.type == REC_TASK || rec.type == REC_MM)
			have_vma = false;
		free(rec.data);
	}
	ir_free(&r);
	return ret;
}

static int server_open(struct server *s, const char *image)
{
	struct stat st;
	int fd = open(image, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return log_err(s->log, errno, "page-server: %s:", image);
	s->fd = s->key ? img_private(fd, s->log) : img_seekable(fd, s->log);
	if (s->fd != fd)
		close(fd);
	if (s->fd < 0)
		return s->fd;
	fd = s->fd;
	/* with a key, the image must be one made with it, as for a
	 * restart --key from a file: the restart trusts what we send on the
	 * strength of the key alone */
	ret = s->key ? auth_verify(fd, s->key, s->key_len, s->log) : 0;
	if (!ret) {	/* the loader reads pages where they lie: expanded */
		ret = img_expand(fd, s->log, NULL);
		s->fd = ret < 0 ? fd : ret;
		if (ret >= 0 && s->fd != fd)
			close(fd);
		ret = ret < 0 ? ret : 0;
	}
	if (!ret && fstat(s->fd, &st))
		ret = log_err(s->log, errno, "page-server: %s:", image);
	s->size = ret ? 0 : st.st_size;
	return ret ? ret : find_holes(s);
}

/* Whether [off, off + len) lies in one hole: the only bytes asked for. */
static bool in_hole(const struct server *s, uint64_t off, uint64_t len)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->holes[mid].off + s->holes[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nr && s->holes[lo].off <= off && len &&
	       len <= s->holes[lo].off + s->holes[lo].len - off;
}

/* 1 if @sock's peer proved it holds our key (or we have none), 0 if
 * not (said), -errno. */
static int server_hello(struct server *s, int sock, const char *peer)
{
	struct ps_hello c, h;
	uint8_t mac[SHA256_LEN], want[SHA256_LEN];
	int ret = read_full(sock, &c, sizeof(c));

	if (!ret)
		ret = hello_make(&h, s->key != NULL, s->image);
	if (ret) {
		log_info(s->log, "page-server: %s: no hello (%s): refused", peer, strerror(-ret));
		return 0;
	}
	if (c.magic != PS_MAGIC || c.version != PS_VERSION) {
		log_info(s->log, "page-server: %s: not a ckpt restart (bad hello): refused", peer);
		return 0;
	}
	c.name[sizeof(c.name) - 1] = 0;
	if (strcmp(c.name, h.name)) {	/* (it says so itself) */
		write_full(sock, &h, sizeof(h));
		log_info(s->log, "page-server: %s: asks for image '%s', not ours: refused", peer, c.name);
		return 0;
	}
	memset(mac, 0, sizeof(mac));
	if (s->key)
		prove(s->key, s->key_len, "ckpt page-server", c.nonce, h.nonce, mac);
	if (write_full(sock, &h, sizeof(h)) || write_full(sock, mac, sizeof(mac)) ||
	    read_full(sock, mac, sizeof(mac))) {	/* (it found us wanting) */
		log_err(s->log, EACCES, "page-server: %s: left at our hello (%s): refused", peer,
			!s->key ? "it wants a key" : c.keyed ? "wrong key" : "it has no key");
		return 0;
	}
	if (!s->key)
		return 1;
	prove(s->key, s->key_len, "ckpt restart", h.nonce, c.nonce, want);
	if (c.keyed && mac_equal(mac, want, sizeof(mac)))
		return 1;
	log_err(s->log, EACCES, "page-server: %s: %s: refused", peer,
		c.keyed ? "wrong key" : "it has no key (restart --key)");
	return 0;
}

static int send_image(struct server *s, int sock)
{
	struct ps_image im = { PS_MAGIC, 0, s->size, s->nr };
	uint64_t at = 0;
	int ret = write_full(sock, &im, sizeof(im));

	if (!ret)
		ret = write_full(sock, s->holes, s->nr * sizeof(*s->holes));
	for (size_t i = 0; !ret && i <= s->nr; i++) {
		uint64_t end = i < s->nr ? s->holes[i].off : s->size;

		ret = send_file(sock, s->fd, at, end - at);
		if (i < s->nr)
			at = s->holes[i].off + s->holes[i].len;
	}
	return ret;
}

#ifdef CKPT_TEST_HOOKS
/* The test build's forged replies (CKPT_TEST_PS_FORGE): from the 25th
 * request on, "offset" answers for the page after the one asked, "data"
 * flips a byte of what it sends; "block" flips one of a touched page's
 * block (a request of 64 KiB or less) that the stream has sent already,
 * which nothing compares with the stream after.  1 if it answered. */
static int forge(struct server *s, int sock, struct ps_msg *a, uint64_t nr)
{
	const char *how = getenv("CKPT_TEST_PS_FORGE");
	char buf[PS_MAX_GET];
	bool block = how && !strcmp(how, "block");

	if (block && a->len > 64 * 1024)
		s->streamed = a->off + a->len > s->streamed ? a->off + a->len : s->streamed;
	if (block ? a->len > 64 * 1024 || a->off + a->len > s->streamed : !how || nr < 24)
		return 0;
	if (!strcmp(how, "offset"))
		a->off += PAGE;
	if (write_full(sock, a, sizeof(*a)) || pread(s->fd, buf, a->len, a->off) != (ssize_t)a->len)
		return -EIO;
	buf[a->len / 2] ^= 0x20;
	return write_full(sock, buf, a->len) ?: 1;
}
#else
static int forge(struct server *s, int sock, struct ps_msg *a, uint64_t nr)
{
	return 0;
}
#endif

/* Requests until the loader's bye (1) or the connection's end (0). */
static int serve_pages(struct server *s, int sock, const char *peer, uint64_t *bytes)
{
	struct ps_msg q, a;
	uint64_t nr = 0;
	int ret;

	while (!(ret = read_full(sock, &q, sizeof(q)))) {
		if (q.magic == PS_MAGIC && q.type == PS_BYE)
			return 1;
		a = (struct ps_msg){ PS_MAGIC, 0, q.off, q.len };
		if (q.magic != PS_MAGIC || q.type != PS_GET || q.len > PS_MAX_GET ||
		    !in_hole(s, q.off, q.len)) {
			a.type = EINVAL;
			write_full(sock, &a, sizeof(a));
			return log_err(s->log, EINVAL,
				       "page-server: %s: a request for %llu bytes at offset %llu, not pages of the image: refused",
				       peer, (unsigned long long)q.len, (unsigned long long)q.off);
		}
		ret = forge(s, sock, &a, nr++);
		if (!ret)
			ret = write_full(sock, &a, sizeof(a));
		if (!ret)
			ret = send_file(sock, s->fd, q.off, q.len);
		if (ret < 0)
			break;
		*bytes += q.len;
	}
	return log_err(s->log, -ret, "page-server: %s: the connection ended before the loader was done:",
		       peer);
}

static int listen_on(struct ckpt_log *log, const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai;
	int fd, one = 1, ret = getaddrinfo(addr, port, &hints, &ai);

	if (ret)
		return log_err(log, EINVAL, "page-server: %s port %s: %s", addr, port,
			       gai_strerror(ret));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4)) {
		ret = log_err(log, errno, "page-server: listening on %s port %s:", addr, port);
		if (fd >= 0)
			close(fd);
		fd = ret;
	}
	freeaddrinfo(ai);
	return fd;
}

static int local_port(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len))
		return -1;
	return ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
						((struct sockaddr_in *)&sa)->sin_port);
}

static void peer_name(int sock, char *buf, size_t n)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getpeername(sock, (struct sockaddr *)&sa, &len) ||
	    getnameinfo((struct sockaddr *)&sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(buf, n, "a peer");
	else
		snprintf(buf, n, "%s port %s", host, serv);
}

#define HELLO_S	10

/* One connection: 1 once a restart was served to its end, 0 if it was
 * refused (the next one is waited for), -errno if it was served but
 * ended before its loader was done. */
static int serve_one(struct server *s, int sock)
{
	char peer[NI_MAXHOST + NI_MAXSERV + 8];
	uint64_t t0 = log_now(), bytes = 0;
	struct timeval wait = { HELLO_S, 0 };
	int one = 1, ret;

#ifdef CKPT_TEST_HOOKS
	if (getenv("CKPT_TEST_HELLO_S"))
		wait.tv_sec = atoi(getenv("CKPT_TEST_HELLO_S"));
#endif
	peer_name(sock, peer, sizeof(peer));
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* a peer that connects and says nothing must not hold the one
	 * connection served at a time (the restart behind it would wait
	 * for ever): HELLO_S to say hello and prove itself */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	ret = server_hello(s, sock, peer);
	if (ret != 1)
		return ret;
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 0 }, sizeof(struct timeval));
	ret = send_image(s, sock);
	if (ret)
		return log_err(s->log, -ret, "page-server: %s: sending the image:", peer);
	ret = serve_pages(s, sock, peer, &bytes);
	if (ret == 1)
		log_info(s->log, "page-server: %s: loader done: %llu bytes of pages in %.1f ms",
			 peer, (unsigned long long)bytes, (log_now() - t0) / 1e6);
	return ret;
}

int ps_serve(const char *addr, const char *port, const void *key, size_t key_len,
	     const char *image, struct ckpt_log *log)
{
	struct server s = { .log = log, .fd = -1, .key = key, .key_len = key_len, .image = image };
	int lfd, ret = server_open(&s, image);

	lfd = ret ? ret : listen_on(log, addr, port);
	ret = lfd < 0 ? lfd : 0;
	if (!ret)	/* (the port it got, for --port 0) */
		log_info(log, "page-server: serving %s (%llu bytes, %zu runs of pages left to the loader) on %s port %d",
			 image, (unsigned long long)s.size, s.nr, addr, local_port(lfd));
	/* a peer refused (no key, a stranger) is not the restart: wait on */
	while (!ret) {
		int sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (sock < 0 && errno == EINTR)
			continue;
		if (sock < 0) {
			ret = log_err(log, errno, "page-server: accept:");
			break;
		}
		ret = serve_one(&s, sock);
		close(sock);
		if (ret == 1)
			break;
	}
	if (lfd >= 0)
		close(lfd);
	if (s.fd >= 0)
		close(s.fd);
	free(s.holes);
	return ret < 0 ? ret : 0;
}

/* ---- restart's side ---- */

static int connect_to(const char *hostport, struct ckpt_log *log)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	const char *colon = strrchr(hostport, ':');
	char host[256];
	struct addrinfo *ai;
	int fd, one = 1, ret;

	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host))
		return log_err(log, EINVAL, "--page-server %s: not HOST:PORT", hostport);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {	/* [v6]:port */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	ret = getaddrinfo(host, colon + 1, &hints, &ai);
	if (ret)
		return log_err(log, EINVAL, "--page-server %s: %s", hostport, gai_strerror(ret));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		ret = log_err(log, errno, "--page-server %s: connecting:", hostport);
		if (fd >= 0)
			close(fd);
		fd = ret;
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Both sides proven (or neither has a key): 0, or -errno (said). */
static int client_hello(int sock, const char *hp, const char *image, const void *key,
			size_t key_len, struct ckpt_log *log)
{
	struct ps_hello c, h;
	uint8_t mac[SHA256_LEN], want[SHA256_LEN] = { 0 };
	int ret = hello_make(&c, key != NULL, image);

	if (!ret)
		ret = write_full(sock, &c, sizeof(c));
	if (!ret)
		ret = read_full(sock, &h, sizeof(h));
	if (ret)
		return log_err(log, -ret, "--page-server %s: no answer to our hello:", hp);
	if (h.magic != PS_MAGIC || h.version != PS_VERSION)
		return log_err(log, EPROTO, "--page-server %s: not a ckpt page server (version %u)",
			       hp, h.version);
	h.name[sizeof(h.name) - 1] = 0;
	if (strcmp(c.name, h.name))
		return log_err(log, ENOENT, "--page-server %s: it serves image '%s', not '%s'",
			       hp, h.name, c.name);
	ret = read_full(sock, mac, sizeof(mac));
	if (ret)
		return log_err(log, -ret, "--page-server %s: no answer to our hello:", hp);
	if (!h.keyed != !key)
		return log_err(log, EACCES, "--page-server %s: %s", hp, key ?
			       "the server has no key: it could be anyone's (run it with --key)" :
			       "the server wants a key (restart --key FILE)");
	if (key)
		prove(key, key_len, "ckpt page-server", c.nonce, h.nonce, want);
	if (key && !mac_equal(mac, want, sizeof(mac)))
		return log_err(log, EACCES, "--page-server %s: the server does not hold our key (wrong key): refused",
			       hp);
	memset(mac, 0, sizeof(mac));
	if (key)
		prove(key, key_len, "ckpt restart", h.nonce, c.nonce, mac);
	ret = write_full(sock, mac, sizeof(mac));
	return ret ? log_err(log, -ret, "--page-server %s:", hp) : 0;
}

/* The holes, checked: in order, apart, whole pages, inside the image. */
static int read_holes(int sock, const char *hp, const struct ps_image *im,
		      struct ps_hole **out, struct ckpt_log *log)
{
	struct ps_hole *h;
	uint64_t end = 0;
	int ret;

	if (im->nr_holes > MAX_HOLES || im->nr_holes > im->size / PAGE)
		return log_err(log, EPROTO, "--page-server %s: %llu holes in an image of %llu bytes: refused",
			       hp, (unsigned long long)im->nr_holes, (unsigned long long)im->size);
	h = malloc((im->nr_holes + 1) * sizeof(*h));
	if (!h)
		return log_err(log, ENOMEM, "--page-server %s: holes:", hp);
	ret = read_full(sock, h, im->nr_holes * sizeof(*h));
	if (ret) {
		free(h);
		return log_err(log, -ret, "--page-server %s: reading the image:", hp);
	}
	for (uint64_t i = 0; i < im->nr_holes; i++) {
		if (h[i].off < end || h[i].off % PAGE || h[i].len % PAGE || !h[i].len ||
		    h[i].off > im->size || h[i].len > im->size - h[i].off) {
			ret = log_err(log, EPROTO, "--page-server %s: hole %llu (%llu bytes at %llu) is not pages of the image: refused",
				      hp, (unsigned long long)i, (unsigned long long)h[i].len,
				      (unsigned long long)h[i].off);
			free(h);
			return ret;
		}
		end = h[i].off + h[i].len + 1;	/* (apart: a record between) */
	}
	*out = h;
	return 0;
}

/* The image into @mfd, holes left as holes. */
static int read_image(int sock, int mfd, const char *hp, const struct ps_image *im,
		      const struct ps_hole *h, struct ckpt_log *log)
{
	char *buf = malloc(1 << 20);
	uint64_t at = 0;
	int ret = buf ? 0 : -ENOMEM;

	if (!ret && ftruncate(mfd, im->size))
		ret = -errno;
	for (uint64_t i = 0; !ret && i <= im->nr_holes; i++) {
		uint64_t end = i < im->nr_holes ? h[i].off : im->size;

		while (!ret && at < end) {
			size_t n = end - at < (1 << 20) ? end - at : (1 << 20);

			ret = read_full(sock, buf, n);
			if (!ret && pwrite(mfd, buf, n, at) != (ssize_t)n)
				ret = -EIO;
			at += n;
		}
		if (i < im->nr_holes)
			at = h[i].off + h[i].len;
	}
	free(buf);
	return ret ? log_err(log, -ret, "--page-server %s: reading the image:", hp) : 0;
}

int ps_open(const char *hp, const char *image, const void *key, size_t key_len,
	    struct ckpt_log *log)
{
	struct ps_image im;
	struct ps_hole *holes = NULL;
	struct stat st;
	char name[64];
	int mfd = -1, sock = connect_to(hp, log), ret = sock < 0 ? sock : 0;

	if (!ret)
		ret = client_hello(sock, hp, image, key, key_len, log);
	if (!ret && (ret = read_full(sock, &im, sizeof(im))))
		ret = log_err(log, -ret, "--page-server %s: no image:", hp);
	if (!ret && (im.magic != PS_MAGIC || im.status))
		ret = log_err(log, EPROTO, "--page-server %s: no image (status %u)", hp, im.status);
	if (!ret)
		ret = read_holes(sock, hp, &im, &holes, log);
	if (!ret && fstat(sock, &st))
		ret = log_err(log, errno, "--page-server %s:", hp);
	if (!ret) {	/* its name tells the loader its connection (restart
			 * may move fds: by inode, not number) */
		snprintf(name, sizeof(name), PS_NAME "%llu", (unsigned long long)st.st_ino);
		mfd = memfd_create(name, MFD_CLOEXEC);
		ret = mfd < 0 ? log_err(log, errno, "--page-server %s: memfd:", hp) : 0;
	}
	if (!ret)
		ret = read_image(sock, mfd, hp, &im, holes, log);
	if (!ret)
		log_info(log, "--page-server %s: image of %llu bytes, %llu runs of pages left to the loader",
			 hp, (unsigned long long)im.size, (unsigned long long)im.nr_holes);
	free(holes);
	if (ret && mfd >= 0)
		close(mfd);
	if (ret && sock >= 0)
		close(sock);
	return ret ? ret : mfd;
}

int ps_sock_of(int img_fd)
{
	char path[300], link[128], want[64];
	unsigned long long ino;
	ssize_t n;
	DIR *d;
	struct dirent *e;
	int sock = -1;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", img_fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	if (strncmp(link, "/memfd:" PS_NAME, strlen("/memfd:" PS_NAME)) ||
	    sscanf(link + strlen("/memfd:" PS_NAME), "%llu", &ino) != 1)
		return -1;
	snprintf(want, sizeof(want), "socket:[%llu]", ino);
	d = opendir("/proc/self/fd");
	while (d && sock < 0 && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = 0, !strcmp(link, want)))
			sock = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return sock;
}

int ps_get(int sock, uint64_t off, uint64_t len)
{
	struct ps_msg q = { PS_MAGIC, PS_GET, off, len };

	return write_full(sock, &q, sizeof(q));
}

int ps_reply(int sock, uint64_t off, uint64_t len, void *buf, char *why, size_t n)
{
	struct ps_msg a;
	int ret = read_full(sock, &a, sizeof(a));

	if (ret) {
		snprintf(why, n, "the page server's connection was lost (%s)",
			 ret == -ECONNRESET ? "closed" : strerror(-ret));
		return ret;
	}
	if (a.magic != PS_MAGIC || a.type || a.off != off || a.len != len) {
		if (a.magic == PS_MAGIC && a.type)
			snprintf(why, n, "the page server refused the request (%s)",
				 strerror(a.type < 4096 ? (int)a.type : EPROTO));
		else
			snprintf(why, n, "the page server sent %llu bytes at offset %llu for a request of %llu at %llu (a forged reply)",
				 (unsigned long long)a.len, (unsigned long long)a.off,
				 (unsigned long long)len, (unsigned long long)off);
		return -EPROTO;
	}
	ret = read_full(sock, buf, len);
	if (ret)
		snprintf(why, n, "the page server's reply was cut short (%s)",
			 ret == -ECONNRESET ? "connection closed" : strerror(-ret));
	return ret;
}

void ps_bye(int sock)
{
	struct ps_msg q = { PS_MAGIC, PS_BYE, 0, 0 };

	write_full(sock, &q, sizeof(q));
}
