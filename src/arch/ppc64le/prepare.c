/* prepare.c - a checkpointed task made ready for remote calls: a syscall
 * instruction found in its code.  Its guard frames: guard.c and
 * ../guard_frame.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ctx.h"
#include "../arch.h"

#define SCAN_MAX	(1 << 16)

/* `sc` (44000002) at an aligned address: the vdso's first, then any
 * other code. */
int arch_find_syscall(struct cpt_task *t)
{
	uint8_t *buf = malloc(SCAN_MAX);
	int ret = -ENOENT;

	if (!buf)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && ret; pass++)
		for (int i = 0; i < t->maps.n && ret; i++) {
			const struct vma *v = &t->maps.v[i];
			uint64_t len = v->end - v->start;

			if (v->perms[2] != 'x' || (pass == 0) != !strcmp(v->path, "[vdso]"))
				continue;
			if (len > SCAN_MAX)
				len = SCAN_MAX;
			if (pread(t->rm.memfd, buf, len, v->start) != (ssize_t)len)
				continue;
			for (uint64_t k = 0; k + 3 < len; k += 4)
				if (!memcmp(buf + k, "\x02\x00\x00\x44", 4)) {
					t->rm.sc_ip = v->start + k;
					ret = 0;
					break;
				}
		}
	free(buf);
	return ret;
}
