/* sockdiag.h - the kernel's sock_diag netlink interface (NETLINK_SOCK_DIAG),
 * for any socket family: one dump request, its replies handed to a
 * callback, and their attributes picked out.  unix.c uses it with
 * unix_diag; inet sockets can use it with inet_diag. */
#ifndef CKPT_SOCKDIAG_H
#define CKPT_SOCKDIAG_H

#include <stddef.h>
#include <stdint.h>

#define SOCKDIAG_MAX_ATTR 32

/* One reply's attributes by type (NULL if absent). */
struct sockdiag_attrs {
	const void *data[SOCKDIAG_MAX_ATTR];
	uint32_t len[SOCKDIAG_MAX_ATTR];
};

/* Send @req (a family's request struct: unix_diag_req, inet_diag_req_v2)
 * as an NLM_F_DUMP request and call @cb with each reply's payload until
 * the dump is done.  0, the callback's first nonzero return, or -errno. */
int sockdiag_dump(const void *req, size_t req_len,
		  int (*cb)(void *arg, const void *msg, uint32_t len), void *arg);

/* The attributes following the first @hdr bytes of a reply payload;
 * -EBADMSG if they do not fit it. */
int sockdiag_attrs(const void *msg, uint32_t len, uint32_t hdr,
		   struct sockdiag_attrs *a);

#endif
