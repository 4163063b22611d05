/* caps.c - ckpt's own capabilities, asked of the kernel (capget): below
 * everything that decides by them (an ordinary user's restart, unpriv.c;
 * whether a helper may be made idle, idle.c). */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

bool cap_effective(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (cap < 0 || cap >= 64 || syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1U << (cap % 32));
}
