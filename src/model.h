/* model.h - restart's model of an image (model.c): the records read and
 * verified, the tree of tasks they load into, and lookups in it for
 * restart, `ckpt info` and the kinds. */
#ifndef CKPT_MODEL_H
#define CKPT_MODEL_H

#include "kinds.h"

/* The largest pid or tid (the kernel's PID_MAX_LIMIT on 64-bit). */
#define RST_PID_MAX	(1 << 22)

/* Every record of an image, read and checksummed; then the model built
 * from them (with @here: checked against this machine too). */
struct records {
	struct rec *r;
	size_t n;
};
int image_read(struct rst_ctx *c, struct records *rs, bool defer);
int image_model(struct rst_ctx *c, struct records *rs, bool here);
void records_free(struct records *rs);

/* The process whose fd table, fs info or memory (@share: TASK_SHARES_*)
 * @t uses: itself, or up the chain of parents it shares it with. */
struct rst_task *rst_owner(struct rst_ctx *c, struct rst_task *t, uint32_t share);
/* The task of the tree with @pid, or NULL. */
struct rst_task *rst_task_by_pid(struct rst_ctx *c, pid_t pid);
/* The first 32-bit process of the image, or NULL. */
struct rst_task *rst_first_ia32(struct rst_ctx *c);

/* Address ranges [start, end), in no order. */
struct span {
	uint64_t start, end;
};
struct spans {
	struct span *s;
	int n, cap;
};
int spans_add(struct spans *l, uint64_t start, uint64_t end);
/* A free range of @len bytes above 1 MiB, in no process's saved layout
 * (the kinds' areas()) nor in @busy: -ENOMEM if none. */
int rst_find_gap(struct rst_ctx *c, const struct vma_list *busy,
		 uint64_t len, uint64_t *addr);

#endif
