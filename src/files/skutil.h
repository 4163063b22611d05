/* skutil.h - what socket kinds need of a socket: its classic BPF filter
 * (SO_ATTACH_FILTER), read back and attached again (packet.c, netlink.c,
 * sockopt.c's table for inet sockets), its buffer sizes, and whether it
 * lives in ckpt's own network namespace. */
#ifndef CKPT_SKUTIL_H
#define CKPT_SKUTIL_H

#include <stdint.h>

#define SKFILTER_MAX	4096	/* BPF_MAXINSNS */

/* Checkpoint: @sk's filter as a malloc()ed *insns of *n instructions
 * (8 bytes each; *n 0 and NULL: none).  -EACCES for an eBPF program
 * (SO_ATTACH_BPF), which the kernel cannot give back; else -errno. */
int skfilter_get(int sk, void **insns, uint32_t *n);
struct ckpt_log;
/* Checkpoint: skfilter_get(), its failure reported for the @kind
 * ("packet") socket at @pid's @fd: an eBPF program is refused, naming
 * it.  0, or -errno (reported). */
int skfilter_dump(struct ckpt_log *log, int pid, int fd, const char *kind, int sk,
		  void **insns, uint32_t *n);
/* Restart: attach @n instructions (0: nothing), from the image's copy,
 * aligned or not (the kernel copies it).  0 or -errno. */
int skfilter_set(int sk, const void *insns, uint32_t n);

/* Restart: SO_RCVBUF and SO_SNDBUF made what getsockopt read at
 * checkpoint (a value a new socket has is left alone).  0 or -errno. */
int sk_bufs_set(int sk, uint32_t rcvbuf, uint32_t sndbuf);
/* 1 if @sk's network namespace is ckpt's, 0 if not, or -errno. */
int sk_netns_ours(int sk);

#endif
