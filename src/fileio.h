/* fileio.h - whole reads of files, below everything that reads images. */
#ifndef CKPT_FILEIO_H
#define CKPT_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* @n bytes of @fd at @off, whole: 0, or an errno (ENODATA: the file
 * ends first).  Pages and other large reads go through it. */
int pread_full(int fd, void *buf, size_t n, uint64_t off);

#endif
