/* memfd.c - memfds: name, content, size, seals, mode (src/files/fobj.c
 * keeps the file itself); each description its flags and offset.
 * MFD_CLOEXEC is the fd's flag (FD record); MFD_ALLOW_SEALING shows as
 * the absence of F_SEAL_SEAL. */
#define _GNU_SOURCE
#include <string.h>

#include "../files.h"

static bool memfd_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	size_t n = strlen(p->link);

	return S_ISREG(p->st.st_mode) && !strncmp(p->link, "/memfd:", 7) &&
	       n > 10 && !strcmp(p->link + n - 10, " (deleted)");
}

const struct file_ops file_memfd = {
	.kind = FILE_MEMFD,
	.name = "memfd",
	.match = memfd_match,
	.dump = fobj_desc_dump,
	.load = fobj_desc_load,
	.open = fobj_desc_open,
	.show = fobj_desc_show,
};
