/* fhandle.h - an inode's path from its file handle, for the kinds that
 * save watches and marks by handle (inotify.c, fanotify.c).  Devices are
 * in the kernel's encoding (major << 20 | minor), as fdinfo gives them. */
#ifndef CKPT_FHANDLE_H
#define CKPT_FHANDLE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>

/* mountinfo's escapes (\040...) undone in place. */
void mountinfo_unescape(char *s);
/* The next mount of a /proc/PID/mountinfo: its id, device and mount
 * point (CKPT_PATH_MAX bytes); false at the end. */
bool mountinfo_next(FILE *mi, unsigned int *id, unsigned int *sdev, char *mp);
/* Is @path (not followed) inode @ino of device @sdev? */
bool same_inode(const char *path, unsigned long long ino, unsigned int sdev);
/* The path (CKPT_PATH_MAX bytes) of inode @ino of @sdev now, through its
 * handle @fh opened on a mount of its device that reaches it: 0, or
 * -ENOENT (none does), -errno. */
int fhandle_path(struct file_handle *fh, unsigned long long ino,
		 unsigned int sdev, char *path);

#endif
