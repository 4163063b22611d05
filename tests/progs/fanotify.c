/* fanotify.c - a fanotify group keeps its flags and its marks: an inode
 * mark with an ignored mask that survives modification, a mount mark and
 * a file system mark (fdinfo's lines the same as before, in any order),
 * and it reports an open of the marked file made after the restart.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/stat.h>

#include "tp.h"

#define MAX_LINES 16

/* The group's "fanotify " lines of fdinfo, sorted; how many. */
static int marks(int fd, char lines[][512])
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && n < MAX_LINES && fgets(line, sizeof(line), f))
		if (!strncmp(line, "fanotify ", 9))
			snprintf(lines[n++], 512, "%s", line);
	if (f)
		fclose(f);
	qsort(lines, n, 512, (int (*)(const void *, const void *))strcmp);
	return n;
}

/* Is there an open event of @path (an event fd on it) in the queue? */
static int saw_open(int fa, const char *path)
{
	char buf[8192], link[4096], proc[64];
	ssize_t len;
	int found = 0;

	while ((len = read(fa, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata *m = (void *)buf;

		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			ssize_t n;

			if (m->fd < 0)
				continue;
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", m->fd);
			n = readlink(proc, link, sizeof(link) - 1);
			if (n > 0 && (m->mask & FAN_OPEN) && m->pid == getpid()) {
				link[n] = 0;
				found |= !strcmp(link, path);
			}
			close(m->fd);
		}
	}
	return found;
}

int main(int argc, char **argv)
{
	char before[MAX_LINES][512], after[MAX_LINES][512], path[4096];
	int fa, nb, na, fd;

	tp_init(argc, argv);
	fa = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
			   O_RDONLY | O_LARGEFILE);
	fd = open("marked", O_CREAT | O_RDWR, 0644);
	if (fa < 0 || fd < 0 || !realpath("marked", path))
		return 1;
	close(fd);
	if (fanotify_mark(fa, FAN_MARK_ADD, FAN_OPEN | FAN_CLOSE_WRITE, AT_FDCWD, "marked") ||
	    fanotify_mark(fa, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
			  FAN_ACCESS, AT_FDCWD, "marked") ||
	    fanotify_mark(fa, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE | FAN_ONDIR,
			  AT_FDCWD, ".") ||
	    fanotify_mark(fa, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MODIFY, AT_FDCWD, "."))
		return 1;
	nb = marks(fa, before);
	tp_ready();
	tp_wait_go();

	na = marks(fa, after);
	tp_check(nb == 4, "%d fanotify lines before, want 4", nb);
	tp_check(na == nb, "%d fanotify lines, want %d", na, nb);
	for (int i = 0; i < na && i < nb; i++)
		tp_check(!strcmp(before[i], after[i]), "fdinfo: %s, want %s", after[i], before[i]);
	tp_check(fcntl(fa, F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost");
	saw_open(fa, path);	/* what came before */
	fd = open("marked", O_RDONLY);
	tp_check(fd >= 0 && saw_open(fa, path), "no open event for %s", path);
	close(fd);
	unlink("marked");
	return tp_done();
}
