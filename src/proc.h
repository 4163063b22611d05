/* proc.h - reading /proc. */
#ifndef CKPT_PROC_H
#define CKPT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct vma {
	uint64_t start, end, pgoff;
	char perms[5];		/* "rwxp" as in maps */
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	char *path;		/* "" for anonymous; [heap], [vdso], ... */
	char vmflags[128];	/* VmFlags line of smaps */
	/* smaps' Rss, Anonymous, LazyFree and Swap, in bytes (0 from maps) */
	uint64_t rss, anon, lazyfree, swap;
};

struct vma_list {
	struct vma *v;
	int n;
};

/* Read a whole /proc file (NUL-terminated, *len without the NUL). */
int proc_read(pid_t pid, const char *name, char **out, size_t *len);
/* Read a whole file by path. */
int file_read(const char *path, char **out, size_t *len);
/* The areas of @pid's memory with their VmFlags (smaps, which also
 * counts every area's pages: slow for a big process), or without
 * (maps: ranges and names alone). */
int proc_smaps(pid_t pid, struct vma_list *l);
int proc_maps(pid_t pid, struct vma_list *l);
void vma_list_free(struct vma_list *l);
bool vmflag(const struct vma *v, const char *flag);
/* A "Name:\tvalue" line of /proc/PID/status; returns 0 or -errno. */
int proc_status_str(pid_t pid, const char *key, char *out, size_t n);
int proc_status_u64(pid_t pid, const char *key, int base, uint64_t *v);
/* The same of a status read once (@text, from proc_read(): a read of it
 * costs 15-25 us, and a process's credentials are nine fields). */
int status_str(const char *text, const char *key, char *out, size_t n);
int status_u64(const char *text, const char *key, int base, uint64_t *v);
#define PROC_STAT_FIELDS 53
/* The numbered fields of /proc/PID/stat (f[4] is ppid, as in proc(5));
 * *state gets field 3. */
int proc_stat(pid_t pid, char *state, unsigned long long f[PROC_STAT_FIELDS]);
/* Only *state (R, S, Z...); an error for a pid no process has. */
int proc_state(pid_t pid, char *state);
int proc_readlink(pid_t pid, const char *name, char *out, size_t n);
/* stat() of @path as @pid sees it: resolved inside its root (a
 * container's, a chroot), absolute symlinks too.  0 or -errno. */
int proc_root_stat(pid_t pid, const char *path, struct stat *st);

#endif
