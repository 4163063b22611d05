/* head.c - the HEAD record checked against this machine. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "image.h"

/* The architectures an image may be of (image_format.h). */
static const char *ckpt_arch_name(uint32_t arch)
{
	switch (arch) {
	case CKPT_ARCH_X86_64:
		return "x86-64";
	case CKPT_ARCH_S390X:
		return "s390x";
	case CKPT_ARCH_PPC64LE:
		return "ppc64le";
	}
	return "unknown";
}

int head_check(struct ckpt_log *log, const struct rec *rec, bool strict)
{
	const struct rec_head *h = rec->data;

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
	if (h->arch != ARCH_ID)
		return log_err(log, ENOEXEC, "image is for architecture %u (%s), this is %s",
			       h->arch, ckpt_arch_name(h->arch), ARCH_NAME);
	if (h->page_size != (uint32_t)sysconf(_SC_PAGESIZE))
		return log_err(log, ENOEXEC, "image page size %u differs from %ld",
			       h->page_size, sysconf(_SC_PAGESIZE));
	return arch_head_check(log, h);
}
