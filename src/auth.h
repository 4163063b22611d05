/* auth.h - images authenticated with a key: the AUTH record's MAC
 * (docs/image-format.md, AUTH), checked before anything of the image is
 * used. */
#ifndef CKPT_AUTH_H
#define CKPT_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "../include/ckpt.h"
#include "image_format.h"
#include "log.h"

/* 0 if @len is a key's length (CKPT_KEY_MIN..MAX), else -EINVAL (said). */
int auth_key_check(size_t len, struct ckpt_log *log);
/* The AUTH record of the seekable image @fd, where it must be if there
 * is one (right before a TAIL that ends the file; nothing else of the
 * image is read): 1 and *a filled, 0 if there is none (or the image is
 * truncated), -EBADMSG (not said) if it is malformed, -errno (said). */
int auth_find(int fd, struct rec_auth *a, struct ckpt_log *log);
/* 0 if the image @fd carries an AUTH record made with @key, whose MAC
 * then covers every byte before it; else -EKEYREJECTED ("image not
 * authenticated by this key", said) or -errno. */
int auth_verify(int fd, const void *key, size_t len, struct ckpt_log *log);

#endif
