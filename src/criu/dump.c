/* dump.c - a drop-in dump: `ckpt checkpoint` of the tree into the images
 * directory, between the notifications CRIU's callers wait for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "criu.h"

static int tell(struct criu_job *j, const char *script)
{
	int ret;

	if (!j->notify)
		return 0;
	ret = j->notify(j, script, 0, -1);
	return ret ? criu_fail(j, -ret, "notification %s: the caller failed it", script) : 0;
}

/* The marker engines look for (podman: "inventory.img exists").  Not
 * CRIU's format: one line saying whose image this is and where it is,
 * so that CRIU itself refuses it clearly rather than misreading it. */
static int write_inventory(struct criu_job *j)
{
	char line[256];
	int fd, n, ret = 0;

	n = snprintf(line, sizeof(line), "ckpt %s image: %s (not CRIU's format; `ckpt info %s`)\n",
		     CKPT_VERSION_STRING, CRIU_IMAGE_NAME, CRIU_IMAGE_NAME);
	fd = openat(j->images_dir, CRIU_INVENTORY_NAME,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || write(fd, line, n) != n || fsync(fd))
		ret = criu_fail(j, errno, "writing %s: %s", CRIU_INVENTORY_NAME, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!ret && fsync(j->images_dir))
		ret = criu_fail(j, errno, "syncing the images directory: %s", strerror(errno));
	return ret;
}

/* The image, complete and synced, or nothing of it left. */
static int write_image(struct criu_job *j)
{
	struct ckpt_result r = { 0 };
	bool was_frozen = false;
	int fd, ret;

	/* an inventory without its image must never be seen */
	if (unlinkat(j->images_dir, CRIU_INVENTORY_NAME, 0) && errno != ENOENT)
		return criu_fail(j, errno, "removing the old %s: %s", CRIU_INVENTORY_NAME, strerror(errno));
	fd = openat(j->images_dir, CRIU_IMAGE_NAME,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fsync(j->images_dir)) {
		ret = criu_fail(j, errno, "images directory: %s: %s", CRIU_IMAGE_NAME, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	ret = criu_thaw(j, j->freeze_cgroup, &was_frozen);
	if (!ret) {
		struct ckpt_checkpoint_opts o = {
			.pid = j->pid, .flags = j->flags, .logfd = j->logfd,
			.cgroup_root = j->cgroup_root, .nr_cgroup_root = j->nr_cgroup_root,
			.parent = j->parent[0] ? j->parent : NULL,
		};

		ret = ckpt_checkpoint_opts(fd, &o, &r);
		if (ret)
			criu_fail(j, -ret, "checkpoint of pid %d: %s", j->pid, r.msg);
	}
	/* paused as its engine left it, when it runs on (CRIU keeps it
	 * frozen throughout; here it ran from the thaw to ckpt's stop, and
	 * runs from ckpt's end to this freeze) */
	if (was_frozen && (ret || !(j->flags & CKPT_KILL))) {
		int refrozen = criu_refreeze(j, j->freeze_cgroup);

		ret = ret ? ret : refrozen;
	}
	if (!ret && fsync(fd))
		ret = criu_fail(j, errno, "syncing %s: %s", CRIU_IMAGE_NAME, strerror(errno));
	if (close(fd) && !ret)
		ret = criu_fail(j, errno, "closing %s: %s", CRIU_IMAGE_NAME, strerror(errno));
	if (ret)
		unlinkat(j->images_dir, CRIU_IMAGE_NAME, 0);
	return ret;
}

int criu_dump(struct criu_job *j)
{
	int ret;

	if (j->pid <= 0)
		return criu_fail(j, EINVAL, "dump: no pid to dump (-t PID, or the request's pid)");
	ret = tell(j, "pre-dump");
	if (!ret)
		ret = tell(j, "network-lock");
	if (ret)
		return ret;
	ret = write_image(j);
	if (!ret)
		ret = write_inventory(j);
	if (!ret)
		ret = tell(j, "post-dump");
	/* the tree runs on (left running, or the dump failed): its
	 * network too (a failure of this one is the caller's to see) */
	if (ret || !(j->flags & CKPT_KILL)) {
		int unlocked = tell(j, "network-unlock");

		ret = ret ? ret : unlocked;
	}
	return ret;
}
