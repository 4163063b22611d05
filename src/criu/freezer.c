/* freezer.c - a container its engine paused (containerd pauses a task
 * before it checkpoints it) is thawed for the dump and, if it runs on,
 * frozen again after: ckpt stops a tree by ptrace, which a frozen task
 * never enters.  The cgroup is the request's freeze_cgroup: cgroup v1's
 * freezer.state, or v2's cgroup.freeze and cgroup.events. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "criu.h"

#define CG_PATH_MAX	4200

/* The first line of @dir/@name into @buf: 0 or -errno. */
static int get(const char *dir, const char *name, char *buf, size_t len)
{
	char path[CG_PATH_MAX];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	return 0;
}

static int set(const char *dir, const char *name, const char *val)
{
	char path[CG_PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* 1 frozen (or freezing), 0 thawed, -errno: no freezer there. */
static int frozen(const char *cg, bool *v2)
{
	char buf[256];

	*v2 = false;
	if (!get(cg, "freezer.state", buf, sizeof(buf)))
		return strncmp(buf, "THAWED", 6) != 0;
	*v2 = true;
	if (!get(cg, "cgroup.events", buf, sizeof(buf)))
		return strstr(buf, "frozen 1") != NULL;
	return -ENOENT;
}

/* Freeze or thaw @cg and wait (a second at most) until it is so. */
static int put(struct criu_job *j, const char *cg, bool freeze)
{
	bool v2, dummy;
	int ret = frozen(cg, &v2);

	if (ret >= 0)
		ret = v2 ? set(cg, "cgroup.freeze", freeze ? "1" : "0")
			 : set(cg, "freezer.state", freeze ? "FROZEN" : "THAWED");
	for (int i = 0; !ret && i < 1000; i++) {
		char buf[32];
		bool done;

		/* (v1 is "FREEZING" until every task is) */
		if (v2)
			done = frozen(cg, &dummy) == freeze;
		else
			done = !get(cg, "freezer.state", buf, sizeof(buf)) &&
			       !strncmp(buf, freeze ? "FROZEN" : "THAWED", 6);
		if (done)
			return 0;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	ret = ret ? ret : -ETIMEDOUT;
	return criu_fail(j, -ret, "freeze_cgroup %s: %s it: %s", cg,
			 freeze ? "freezing" : "thawing", strerror(-ret));
}

int criu_thaw(struct criu_job *j, const char *cg, bool *was_frozen)
{
	bool v2;

	*was_frozen = cg && cg[0] && frozen(cg, &v2) == 1;
	return *was_frozen ? put(j, cg, false) : 0;
}

int criu_refreeze(struct criu_job *j, const char *cg)
{
	return put(j, cg, true);
}
