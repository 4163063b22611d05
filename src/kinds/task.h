/* task.h - what the task kind asked of each thread at checkpoint, for
 * the other kinds: the calls of all the threads of a process are made at
 * once (their stops overlap), with its TASK record, before any kind's
 * thread records. */
#ifndef CKPT_KINDS_TASK_H
#define CKPT_KINDS_TASK_H

#include "../kinds.h"

/* @th's parent-death signal (PR_GET_PDEATHSIG). */
int task_pdeathsig(struct cpt_ctx *c, const struct cpt_task *t,
		   const struct cpt_thread *th, int *sig);

/* @th's timer slack (PR_GET_TIMERSLACK), ns. */
int task_timerslack(struct cpt_ctx *c, const struct cpt_task *t,
		    const struct cpt_thread *th, uint64_t *ns);

#endif
