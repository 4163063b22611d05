/* auth.c - images authenticated with a key.
 *
 * ckpt checkpoint --key ends the image with an AUTH record, the
 * HMAC-SHA256 of every byte before it, just before its TAIL (the writer,
 * image.c, computes it as the bytes go out).  ckpt restart --key and
 * ckpt info --key check it here, before the image reader parses one
 * record: the AUTH and TAIL records have fixed sizes, so the AUTH record
 * is found from the file's size alone, and nothing of the image but
 * those two records' framing is looked at before the MAC is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "crc32c.h"
#include "fileio.h"
#include "sha256.h"

#define REC_SIZE(payload)	(sizeof(struct rec_hdr) + (payload) + \
				 sizeof(struct rec_trailer))
#define AUTH_REC		REC_SIZE(sizeof(struct rec_auth))
#define TAIL_REC		REC_SIZE(sizeof(struct rec_tail))
_Static_assert(sizeof(struct rec_auth) % 8 == 0 && sizeof(struct rec_tail) % 8 == 0,
	       "AUTH and TAIL records need no padding");

#define MAC_CHUNK		(1u << 20)

int auth_key_check(size_t len, struct ckpt_log *log)
{
	if (len < CKPT_KEY_MIN || len > CKPT_KEY_MAX)
		return log_err(log, EINVAL,
			       "a key of %zu bytes: an image's key is %d to %d bytes",
			       len, CKPT_KEY_MIN, CKPT_KEY_MAX);
	return 0;
}

static bool hdr_is(const struct rec_hdr *h, uint32_t type, uint64_t len)
{
	return h->type == type && h->len == len && !h->flags && !h->reserved &&
	       h->hcrc == crc32c(0, h, 16);
}

int auth_find(int fd, struct rec_auth *a, struct ckpt_log *log)
{
	struct {
		struct rec_hdr h;
		struct rec_auth a;
		struct rec_trailer t;
		struct rec_hdr th;
	} b;
	struct stat st;
	uint64_t pos;
	int ret;

	_Static_assert(sizeof(b) == AUTH_REC + sizeof(struct rec_hdr),
		       "the AUTH record and the TAIL's header, back to back");
	if (fstat(fd, &st))
		return log_err(log, errno, "image fd %d:", fd);
	if ((uint64_t)st.st_size < AUTH_REC + TAIL_REC)
		return 0;
	pos = st.st_size - TAIL_REC - AUTH_REC;
	ret = pread_full(fd, &b, sizeof(b), pos, NULL);
	if (ret)
		return log_err(log, ret, "reading image fd %d at %llu:", fd,
			       (unsigned long long)pos);
	if (!hdr_is(&b.h, REC_AUTH, sizeof(b.a)) ||
	    !hdr_is(&b.th, REC_TAIL, sizeof(struct rec_tail)))
		return 0;
	if (b.t.crc != crc32c(0, &b.a, sizeof(b.a)) || b.t.reserved ||
	    b.a.magic != CKPT_AUTH_MAGIC || b.a.alg != AUTH_HMAC_SHA256 ||
	    b.a.reserved || b.a.covered != pos)
		return -EBADMSG;
	*a = b.a;
	return 1;
}

/* The MAC of the first @n bytes of @fd. */
static int mac_of(int fd, const void *key, size_t len, uint64_t n,
		  uint8_t mac[SHA256_LEN], struct ckpt_log *log)
{
	struct hmac_sha256 m;
	char *buf = malloc(MAC_CHUNK);
	uint64_t off = 0;
	int ret = 0;

	if (!buf)
		return log_err(log, ENOMEM, "image authentication buffer:");
	hmac_sha256_init(&m, key, len);
	while (off < n && !ret) {
		size_t k = n - off < MAC_CHUNK ? n - off : MAC_CHUNK;

		ret = pread_full(fd, buf, k, off, NULL);
		if (ret)
			ret = log_err(log, ret, "reading image fd %d at %llu:", fd,
				      (unsigned long long)off);
		hmac_sha256_update(&m, buf, k);
		off += k;
	}
	hmac_sha256_final(&m, mac);
	free(buf);
	return ret;
}

int auth_verify(int fd, const void *key, size_t len, struct ckpt_log *log)
{
	uint8_t mac[SHA256_LEN];
	struct rec_auth a;
	int ret = auth_key_check(len, log);

	if (!ret)
		ret = auth_find(fd, &a, log);
	if (ret == 0)
		return log_err(log, EKEYREJECTED,
			       "image not authenticated by this key: it has no AUTH record before its tail");
	if (ret == -EBADMSG)
		return log_err(log, EKEYREJECTED,
			       "image not authenticated by this key: its AUTH record is malformed");
	if (ret < 0)
		return ret;
	ret = mac_of(fd, key, len, a.covered, mac, log);
	if (ret)
		return ret;
	if (!mac_equal(mac, a.mac, sizeof(mac)))
		return log_err(log, EKEYREJECTED,
			       "image not authenticated by this key: its MAC does not match");
	log_info(log, "image authenticated: HMAC-SHA256 of its %llu bytes before the AUTH record",
		 (unsigned long long)a.covered);
	return 0;
}
