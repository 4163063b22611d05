/* ns_time.h - a container's own time namespace (ns_time.c), for ns.c. */
#ifndef CKPT_KINDS_NS_TIME_H
#define CKPT_KINDS_NS_TIME_H

#include <stdbool.h>
#include <sys/types.h>

#include "../ctx.h"

/* NS_TIME: the clocks of @root's time namespace, now. */
int ns_time_dump(struct cpt_ctx *c, pid_t root);
bool ns_time_bad(const struct rec_ns_time *t);
/* The root puppet @t makes its time namespace, its clocks going on from
 * @saved, and enters it. */
int ns_time_restore(struct rst_ctx *c, struct rst_task *t, const struct rec_ns_time *saved);

#endif
