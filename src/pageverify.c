/* pageverify.c - the page data of an image checked while restart builds
 * the tree.
 *
 * Restart verifies every record of an image before it makes anything of
 * it, but the PAGES payloads, nearly all of a big image, are read twice
 * that way: once by ckpt for their checksums, once by the restored
 * processes into their memory.  So their checksums are computed by a
 * child of ckpt (a process: ckpt forks puppets meanwhile, which a thread
 * of ours could leave with a lock held) on the other CPU while the tree
 * is built, and restart waits for it before any restored process may run
 * or touch anything outside itself (restore_end): a bad page fails the
 * restart then, and the half-built tree is destroyed as on any failure.
 * A small image is checked at once, as the rest of the records. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "ctx.h"
#include "pageverify.h"

/* below this, a child costs more than it saves (a fork: 0.3 ms here;
 * checking 4 MiB: 1.2 ms) */
#define DEFER_MIN	(4ULL << 20)

static int check_here(struct rst_ctx *c, const struct ir_span *s, size_t n)
{
	struct img_reader r;
	int ret = ir_init(&r, c->img_fd, c->log);

	for (size_t i = 0; i < n && !ret; i++)
		ret = ir_check_span(&r, &s[i]);
	ir_free(&r);
	return ret;
}

/* The spans checked where the image lies, mapped: no copy of each page
 * into a buffer first (a JVM's 58 MB copied again, on a CPU the build
 * needs).  An image cut short meanwhile kills this child by SIGBUS, and
 * the parent then finds out why (pv_finish()).  Returns the index of
 * the first bad span, n if all are good, or -errno if it cannot map. */
static long check_mapped(int img, const struct ir_span *s, size_t n)
{
	struct stat st;
	char *map;

	if (fstat(img, &st) || st.st_size <= 0)
		return -EINVAL;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, img, 0);
	if (map == MAP_FAILED)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		if (s[i].off > (uint64_t)st.st_size ||
		    s[i].len > (uint64_t)st.st_size - s[i].off)
			return -ENODATA;
		if (crc32c(0, map + s[i].off, s[i].len) != s[i].crc)
			return (long)i;
	}
	return (long)n;
}

/* The spans checked by reading them, as check_mapped() answers. */
static long check_read(int img, const struct ir_span *s, size_t n)
{
	struct ckpt_log quiet = { .fd = -1 };
	struct img_reader r;
	long bad = (long)n;

	if (ir_init(&r, img, &quiet))
		return -EIO;
	for (size_t i = 0; i < n && bad == (long)n; i++) {
		int ret = ir_check_span(&r, &s[i]);

		if (ret)
			bad = ret == -EBADMSG ? (long)i : ret;
	}
	ir_free(&r);
	return bad;
}

/* The child: the index of the first bad span on the pipe, exit 1; exit
 * 0 if all are good, 2 if it could not tell (a span past the image's
 * end is told by the parent, in its own words). */
static void __attribute__((noreturn)) verifier(int img, int out,
						const struct ir_span *s, size_t n)
{
	long bad = check_mapped(img, s, n);
	size_t i;

	if (bad < 0 && bad != -ENODATA)
		bad = check_read(img, s, n);
	if (bad < 0)
		_exit(2);
	if ((size_t)bad == n)
		_exit(0);
	i = bad;
	_exit(write(out, &i, sizeof(i)) == sizeof(i) ? 1 : 2);
}

/* In a container's engine, pids are the container's: the verifier,
 * which lives until every process is made, takes the one below ours
 * (the top of the namespace's), not the next free one, which the image
 * may well hold. */
static pid_t fork_verifier(const struct rst_ctx *c)
{
	pid_t want = getpid() - 1;
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};

	if (!c->root_made)
		return fork();
	return syscall(SYS_clone3, &ca, sizeof(ca));
}

int pv_start(struct rst_ctx *c, const struct ir_span *s, size_t n, uint64_t bytes)
{
	int fds[2];
	pid_t pid;

	if (bytes < DEFER_MIN)
		return check_here(c, s, n);
	if (pipe2(fds, O_CLOEXEC))
		return log_err(c->log, errno, "pipe:");
	pid = fork_verifier(c);
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return check_here(c, s, n);
	}
	if (pid == 0) {
		close(fds[0]);
		verifier(c->img_fd, fds[1], s, n);
	}
	close(fds[1]);
	c->pv_pid = pid;
	c->pv_fd = fds[0];
	c->pv_open = true;
	c->pv_spans = s;
	c->pv_nr = n;
	return 0;
}

static int reap(struct rst_ctx *c, int *status)
{
	pid_t got;

	while ((got = waitpid(c->pv_pid, status, 0)) < 0 && errno == EINTR)
		;
	c->pv_pid = 0;
	return got < 0 ? -errno : 0;
}

int pv_finish(struct rst_ctx *c)
{
	int status = 0, ret;
	size_t bad = 0;

	if (!c->pv_pid)
		return 0;
	ret = reap(c, &status);
	if (ret)
		return log_err(c->log, -ret, "waiting for the check of the image's pages:");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
	    read(c->pv_fd, &bad, sizeof(bad)) == sizeof(bad) && bad < c->pv_nr)
		return log_err(c->log, EBADMSG,
			       "record PAGES at offset %llu: checksum mismatch (corrupt image)",
			       (unsigned long long)c->pv_spans[bad].rec_pos);
	/* it could not tell: tell here */
	return check_here(c, c->pv_spans, c->pv_nr);
}

void pv_abort(struct rst_ctx *c)
{
	int status;

	if (c->pv_pid) {
		kill(c->pv_pid, SIGKILL);
		reap(c, &status);
	}
	if (c->pv_open)
		close(c->pv_fd);
	c->pv_open = false;
}
