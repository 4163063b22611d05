/* chain.h - restart of an incremental image: its chain of parents
 * assembled into one whole image. */
#ifndef CKPT_CHAIN_H
#define CKPT_CHAIN_H

#include "log.h"

/* If the image at *@img is incremental (HEAD flag CKPT_PARENT): its
 * parents found (by the paths it records, relative to the directory of
 * @orig, the caller's fd on its file), each checked whole against the
 * checksum its child recorded, and *@img replaced by a memfd of the
 * image they make together (the old one closed unless it is @orig),
 * whose PAGES_AT records name the parents by their place in @fds:
 * *@nr of them, open, the caller's to close (CKPT_MAX_CHAIN at most).
 * With @key, each parent must be authenticated by it too.  0 (also for
 * a whole image) or -errno, said. */
int chain_open(int *img, int orig, const void *key, size_t key_len,
	       struct ckpt_log *log, int *fds, int *nr);

/* The images in the chain that ends at @path (1: a whole one), or a
 * negative errno (said). */
int chain_depth(const char *path, struct ckpt_log *log);

#endif
