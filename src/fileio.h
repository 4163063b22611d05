/* fileio.h - whole reads and writes of files, below everything that
 * reads or writes images. */
#ifndef CKPT_FILEIO_H
#define CKPT_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* @n bytes of @fd at @off, whole: 0, or an errno (ENODATA: the file
 * ends first).  *@got, unless NULL, is how many were read, so that a
 * failure can name the first byte it lacks.  Pages and other large
 * reads go through it. */
int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got);
/* @n bytes to @fd at @off, whole: 0, or an errno (EIO: nothing taken). */
int pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

#endif
