/* ckpt.c - the command line, a thin layer over the library. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "cli.h"
#include "log.h"
#include "pageserver.h"
#include "criu/criu.h"

#define EXIT_USAGE	2
#define EXIT_RESTART	125	/* restart itself failed (not the process) */

static const char usage_main[] =
	"usage: ckpt COMMAND [OPTIONS]\n"
	"  checkpoint [-o FILE|-] [--kill] [--skip-unsupported] [--shell-job] [--tcp-established]\n"
	"             [--tcp-close] [--skip-in-flight] [--external-unix] [--key FILE] [--log FILE] [-v] PID\n"
	"  restart [--detach] [--lazy] [--pidns] [--shell-job] [--tcp-close] [--join-ns TYPE:PATH]\n"
	"          [--external mnt[KEY]:PATH] [--key FILE] [--log FILE] [-v] FILE|-\n"
	"  restart --lazy --page-server HOST:PORT [--key FILE] [...] IMAGE\n"
	"  info [--json] [--key FILE] FILE|-\n"
	"  page-server [--address ADDR] --port PORT [--key FILE] IMAGE\n"
	"  demo\n"
	"  swrk FD, criu ARGS...  act as CRIU: its RPC on socket FD, its command line\n"
	"  --help, --version\n"
	"Run 'ckpt COMMAND --help' for one command.\n";

static const char usage_checkpoint[] =
	"usage: ckpt checkpoint [-o FILE|-] [--kill] [--skip-unsupported] [--shell-job] [--tcp-established]\n"
	"                       [--tcp-close] [--skip-in-flight] [--external-unix]\n"
	"                       [--cgroup-root [CTRL:]PATH]... [--key FILE] [--track-mem]\n"
	"                       [--parent IMG] [--compress[=LEVEL]] [--log FILE] [-q] [-v] PID\n"
	"Write an image of process PID.  It runs on unchanged unless --kill,\n"
	"which ends it once the image is complete and synced.\n"
	"  -o FILE             image file, '-' for standard output (default ckpt-PID.img)\n"
	"  --kill              end the process after a successful checkpoint\n"
	"  --skip-unsupported  leave out fds of unsupported kinds instead of failing\n"
	"  --shell-job         PID is a job of an interactive shell: its fds on the\n"
	"                      shell's terminal are saved as 'the job's terminal'\n"
	"                      (without it, a terminal outside the tree at an fd\n"
	"                      above 2 is refused)\n"
	"  --tcp-established   save established TCP connections (safe only if their\n"
	"                      peers keep talking to the restored process, and to no other)\n"
	"  --tcp-close         save TCP connections as closed (not read, not locked):\n"
	"                      they come back closed, and their peers get a RST\n"
	"  --skip-in-flight    drop connections waiting in a listener's accept queue\n"
	"                      (a warning; without it they are refused)\n"
	"  --external-unix     accept unix sockets connected outside the tree: a\n"
	"                      datagram one connected to a name is connected to it\n"
	"                      again, others are restored as if their peer had closed\n"
	"  --cgroup-root [CTRL:]PATH  the tree's groups in hierarchy CTRL (a controller\n"
	"                      or name=NAME; without it, every other one) are saved as\n"
	"                      below PATH, the root process's group or one above it,\n"
	"                      which restart --cgroup-root replaces (default: the root\n"
	"                      process's own group)\n"
	"  --key FILE          authenticate the image with the key in FILE (16 to\n"
	"                      4096 bytes): HMAC-SHA256 of all of it, which restart\n"
	"                      --key and info --key check before using any of it\n"
	"  --track-mem         track the pages the process writes from now on, for\n"
	"                      a --parent checkpoint after this one\n"
	"  --parent IMG        incremental: only the pages written since IMG, the\n"
	"                      last checkpoint made with --track-mem or --parent\n"
	"                      (tracking goes on); restart of it reads IMG too\n"
	"  --compress[=LEVEL]  compress the image with zstd at LEVEL (default 1, the\n"
	"                      fastest); data that does not compress is stored as is\n"
	"  --log FILE          append messages to FILE\n"
	"  -q                  no progress line (drawn on a terminal past 1 s)\n"
	"  -v                  log every step\n"
	"Exit: 0 done, 1 checkpoint failed (the process runs on as before), 2 usage.\n";

static const char usage_restart[] =
	"usage: ckpt restart [--detach] [--lazy] [--pidns] [--shell-job] [--tcp-close] [--no-cgroups]\n"
	"                    [--join-ns TYPE:PATH]... [--external mnt[KEY]:PATH]...\n"
	"                    [--cgroup-root [CTRL:]PATH]... [--console-socket PATH]\n"
	"                    [--key FILE] [--page-server HOST:PORT] [--log FILE] [-q] [-v] FILE|-\n"
	"Restore the processes saved in FILE ('-': standard input) with their pids.\n"
	"A container (its init checkpointed by its pid here) comes back as pid 1 of\n"
	"a new pid namespace, in new namespaces of its own as saved.\n"
	"  --detach    print its pid and return once it runs (it is handed to init)\n"
	"  --lazy      run it before its memory is loaded: private anonymous pages\n"
	"              come from the image when touched and in the background (a\n"
	"              loader process, ckpt-lazy, until all are in); one process\n"
	"  --page-server HOST:PORT  with --lazy: the image comes from `ckpt\n"
	"              page-server` at HOST:PORT (FILE names it there: its base name\n"
	"              must be the served image's); its lazy pages are never stored\n"
	"              here, only placed in the process; --key: both sides prove\n"
	"              they hold the key (without, anyone who can connect to the\n"
	"              server reads the memory)\n"
	"  --pidns     restore in a new pid namespace, where the pids are always free\n"
	"              (ckpt's child is the namespace's init, which reaps its orphans)\n"
	"  --shell-job run it as a job on this terminal: its terminal fds are this\n"
	"              terminal, it gets its saved termios and the foreground (both\n"
	"              are given back when it ends); needed for an image of a shell job\n"
	"  --tcp-close the TCP connections of the image come back closed (reads see\n"
	"              the end, writes fail with EPIPE; their peers get a RST)\n"
	"  --no-cgroups leave the processes in this caller's cgroups (and cgroup\n"
	"              namespace): no saved group is made or joined\n"
	"  --join-ns TYPE:PATH  a container's TYPE namespace (net, ipc, uts, mnt,\n"
	"              time) is the one at PATH (/proc/PID/ns/TYPE or a bind mount\n"
	"              of it), joined as it is, not made new\n"
	"  --external mnt[KEY]:PATH  a container's mount from outside it, saved\n"
	"              under KEY, is bound from PATH\n"
	"  --cgroup-root [CTRL:]PATH  the root process's cgroup in hierarchy CTRL\n"
	"              (a controller or name=NAME; without it, every other one)\n"
	"              is PATH, the groups below it moved along\n"
	"  --console-socket PATH  a session's terminal whose master was outside the\n"
	"              tree (a container's console): the new master is sent to\n"
	"              the unix socket PATH (as runc's --console-socket)\n"
	"  --key FILE  the image must be authenticated with the key in FILE (made\n"
	"              by checkpoint --key), checked before any of it is used\n"
	"  --log FILE  append messages to FILE\n"
	"  -q          no progress line (drawn on a terminal past 1 s)\n"
	"  -v          log every step\n"
	"Without --detach ckpt stays its parent, forwards SIGINT/SIGTERM/SIGHUP to\n"
	"it and exits with its status (128+N if killed by signal N).\n"
	"Exit: 125 restart failed (no process is left behind), 2 usage.\n";

static const char usage_page_server[] =
	"usage: ckpt page-server [--address ADDR] --port PORT [--key FILE] [--log FILE] [-v] IMAGE\n"
	"Serve IMAGE to one `ckpt restart --lazy --page-server HOST:PORT`: all of\n"
	"it but the pages its loader asks for, then those; exit once it is done.\n"
	"  --address ADDR  listen on ADDR (default 127.0.0.1)\n"
	"  --port PORT     listen on PORT\n"
	"  --key FILE      serve only a restart that proves it holds the key in\n"
	"                  FILE (restart --key FILE), and prove it holds it too; an\n"
	"                  image made with the key is checked with it first.\n"
	"                  Without it, anyone who can connect reads the memory.\n"
	"                  The bytes are not encrypted either way.\n"
	"Exit: 0 served, 1 failed, 2 usage.\n";

static const char usage_info[] =
	"usage: ckpt info [--json] [--key FILE] FILE|-\n"
	"Show what an image holds, record by record, after verifying it.\n"
	"  --key FILE  the image must be authenticated with the key in FILE\n"
	"Exit: 0 image complete and valid, 1 bad or truncated image, 2 usage.\n";

struct common {
	unsigned long flags;
	const char *log;
	int logfd;
	bool quiet;		/* -q */
};

static int open_log(struct common *o)
{
	o->logfd = 2;
	if (!o->quiet)
		o->flags |= CKPT_PROGRESS;
	if (o->log) {
		o->logfd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (o->logfd < 0) {
			fprintf(stderr, "ckpt: %s: %s\n", o->log, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The one line a failure gets on stderr (unless the log already is it). */
static void report(const struct common *o, const char *what,
		   const struct ckpt_result *r)
{
	if (o->logfd != 2)
		fprintf(stderr, "ckpt: %s failed: %s\n", what, r->msg);
}

/* The library syncs the image's data before --kill ends the process; the
 * image's name must be as durable, so its directory is synced now. */
static int sync_dir_of(const char *path)
{
	char *dup = strdup(path);
	int fd, ret;

	if (!dup)
		return -1;
	fd = open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dup);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

/* --key FILE: its bytes are the key; one out of bounds is refused here,
 * before anything is done. */
struct key {
	const char *path;
	size_t len;
	char buf[CKPT_KEY_MAX + 1];
};

static int read_key(struct key *k)
{
	int fd = open(k->path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	for (k->len = 0; fd >= 0 && k->len < sizeof(k->buf); k->len += n) {
		n = read(fd, k->buf + k->len, sizeof(k->buf) - k->len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			break;
	}
	if (fd < 0 || n < 0) {
		fprintf(stderr, "ckpt: --key %s: %s\n", k->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		explicit_bzero(k->buf, sizeof(k->buf));
		return -1;
	}
	close(fd);
	if (k->len >= CKPT_KEY_MIN && k->len <= CKPT_KEY_MAX)
		return 0;
	explicit_bzero(k->buf, sizeof(k->buf));
	fprintf(stderr, "ckpt: --key %s: %s%zu bytes; a key is %d to %d bytes\n", k->path,
		k->len > CKPT_KEY_MAX ? "more than " : "", k->len - (k->len > CKPT_KEY_MAX),
		CKPT_KEY_MIN, CKPT_KEY_MAX);
	return -1;
}

static volatile sig_atomic_t cancel_sig;

static void on_cancel(int sig)
{
	cancel_sig = sig;
	ckpt_cancel();
}

/* A SIGINT/SIGTERM/SIGHUP during a checkpoint ends it as a failure, the
 * target running as before (a CUDA process put back on its GPU), and
 * then ends us by that signal. */
static void cancel_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_cancel, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void die_of_cancel(void)
{
	if (!cancel_sig)
		return;
	signal(cancel_sig, SIG_DFL);
	raise(cancel_sig);
}

/* @cgr: room for the --cgroup-root arguments */
static int checkpoint_cmd(int argc, char **argv, const char **cgr)
{
	static const struct option opts[] = {
		{ "kill", no_argument, 0, 'k' },
		{ "skip-unsupported", no_argument, 0, 's' },
		{ "shell-job", no_argument, 0, 'j' },
		{ "tcp-established", no_argument, 0, 't' },
		{ "external-unix", no_argument, 0, 'x' },
		{ "tcp-close", no_argument, 0, 'C' },
		{ "skip-in-flight", no_argument, 0, 'F' },
		{ "cgroup-root", required_argument, 0, 'R' },
		{ "key", required_argument, 0, 'K' },
		{ "compress", optional_argument, 0, 'z' },
		{ "log", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' },
		{ "track-mem", no_argument, 0, 'T' },
		{ "parent", required_argument, 0, 'P' },
		{ 0 },
	};
	struct common o = { 0 };
	struct ckpt_result r = { 0 };
	struct ckpt_checkpoint_opts co = { .cgroup_root = cgr };
	struct key key = { 0 };
	const char *out = NULL;
	char def[64], *end;
	int c, fd, ret;
	long pid;

	while ((c = getopt_long(argc, argv, "o:qv", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'z':
			o.flags |= CKPT_COMPRESS;
			co.compress_level = optarg ? strtol(optarg, &end, 10) : 1;
			if (optarg && (*end || co.compress_level < 1 || co.compress_level > 19)) {
				fprintf(stderr, "ckpt: --compress=%s: a zstd level is 1 to 19\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'q': o.quiet = true; break;
		case 'k': o.flags |= CKPT_KILL; break;
		case 's': o.flags |= CKPT_SKIP_UNSUPPORTED; break;
		case 'j': o.flags |= CKPT_SHELL_JOB; break;
		case 't': o.flags |= CKPT_TCP_ESTABLISHED; break;
		case 'x': o.flags |= CKPT_EXTERNAL_UNIX; break;
		case 'C': o.flags |= CKPT_TCP_CLOSE; break;
		case 'F': o.flags |= CKPT_SKIP_IN_FLIGHT; break;
		case 'R': cgr[co.nr_cgroup_root++] = optarg; break;
		case 'K': key.path = optarg; break;
		case 'T': o.flags |= CKPT_TRACK_MEM; break;
		case 'P': o.flags |= CKPT_PARENT; co.parent = optarg; break;
		case 'l': o.log = optarg; break;
		case 'v': o.flags |= CKPT_VERBOSE; break;
		case 'h': fputs(usage_checkpoint, stdout); return 0;
		default: fputs(usage_checkpoint, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_checkpoint, stderr);
		return EXIT_USAGE;
	}
	pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "ckpt: bad pid '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (open_log(&o))
		return EXIT_USAGE;
	if (key.path && read_key(&key))
		return 1;
	co.key = key.path ? key.buf : NULL;
	co.key_len = key.len;
	if (!out) {
		snprintf(def, sizeof(def), "ckpt-%ld.img", pid);
		out = def;
	}
	if (!strcmp(out, "-")) {
		fd = 1;
	} else {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || sync_dir_of(out)) {
			fprintf(stderr, "ckpt: %s: %s\n", out, strerror(errno));
			return 1;
		}
	}
	cancel_on_signals();
	co.pid = pid;
	co.flags = o.flags;
	co.logfd = o.logfd;
	ret = ckpt_checkpoint_opts(fd, &co, &r);
	explicit_bzero(key.buf, sizeof(key.buf));
	if (fd != 1 && close(fd) && !ret) {
		snprintf(r.msg, sizeof(r.msg), "closing %s: %s", out, strerror(errno));
		ret = -EIO;
	}
	if (ret) {
		report(&o, "checkpoint", &r);
		die_of_cancel();
		return 1;
	}
	if (fd != 1 && isatty(2) && !o.quiet)
		fprintf(stderr, "ckpt: pid %ld saved to %s%s\n", pid, out,
			o.flags & CKPT_KILL ? " and ended" : "");
	return 0;
}

static int cmd_checkpoint(int argc, char **argv)
{
	/* at most one per argument */
	const char **cgr = calloc(argc + 1, sizeof(*cgr));
	int ret = 1;

	if (cgr)
		ret = checkpoint_cmd(argc, argv, cgr);
	else
		perror("ckpt");
	free(cgr);
	return ret;
}

static volatile pid_t restored_child;

/* A signal someone sent to us goes on to the restored process; one the
 * terminal sent to the whole group has reached it already. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (restored_child > 0 && si->si_code <= 0 && si->si_pid != restored_child)
		kill(restored_child, sig);
}

static void forward_signals(pid_t pid)
{
	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART };

	restored_child = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int wait_child(pid_t pid)
{
	int status;

	forward_signals(pid);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("ckpt: waitpid");
			return EXIT_RESTART;
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* --shell-job: the terminal as restart found it, in the foreground.  The
 * job gets the foreground and its own termios; both come back to us when
 * it ends or stops, as a shell would take them back. */
struct term_save {
	int fd;
	bool fg;
	struct termios tio;
};

static void term_save(struct term_save *s, unsigned long flags)
{
	s->fd = -1;
	s->fg = false;
	if (!(flags & CKPT_SHELL_JOB))
		return;
	s->fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	s->fg = s->fd >= 0 && tcgetpgrp(s->fd) == getpgrp() && !tcgetattr(s->fd, &s->tio);
}

/* Back to us (we are in the background now: SIGTTOU is held off). */
static void term_take(struct term_save *s)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(s->fd, getpgrp());
	tcsetattr(s->fd, TCSADRAIN, &s->tio);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void term_restore(struct term_save *s, bool job_runs_on)
{
	if (s->fg && !job_runs_on)
		term_take(s);
	if (s->fd >= 0)
		close(s->fd);
}

/* The job stopped (^Z): the terminal comes back to us and we stop too,
 * so that the shell sees its job stopped; when it continues us, the job
 * gets the terminal and continues. */
static void job_stopped(pid_t pid, struct term_save *s)
{
	struct termios job;
	pid_t pg = getpgid(pid);
	bool got = !tcgetattr(s->fd, &job);

	term_take(s);
	raise(SIGTSTP);
	if (got)
		tcsetattr(s->fd, TCSADRAIN, &job);
	if (pg > 0)
		tcsetpgrp(s->fd, pg);
	kill(pg > 0 ? -pg : pid, SIGCONT);
}

static int wait_job(pid_t pid, struct term_save *s)
{
	int status;

	forward_signals(pid);
	for (;;) {
		if (waitpid(pid, &status, WUNTRACED) < 0) {
			if (errno == EINTR)
				continue;
			perror("ckpt: waitpid");
			return EXIT_RESTART;
		}
		if (!WIFSTOPPED(status))
			break;
		job_stopped(pid, s);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* "mnt[KEY]:PATH" is "KEY:PATH" (in place). */
static char *external_arg(char *s)
{
	char *close = strstr(s, "]:");

	if (strncmp(s, "mnt[", 4) || !close)
		return s;
	memmove(close, close + 1, strlen(close + 1) + 1);
	return s + 4;
}

/* restart --page-server: the image from the server, its lazy pages left
 * out (pageserver.c); -EINVAL for a usage error. */
static int page_server_image(const char *hp, const char *image, const struct common *o,
			     const struct key *k)
{
	struct ckpt_log log = { .fd = o->logfd, .verbose = o->flags & CKPT_VERBOSE };

	if (!(o->flags & CKPT_LAZY)) {
		fputs("ckpt: --page-server is for --lazy: the server serves pages on demand\n", stderr);
		return -EINVAL;
	}
	return ps_open(hp, image, k->path ? k->buf : NULL, k->len, &log);
}

/* @join, @ext, @cgr: room for the --join-ns, --external and
 * --cgroup-root arguments */
static int restart_cmd(int argc, char **argv, const char **join, const char **ext,
		       const char **cgr)
{
	static const struct option opts[] = {
		{ "detach", no_argument, 0, 'd' },
		{ "lazy", no_argument, 0, 'z' },
		{ "pidns", no_argument, 0, 'p' },
		{ "shell-job", no_argument, 0, 'j' },
		{ "tcp-close", no_argument, 0, 'C' },
		{ "no-cgroups", no_argument, 0, 'G' },
		{ "join-ns", required_argument, 0, 'J' },
		{ "external", required_argument, 0, 'E' },
		{ "cgroup-root", required_argument, 0, 'R' },
		{ "key", required_argument, 0, 'K' },
		{ "console-socket", required_argument, 0, 'S' },
		{ "page-server", required_argument, 0, 'P' },
		{ "log", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	struct common o = { 0 };
	const char *ps = NULL;
	struct ckpt_result r = { 0 };
	struct ckpt_restart_opts ro = { 0 };
	struct key key = { 0 };
	struct term_save ts;
	int c, fd, ret;

	ro.join_ns = join;
	ro.external = ext;
	ro.cgroup_root = cgr;

	while ((c = getopt_long(argc, argv, "qv", opts, NULL)) != -1) {
		switch (c) {
		case 'q': o.quiet = true; break;
		case 'd': o.flags |= CKPT_DETACH; break;
		case 'z': o.flags |= CKPT_LAZY; break;
		case 'p': o.flags |= CKPT_PIDNS; break;
		case 'j': o.flags |= CKPT_SHELL_JOB; break;
		case 'C': o.flags |= CKPT_TCP_CLOSE; break;
		case 'G': o.flags |= CKPT_NO_CGROUPS; break;
		case 'J': join[ro.nr_join_ns++] = optarg; break;
		case 'E':	/* mnt[KEY]:PATH, as CRIU's, or KEY:PATH */
			ext[ro.nr_external++] = external_arg(optarg);
			break;
		case 'R': cgr[ro.nr_cgroup_root++] = optarg; break;
		case 'K': key.path = optarg; break;
		case 'S': ro.console_socket = optarg; break;
		case 'P': ps = optarg; break;
		case 'l': o.log = optarg; break;
		case 'v': o.flags |= CKPT_VERBOSE; break;
		case 'h': fputs(usage_restart, stdout); return 0;
		default: fputs(usage_restart, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_restart, stderr);
		return EXIT_USAGE;
	}
	if (open_log(&o))
		return EXIT_USAGE;
	if (key.path && read_key(&key))
		return EXIT_RESTART;
	ro.key = key.path ? key.buf : NULL;
	ro.key_len = key.len;
	if (ps) {	/* the key proved the server, which checked the image */
		fd = page_server_image(ps, argv[optind], &o, &key);
		ro.key = NULL;
		if (fd < 0)
			return fd == -EINVAL ? EXIT_USAGE : EXIT_RESTART;
	} else if (!strcmp(argv[optind], "-")) {
		fd = 0;
	} else {
		fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "ckpt: %s: %s\n", argv[optind], strerror(errno));
			return EXIT_RESTART;
		}
	}
	term_save(&ts, o.flags);
	ro.flags = o.flags;
	ro.logfd = o.logfd;
	ret = ckpt_restart_opts(fd, &ro, &r);
	explicit_bzero(key.buf, sizeof(key.buf));
	if (ps)		/* the loader has its own (lazy.c) */
		close(ps_sock_of(fd));
	if (fd != 0)
		close(fd);
	if (ret < 0) {
		term_restore(&ts, false);
		report(&o, "restart", &r);
		return EXIT_RESTART;
	}
	if (o.flags & CKPT_DETACH) {
		term_restore(&ts, true);
		printf("%d\n", ret);
		return 0;
	}
	/* (with --pidns our child is the namespace's init, no job) */
	ret = ts.fg && !(o.flags & CKPT_PIDNS) ? wait_job(ret, &ts) : wait_child(ret);
	term_restore(&ts, false);
	return ret;
}

static int cmd_restart(int argc, char **argv)
{
	/* at most one of each per argument */
	const char **join = calloc(argc + 1, sizeof(*join));
	const char **ext = calloc(argc + 1, sizeof(*ext));
	const char **cgr = calloc(argc + 1, sizeof(*cgr));
	int ret = EXIT_RESTART;

	if (join && ext && cgr)
		ret = restart_cmd(argc, argv, join, ext, cgr);
	else
		perror("ckpt");
	free(join);
	free(ext);
	free(cgr);
	return ret;
}

static int cmd_page_server(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "address", required_argument, 0, 'a' },
		{ "port", required_argument, 0, 'p' },
		{ "key", required_argument, 0, 'K' },
		{ "log", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	struct common o = { .quiet = true };
	const char *addr = "127.0.0.1", *port = NULL;
	struct key key = { 0 };
	struct ckpt_log log;
	int c, ret;

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'K': key.path = optarg; break;
		case 'l': o.log = optarg; break;
		case 'v': o.flags |= CKPT_VERBOSE; break;
		case 'h': fputs(usage_page_server, stdout); return 0;
		default: fputs(usage_page_server, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !port) {
		fputs(usage_page_server, stderr);
		return EXIT_USAGE;
	}
	if (open_log(&o) || (key.path && read_key(&key)))
		return EXIT_USAGE;
	log = (struct ckpt_log){ .fd = o.logfd, .verbose = o.flags & CKPT_VERBOSE };
	ret = ps_serve(addr, port, key.path ? key.buf : NULL, key.len, argv[optind], &log);
	explicit_bzero(key.buf, sizeof(key.buf));
	return ret ? 1 : 0;
}

static int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, 0, 'j' },
		{ "key", required_argument, 0, 'K' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	struct key key = { 0 };
	bool json = false;
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'K': key.path = optarg; break;
		case 'h': fputs(usage_info, stdout); return 0;
		default: fputs(usage_info, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_info, stderr);
		return EXIT_USAGE;
	}
	if (key.path && read_key(&key))
		return 1;
	fd = strcmp(argv[optind], "-") ? open(argv[optind], O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		fprintf(stderr, "ckpt: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	fflush(stdout);
	ret = ckpt_info_key(fd, json ? CKPT_INFO_JSON : 0, stdout, 2,
			    key.path ? key.buf : NULL, key.len);
	explicit_bzero(key.buf, sizeof(key.buf));
	fflush(stdout);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *me = argc > 0 && argv[0] ? argv[0] : "ckpt";

	/* a closed pipe must be a write error we report, not our death */
	signal(SIGPIPE, SIG_IGN);
	/* the CRIU drop-in: as `criu` (a link), `ckpt criu`, `ckpt swrk` */
	if (argc > 0 && !strcmp(strrchr(me, '/') ? strrchr(me, '/') + 1 : me, "criu"))
		return criu_main(argc, argv);
	if (!strcmp(cmd, "criu"))
		return criu_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "swrk"))
		return criu_swrk(argc - 1, argv + 1);
	if (!strcmp(cmd, "checkpoint"))
		return cmd_checkpoint(argc - 1, argv + 1);
	if (!strcmp(cmd, "restart"))
		return cmd_restart(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "page-server"))
		return cmd_page_server(argc - 1, argv + 1);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argv[0]);
	if (!strcmp(cmd, "__demo_workload"))
		return demo_workload();
	if (!strcmp(cmd, "--version")) {
		printf("ckpt %s\n", CKPT_VERSION_STRING);
		return 0;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage_main, stdout);
		return 0;
	}
	fputs(usage_main, stderr);
	return EXIT_USAGE;
}
