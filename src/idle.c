/* idle.c - work that runs only where a CPU has nothing else to do.
 *
 * Some of ckpt's work only helps if it costs nobody anything: a tmpfs
 * image's pages made ahead while ckpt waits on the tree (prealloc.c),
 * the page check of a big image beside the placing (pageverify.c).  On
 * a plain thread or process it takes the CPU the work that matters
 * needs; in the SCHED_IDLE class it runs where a CPU would idle.  But
 * once ckpt waits for it, it must get its share again, or a machine
 * busy with others' work (an idle task gets 3/1027 of a CPU against one
 * plain task) would hold ckpt for minutes: the waiter makes it plain
 * first.  Where that cannot be undone it is never made idle: leaving
 * SCHED_IDLE takes an RLIMIT_NICE of at least 20 - nice, or CAP_SYS_NICE
 * in the initial user namespace (the kernel's capable(): an ordinary
 * user's restart holds every capability, of the user namespace it
 * made for its pids, and none that counts here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "caps.h"
#include "idle.h"

/* The initial user namespace has a fixed inode number (the kernel's
 * PROC_USER_INIT_INO); a full identity map would not tell it from a
 * namespace root made with one. */
static bool initial_userns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/user", &st) && st.st_ino == 0xEFFFFFFDU;
}

bool idle_can_leave(void)
{
	struct rlimit rl;
	int nice;

	if (cap_effective(CAP_SYS_NICE) && initial_userns())
		return true;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	return !errno && !getrlimit(RLIMIT_NICE, &rl) &&
	       (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)(20 - nice));
}

static int set_policy(pid_t tid, int policy)
{
	struct sched_param sp = { .sched_priority = 0 };

	return sched_setscheduler(tid, policy, &sp) ? -errno : 0;
}

int idle_enter(pid_t tid)
{
	return set_policy(tid, SCHED_IDLE);
}

int idle_leave(pid_t tid)
{
	return set_policy(tid, SCHED_OTHER);
}
