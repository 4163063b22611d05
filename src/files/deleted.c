/* deleted.c - regular files open after their last name was removed, and
 * O_TMPFILE files: content, size, mode and owner are saved (src/files/
 * fobj.c) and the file comes back unnamed in the directory it was in;
 * each description its flags and offset.  A file whose open name was
 * removed but which has other links is reg.c's (reopened by one of
 * them), or refused. */
#define _GNU_SOURCE
#include <string.h>

#include "../files.h"

static bool deleted_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	size_t n = strlen(p->link);

	return S_ISREG(p->st.st_mode) && p->link[0] == '/' &&
	       strncmp(p->link, "/memfd:", 7) &&
	       n > 10 && !strcmp(p->link + n - 10, " (deleted)");
}

const struct file_ops file_deleted = {
	.kind = FILE_DELETED,
	.name = "deleted",
	.match = deleted_match,
	.dump = fobj_desc_dump,
	.load = fobj_desc_load,
	.open = fobj_desc_open,
	.show = fobj_desc_show,
};
