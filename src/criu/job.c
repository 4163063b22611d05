/* job.c - what a drop-in job (criu.h) keeps: its failure, its lists. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "criu.h"

int criu_fail(struct criu_job *j, int err, const char *fmt, ...)
{
	va_list ap;

	if (!j->err) {		/* the first failure is the one reported */
		va_start(ap, fmt);
		vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
		va_end(ap);
		j->err = err > 0 ? err : EINVAL;
	}
	return -j->err;
}

static const char *keep(struct criu_job *j, const char *a, const char *b)
{
	char *s;

	if (j->nr_strs == CRIU_MAX_LIST)
		return NULL;
	s = j->strs[j->nr_strs];
	if ((size_t)snprintf(s, sizeof(j->strs[0]), "%s:%s", a, b) >= sizeof(j->strs[0]))
		return NULL;
	j->nr_strs++;
	return s;
}

int criu_add_external(struct criu_job *j, const char *key, const char *path)
{
	const char *s = keep(j, key, path);

	if (!s || j->nr_external == CRIU_MAX_LIST)
		return criu_fail(j, E2BIG, "external mnt[%s]:%s: too long, or more than %d",
				 key, path, CRIU_MAX_LIST);
	j->external[j->nr_external++] = s;
	return 0;
}

int criu_add_join_ns(struct criu_job *j, const char *type, const char *path)
{
	const char *s = keep(j, type, path);

	if (!s || j->nr_join_ns == CRIU_MAX_LIST)
		return criu_fail(j, E2BIG, "namespace %s:%s: too long, or more than %d",
				 type, path, CRIU_MAX_LIST);
	j->join_ns[j->nr_join_ns++] = s;
	return 0;
}

int criu_add_cgroup_root(struct criu_job *j, const char *ctrl, const char *path)
{
	const char *s = ctrl && ctrl[0] ? keep(j, ctrl, path) : path;

	if (!s || j->nr_cgroup_root == CRIU_MAX_LIST)
		return criu_fail(j, E2BIG, "cgroup root %s:%s: too long, or more than %d",
				 ctrl ? ctrl : "", path, CRIU_MAX_LIST);
	j->cgroup_root[j->nr_cgroup_root++] = s;
	return 0;
}
