/* restore.c - a drop-in restore: `ckpt restart` of the image in the
 * images directory, then the notifications CRIU's callers wait for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "criu.h"

/* A regular file, never through a link: the directory may come from an
 * archive (podman --import), where a FIFO would hang the restore and a
 * link to /dev/zero fill memory. */
static int open_image(struct criu_job *j)
{
	int fd = openat(j->images_dir, CRIU_IMAGE_NAME,
			O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
			fcntl(fd, F_SETFL, 0))) {
		close(fd);
		return criu_fail(j, EINVAL, "images directory: %s is not a regular file",
				 CRIU_IMAGE_NAME);
	}
	if (fd >= 0)
		return fd;
	if (errno == ELOOP)
		return criu_fail(j, ELOOP, "images directory: %s is not a regular file (a symbolic link)",
				 CRIU_IMAGE_NAME);
	if (errno == ENOENT && !faccessat(j->images_dir, "pstree.img", F_OK, 0))
		return criu_fail(j, ENOENT, "the images directory holds CRIU's images, not ckpt's (%s): ckpt restores only its own",
				 CRIU_IMAGE_NAME);
	return criu_fail(j, errno, "images directory: %s: %s", CRIU_IMAGE_NAME, strerror(errno));
}

/* After the tree runs (ckpt restores it whole, then lets it go): the
 * caller's hooks for its namespaces and its pid, in CRIU's order. */
static int tell(struct criu_job *j, pid_t pid)
{
	static const char *const scripts[] = {
		"setup-namespaces", "post-setup-namespaces", "post-restore", "network-unlock",
	};

	for (size_t i = 0; j->notify && i < sizeof(scripts) / sizeof(*scripts); i++) {
		int ret = j->notify(j, scripts[i], pid, -1);

		if (ret)
			return criu_fail(j, -ret, "notification %s (pid %d): the caller failed it",
					 scripts[i], pid);
	}
	return 0;
}

/* A terminal container's new console master, to the caller (runc hands
 * it to its console socket), as CRIU sends it: while the tree is made. */
static int orphan_master(void *arg, int master)
{
	struct criu_job *j = arg;

	return j->notify(j, "orphan-pts-master", 0, master);
}

pid_t criu_restore(struct criu_job *j)
{
	struct ckpt_restart_opts o = {
		.flags = j->flags,
		.logfd = j->logfd,
		.join_ns = j->join_ns,
		.nr_join_ns = j->nr_join_ns,
		.external = j->external,
		.nr_external = j->nr_external,
		.cgroup_root = j->cgroup_root,
		.nr_cgroup_root = j->nr_cgroup_root,
	};
	struct ckpt_result r = { 0 };
	int fd = open_image(j);
	pid_t pid;

	if (j->orphan_pts && j->notify) {
		o.console = orphan_master;
		o.console_arg = j;
	}
	if (fd < 0)
		return fd;
	pid = ckpt_restart_opts(fd, &o, &r);
	close(fd);
	if (pid < 0)
		return criu_fail(j, -pid, "restart: %s", r.msg);
	if (tell(j, pid)) {
		/* the caller will not have it: nothing restored is left */
		criu_kill_tree(pid);
		return -j->err;
	}
	return pid;
}
