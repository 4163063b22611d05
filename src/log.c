/* log.c - messages with context: "ckpt: [err E][pos P][pid N] text". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "progress.h"

static void log_emit(struct ckpt_log *l, const char *level, int err,
		     const char *fmt, va_list ap, char *keep, size_t keeplen)
{
	char text[400], line[600];
	size_t n;

	vsnprintf(text, sizeof(text), fmt, ap);
	n = strlen(text);
	if (err && n && text[n - 1] == ':')
		snprintf(text + n, sizeof(text) - n, " %s", strerror(err));
	if (keep)
		snprintf(keep, keeplen, "%s", text);
	if (l->fd < 0)
		return;
	progress_clear(l);	/* the message on a line of its own */
	n = snprintf(line, sizeof(line), "ckpt:%s%s", *level ? " " : "", level);
	if (err)
		n += snprintf(line + n, sizeof(line) - n, "[err %d]", err);
	if (l->pos)
		n += snprintf(line + n, sizeof(line) - n, "[pos %llu]",
			      (unsigned long long)*l->pos);
	if (l->container)
		n += snprintf(line + n, sizeof(line) - n, "[container %d]", l->container);
	if (l->pid)
		n += snprintf(line + n, sizeof(line) - n, "[pid %d]", l->pid);
	if (n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - n, "%s%s\n",
			      " ", text);
	if (n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (write(l->fd, line, n) < 0)
		return;		/* nowhere left to report it */
}

int log_err(struct ckpt_log *l, int err, const char *fmt, ...)
{
	va_list ap;
	bool first = l->err == 0;

	if (err <= 0)
		err = EIO;
	/* An error is reported once: what fails after it is its echo. */
	va_start(ap, fmt);
	if (first || l->verbose)
		log_emit(l, "error", err, fmt, ap, first ? l->msg : NULL,
			 sizeof(l->msg));
	va_end(ap);
	if (first)
		l->err = err;
	return -err;
}

void log_warn(struct ckpt_log *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(l, "warning", 0, fmt, ap, NULL, 0);
	va_end(ap);
}

void log_info(struct ckpt_log *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->verbose)
		return;
	va_start(ap, fmt);
	log_emit(l, "", 0, fmt, ap, NULL, 0);
	va_end(ap);
}

uint64_t log_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
