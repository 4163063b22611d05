/* head.c - the HEAD record checked against this machine. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/cpu.h"
#include "image.h"

int head_check(struct ckpt_log *log, const struct rec *rec, bool strict)
{
	const struct rec_head *h = rec->data;
	uint64_t have;

	if (rec->type != REC_HEAD || rec->data_len != sizeof(*h) ||
	    h->magic != CKPT_MAGIC)
		return log_err(log, EBADMSG, "not a ckpt image (bad magic)");
	if (h->major != CKPT_FMT_MAJOR)
		return log_err(log, EBADMSG,
			       "image format version %u.%u, this ckpt reads %u.x",
			       h->major, h->minor, CKPT_FMT_MAJOR);
	if (!field_str_ok(h->kernel, sizeof(h->kernel)) ||
	    !field_str_ok(h->host, sizeof(h->host)) ||
	    !field_str_ok(h->tool, sizeof(h->tool)))
		return log_err(log, EBADMSG, "HEAD: unterminated string");
	/* pid 1 is a container's init only (an init of ours is no tree
	 * ckpt can take) */
	if (h->nr_tasks < 1 || h->nr_tasks > 65536 || h->flags >> 32 ||
	    h->root_pid < 1 || (h->root_pid == 1) != !!(h->flags & HEAD_CONTAINER))
		return log_err(log, EBADMSG, "HEAD: bad task count, pid or flags");
	if (!strict)
		return 0;
	if (h->arch != CKPT_ARCH_X86_64)
		return log_err(log, ENOEXEC, "image is for architecture %u, this is x86-64",
			       h->arch);
	if (h->page_size != (uint32_t)sysconf(_SC_PAGESIZE))
		return log_err(log, ENOEXEC, "image page size %u differs from %ld",
			       h->page_size, sysconf(_SC_PAGESIZE));
	have = cpu_xfeatures();
	if (h->xfeatures & ~have)
		return log_err(log, ENOEXEC,
			       "image needs CPU state components 0x%llx this CPU lacks",
			       (unsigned long long)(h->xfeatures & ~have));
	if (h->xstate_size != cpu_xstate_size())
		return log_err(log, ENOEXEC, "image xstate size %u differs from this CPU's %u",
			       h->xstate_size, cpu_xstate_size());
	return 0;
}
