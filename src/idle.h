/* idle.h - work that runs only where a CPU has nothing else to do (the
 * SCHED_IDLE class), made plain work again once it is waited for. */
#ifndef CKPT_IDLE_H
#define CKPT_IDLE_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether idle_leave() can make a task of ours plain again: an
 * RLIMIT_NICE of at least 20 - our nice value, or CAP_SYS_NICE in the
 * initial user namespace.  Where not, no task is made idle: waited for
 * under load, it would get next to no CPU. */
bool idle_can_leave(void);
/* Task @tid (0: the caller) into SCHED_IDLE; 0 or -errno. */
int idle_enter(pid_t tid);
/* Task @tid (0: the caller) plain again (SCHED_OTHER): whatever else
 * runs, it gets its share.  0 or -errno. */
int idle_leave(pid_t tid);

#endif
