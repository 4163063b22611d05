/* pageserver.h - restart --lazy from another machine: `ckpt page-server`
 * serves an image, `restart --lazy --page-server HOST:PORT` gets all of
 * it but the pages the loader brings (pageserver.c; the protocol is in
 * docs/design.md, "Lazy restart").
 */
#ifndef CKPT_PAGESERVER_H
#define CKPT_PAGESERVER_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

#define PS_MAX_GET	(1u << 20)	/* bytes one request may ask for */

/* Serve @image on @addr:@port to one restart, then return: 0 when its
 * loader said it is done, else -errno (said).  With @key, only a peer
 * holding the key is served. */
int ps_serve(const char *addr, const char *port, const void *key, size_t key_len,
	     const char *image, struct ckpt_log *log);

/* Restart's side: connect to @hostport ("HOST:PORT"), check that it
 * serves an image of @image's base name, authenticate with @key (NULL:
 * none) and receive the image with the data of its lazy pages left out
 * (holes): a memfd to restart from, or -errno (said).  The connection
 * stays open for the loader, which finds it from the memfd
 * (ps_sock_of). */
int ps_open(const char *hostport, const char *image, const void *key, size_t key_len,
	    struct ckpt_log *log);

/* The loader's side: the connection of an image ps_open made, or -1 if
 * @img_fd is a plain image. */
int ps_sock_of(int img_fd);

/* Ask for @len bytes at image offset @off: 0 or -errno. */
int ps_get(int sock, uint64_t off, uint64_t len);
/* The reply to that request, into @buf: 0, or -errno with @why (@n
 * bytes) saying what was wrong with it (a short or forged reply, an
 * error of the server's, the connection lost). */
int ps_reply(int sock, uint64_t off, uint64_t len, void *buf, char *why, size_t n);
/* The loader is done: the server may go. */
void ps_bye(int sock);

#endif
