/* proc.c - reading /proc files whole, and parsing maps and smaps. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "proc.h"

int file_read(const char *path, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = fd < 0 ? errno : ENOMEM;

		free(buf);
		if (fd >= 0)
			close(fd);
		return -e;
	}
	for (;;) {
		ssize_t k;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return -e;
		}
		if (k == 0)
			break;
		n += k;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int proc_read(pid_t pid, const char *name, char **out, size_t *len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return file_read(path, out, len);
}

int proc_stat(pid_t pid, char *state, unsigned long long f[PROC_STAT_FIELDS])
{
	char *buf, *p;
	int ret = proc_read(pid, "stat", &buf, NULL);

	if (ret)
		return ret;
	memset(f, 0, PROC_STAT_FIELDS * sizeof(f[0]));
	/* comm may hold spaces and parens: fields go on after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2]) {
		free(buf);
		return -EINVAL;
	}
	if (state)
		*state = p[2];
	p += 3;
	for (int i = 4; i < PROC_STAT_FIELDS && *p == ' '; i++)
		f[i] = strtoull(p + 1, &p, 10);
	free(buf);
	return 0;
}

int proc_readlink(pid_t pid, const char *name, char *out, size_t n)
{
	char path[96];
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	k = readlink(path, out, n - 1);
	if (k < 0)
		return -errno;
	if ((size_t)k == n - 1)
		return -ENAMETOOLONG;
	out[k] = '\0';
	return 0;
}

int status_str(const char *text, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) || p[kl] != ':')
			continue;
		p += kl + 1;
		p += strspn(p, " \t");
		snprintf(out, n, "%.*s", (int)strcspn(p, "\n"), p);
		return 0;
	}
	return -ENOENT;
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || end == s ? -EINVAL : 0;
}

int status_u64(const char *text, const char *key, int base, uint64_t *v)
{
	char s[128];

	return status_str(text, key, s, sizeof(s)) ?: parse_u64(s, base, v);
}

int proc_status_str(pid_t pid, const char *key, char *out, size_t n)
{
	char *buf;
	int ret = proc_read(pid, "status", &buf, NULL);

	if (ret)
		return ret;
	ret = status_str(buf, key, out, n);
	free(buf);
	return ret;
}

int proc_status_u64(pid_t pid, const char *key, int base, uint64_t *v)
{
	char s[128];

	return proc_status_str(pid, key, s, sizeof(s)) ?: parse_u64(s, base, v);
}

static int parse_maps_line(const char *line, struct vma *v)
{
	/* sscanf() takes the length of all it is given: on a line of a
	 * buffer of 20,000 areas' smaps that was quadratic (a checkpoint of
	 * 60,000 areas took 36 s).  The fields before the path fit here. */
	char head[160];
	int pathpos = 0;

	memset(v, 0, sizeof(*v));
	snprintf(head, sizeof(head), "%.*s", (int)strcspn(line, "\n"), line);
	if (sscanf(head, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &v->start, &v->end, v->perms, &v->pgoff, &v->dev_major,
		   &v->dev_minor, &v->ino, &pathpos) < 7)
		return -EINVAL;
	/* not sscanf's " ": it would run on past the end of the line */
	pathpos += strspn(line + pathpos, " \t");
	v->path = strndup(line + pathpos, strcspn(line + pathpos, "\n"));
	return v->path ? 0 : -ENOMEM;
}

static bool is_maps_line(const char *p)
{
	/* "start-end perms" vs "Key:   value" */
	const char *sp = strchr(p, ' ');
	const char *dash = strchr(p, '-');

	return dash && sp && dash < sp;
}

/* Line @p of an area's smaps, if it is a count @v keeps (struct vma), in
 * bytes. */
static void smaps_count(const char *p, struct vma *v)
{
	static const struct { const char *key; size_t off; } keys[] = {
		{ "Rss:", offsetof(struct vma, rss) },
		{ "Anonymous:", offsetof(struct vma, anon) },
		{ "LazyFree:", offsetof(struct vma, lazyfree) },
		{ "Swap:", offsetof(struct vma, swap) },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strncmp(p, keys[i].key, strlen(keys[i].key))) {
			uint64_t kb = strtoull(p + strlen(keys[i].key), NULL, 10);

			*(uint64_t *)((char *)v + keys[i].off) = kb << 10;
			return;
		}
}

/* Line @p (NUL-ended) of maps or smaps into @l. */
static int area_line(const char *p, struct vma_list *l, int *cap)
{
	int ret;

	if (is_maps_line(p)) {
		if (l->n == *cap) {
			int ncap = *cap ? *cap * 2 : 64;
			struct vma *nv = realloc(l->v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			l->v = nv;
			*cap = ncap;
		}
		ret = parse_maps_line(p, &l->v[l->n]);
		if (ret)
			return ret;
		l->n++;
	} else if (l->n && !strncmp(p, "VmFlags:", 8)) {
		snprintf(l->v[l->n - 1].vmflags, sizeof(l->v[0].vmflags), "%s", p + 8);
	} else if (l->n) {
		smaps_count(p, &l->v[l->n - 1]);
	}
	return 0;
}

/* Read a piece at a time, line by line: the smaps of 60,000 areas is
 * 45 MiB of text, which whole was most of a checkpoint's own memory.
 * The piece grows for a line longer than it (a path deeper than
 * PATH_MAX is shown whole: 75 KB for 300 levels of long names), which
 * the checks of the area then refuse by name. */
#define AREAS_PIECE	(64 * 1024)

static int read_areas(pid_t pid, const char *file, struct vma_list *l)
{
	size_t have = 0, size = AREAS_PIECE;
	char path[96], *buf = malloc(size + 1), *p, *nl;
	int cap = 0, ret = 0, fd;

	l->v = NULL;
	l->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = buf ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		ret = buf ? -errno : -ENOMEM;
		free(buf);
		return ret;
	}
	for (;;) {
		ssize_t k = read(fd, buf + have, size - have);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			break;
		}
		have += k;
		buf[have] = '\0';
		for (p = buf; !ret && (nl = memchr(p, '\n', buf + have - p)); p = nl + 1) {
			*nl = '\0';
			ret = area_line(p, l, &cap);
		}
		if (!ret && !k && p < buf + have)	/* a last line without its newline */
			ret = area_line(p, l, &cap);
		if (ret || !k)
			break;
		have -= p - buf;
		memmove(buf, p, have);
		if (have == size) {
			char *nb = realloc(buf, 2 * size + 1);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
			size *= 2;
		}
	}
	close(fd);
	free(buf);
	if (ret)
		vma_list_free(l);
	return ret;
}

int proc_smaps(pid_t pid, struct vma_list *l)
{
	return read_areas(pid, "smaps", l);
}

int proc_maps(pid_t pid, struct vma_list *l)
{
	return read_areas(pid, "maps", l);
}

void vma_list_free(struct vma_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

bool vmflag(const struct vma *v, const char *flag)
{
	const char *p = v->vmflags;

	while ((p = strstr(p, flag))) {
		if ((p == v->vmflags || p[-1] == ' ') &&
		    (p[2] == ' ' || p[2] == '\0'))
			return true;
		p++;
	}
	return false;
}

int proc_state(pid_t pid, char *state)
{
	unsigned long long f[PROC_STAT_FIELDS];

	return proc_stat(pid, state, f);
}

int proc_root_stat(pid_t pid, const char *path, struct stat *st)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	char root[32];
	int dfd, fd, ret;

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	ret = fd < 0 ? -errno : 0;
	close(dfd);
	if (!ret && fstat(fd, st))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	return ret;
}
