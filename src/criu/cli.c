/* cli.c - the part of CRIU's command line that scripts use, when ckpt
 * runs as `criu` (a link of that name) or as `ckpt criu`: dump, restore,
 * check, pre-dump, swrk; the same jobs as the RPC's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "criu.h"

static const char usage[] =
	"usage: criu dump -t PID -D DIR [-R|--leave-running] [--tcp-established] [--ext-unix-sk]\n"
	"                 [-j|--shell-job] [-l|--file-locks] [-o LOG] [-W DIR] [-v]\n"
	"                 [--freeze-cgroup PATH] [--cgroup-root [CTRL:]PATH]...\n"
	"                 [--root PATH] [--external mnt[KEY]:PATH]...\n"
	"                 [--track-mem] [--prev-images-dir DIR]\n"
	"       criu pre-dump -t PID -D DIR [--track-mem] [--prev-images-dir DIR] (as dump)\n"
	"       criu restore -D DIR [-d|--restore-detached] [--pidfile FILE] [-j] [--tcp-close]\n"
	"                 [--inherit-fd fd[N]:KEY]... [--external mnt[KEY]:PATH]... [--root PATH]\n"
	"                 [--cgroup-root [CTRL:]PATH]... [-o LOG] [-W DIR] [-v]\n"
	"       criu check | criu swrk FD | criu --version\n"
	"ckpt acting as CRIU: the image is DIR/" CRIU_IMAGE_NAME " (with DIR/" CRIU_INVENTORY_NAME
	" for engines),\nmade and read by ckpt checkpoint and restart.  A pre-dump leaves the tree\n"
	"running, its memory tracked; a dump --prev-images-dir (relative to -D) then saves only\n"
	"the pages written since, and restore reads the chain.\n";

enum { O_TCP = 256, O_EXTUNIX, O_FLOCKS, O_ROOT, O_EXT, O_PIDFILE, O_INHERIT,
       O_TCPCLOSE, O_MANAGE, O_FREEZE, O_CGROOT, O_IGNORED, O_TRACK, O_PREV };

static const struct option opts[] = {
	{ "tree", required_argument, 0, 't' },
	{ "images-dir", required_argument, 0, 'D' },
	{ "work-dir", required_argument, 0, 'W' },
	{ "leave-running", no_argument, 0, 'R' },
	{ "restore-detached", no_argument, 0, 'd' },
	{ "shell-job", no_argument, 0, 'j' },
	{ "file-locks", no_argument, 0, 'l' },
	{ "log-file", required_argument, 0, 'o' },
	{ "tcp-established", no_argument, 0, O_TCP },
	{ "tcp-close", no_argument, 0, O_TCPCLOSE },
	{ "ext-unix-sk", no_argument, 0, O_EXTUNIX },
	{ "root", required_argument, 0, O_ROOT },
	{ "external", required_argument, 0, O_EXT },
	{ "pidfile", required_argument, 0, O_PIDFILE },
	{ "inherit-fd", required_argument, 0, O_INHERIT },
	{ "manage-cgroups", optional_argument, 0, O_MANAGE },
	{ "freeze-cgroup", required_argument, 0, O_FREEZE },
	{ "cgroup-root", required_argument, 0, O_CGROOT },
	{ "evasive-devices", no_argument, 0, O_IGNORED },
	{ "track-mem", no_argument, 0, O_TRACK },
	{ "prev-images-dir", required_argument, 0, O_PREV },
	{ "link-remap", no_argument, 0, O_IGNORED },
	{ "help", no_argument, 0, 'h' },
	{ 0 },
};

struct cli {
	struct criu_job j;
	bool dump;
	const char *dir, *work, *log, *pidfile, *root, *prev;
	char *inherit[CRIU_MAX_LIST];
	int nr_inherit;
	char *ext[CRIU_MAX_LIST];
	int nr_ext;
};

/* "fd[N]:KEY": a namespace to join (extRootNetNS...), or the restored
 * container's outside stdio, which is ours (fds 0-2) anyway. */
static int inherit(struct cli *c, const char *a)
{
	static const char *const ns[][2] = {
		{ "extRootNetNS", "net" }, { "extRootIpcNS", "ipc" }, { "extRootUtsNS", "uts" },
	};
	char *end, path[64];
	long fd;

	if (strncmp(a, "fd[", 3))
		return criu_fail(&c->j, EINVAL, "--inherit-fd %s: want fd[N]:KEY", a);
	fd = strtol(a + 3, &end, 10);
	if (strncmp(end, "]:", 2) || fd < 0 || fd > 0x7fffffff)
		return criu_fail(&c->j, EINVAL, "--inherit-fd %s: want fd[N]:KEY", a);
	for (size_t k = 0; k < sizeof(ns) / sizeof(*ns); k++) {
		if (!strcmp(end + 2, ns[k][0])) {
			snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
			return criu_add_join_ns(&c->j, ns[k][1], path);
		}
	}
	if (fd > 2)
		return criu_fail(&c->j, EOPNOTSUPP, "--inherit-fd %s: ckpt gives a container's outside stdio from its own fds 0-2 only", a);
	return 0;
}

static int external(struct cli *c, char *e)
{
	char *close = strstr(e, "]:");

	if (strncmp(e, "mnt[", 4) || !close)
		return criu_fail(&c->j, EOPNOTSUPP, "--external %s: ckpt takes only mnt[KEY]:PATH", e);
	if (c->dump)	/* a container's host binds are saved by mountpoint */
		return 0;
	*close = 0;
	return criu_add_external(&c->j, e + 4, close + 2);
}

/* 0, 1 when it showed the help, or a negative errno with the job failed */
static int parse(struct cli *c, int argc, char **argv)
{
	char *end;
	int o;

	while ((o = getopt_long(argc, argv, "t:D:W:Rdjlo:v::h", opts, NULL)) != -1) {
		switch (o) {
		case 't': {
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || errno || v <= 0 || v > 0x3fffffff)	/* PID_MAX_LIMIT */
				return criu_fail(&c->j, EINVAL, "-t %s: not a pid", optarg);
			c->j.pid = v;
			break;
		}
		case 'D': c->dir = optarg; break;
		case 'W': c->work = optarg; break;
		case 'R': c->j.flags &= ~CKPT_KILL; break;
		case 'd': c->j.flags |= CKPT_DETACH; break;
		case 'j': c->j.flags |= CKPT_SHELL_JOB; break;
		case 'l': case O_MANAGE: case O_IGNORED: break;	/* (ckpt does so anyway) */
		case 'o': c->log = optarg; break;
		case 'v': c->j.flags |= CKPT_VERBOSE; break;
		case O_TCP: c->j.flags |= CKPT_TCP_ESTABLISHED; break;
		case O_TCPCLOSE: c->j.flags |= CKPT_TCP_CLOSE; break;
		case O_EXTUNIX: c->j.flags |= CKPT_EXTERNAL_UNIX; break;
		case O_ROOT: c->root = optarg; break;
		case O_PIDFILE: c->pidfile = optarg; break;
		case O_FREEZE: c->j.freeze_cgroup = optarg; break;
		case O_TRACK: c->j.flags |= CKPT_TRACK_MEM; break;
		case O_PREV: c->prev = optarg; break;
		case O_CGROOT:	/* [CTRL:]PATH, as ckpt's own */
			if (criu_add_cgroup_root(&c->j, NULL, optarg))
				return -c->j.err;
			break;
		case O_EXT:
			if (c->nr_ext == CRIU_MAX_LIST)
				return criu_fail(&c->j, E2BIG, "more than %d --external", CRIU_MAX_LIST);
			c->ext[c->nr_ext++] = optarg;
			break;
		case O_INHERIT:
			if (c->nr_inherit == CRIU_MAX_LIST)
				return criu_fail(&c->j, E2BIG, "more than %d --inherit-fd", CRIU_MAX_LIST);
			c->inherit[c->nr_inherit++] = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return criu_fail(&c->j, EINVAL, "bad option (see criu --help)");
		}
	}
	if (optind != argc)
		return criu_fail(&c->j, EINVAL, "unexpected argument '%s'", argv[optind]);
	if (!c->dir)
		return criu_fail(&c->j, EINVAL, "-D DIR: the images directory is needed");
	for (int i = 0; i < c->nr_ext; i++)
		if (external(c, c->ext[i]))
			return -c->j.err;
	for (int i = 0; i < c->nr_inherit; i++)
		if (c->dump ? criu_fail(&c->j, EINVAL, "--inherit-fd is for restore") : inherit(c, c->inherit[i]))
			return -c->j.err;
	if (c->root && !c->dump)
		return criu_add_external(&c->j, "/", c->root);
	return 0;
}

/* The images directory, and the log relative to the work directory
 * (which is the images directory unless -W), as CRIU's. */
static int open_dirs(struct cli *c)
{
	int work;

	c->j.images_dir = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->j.images_dir < 0)
		return criu_fail(&c->j, errno, "-D %s: %s", c->dir, strerror(errno));
	if (!c->log || !strcmp(c->log, "-"))
		return 0;
	work = c->work ? open(c->work, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(c->j.images_dir);
	if (work < 0)
		return criu_fail(&c->j, errno, "-W %s: %s", c->work, strerror(errno));
	c->j.logfd = openat(work, c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	close(work);
	if (c->j.logfd < 0) {
		c->j.logfd = 2;
		return criu_fail(&c->j, errno, "-o %s: %s", c->log, strerror(errno));
	}
	return 0;
}

static int write_pidfile(struct cli *c, pid_t pid)
{
	FILE *f;
	bool ok;

	if (!c->pidfile)
		return 0;
	f = fopen(c->pidfile, "we");
	ok = f && fprintf(f, "%d", pid) >= 0;
	if (f && fclose(f))
		ok = false;
	if (!ok)
		return criu_fail(&c->j, errno ? errno : EIO, "--pidfile %s: %s", c->pidfile,
				 strerror(errno ? errno : EIO));
	return 0;
}

/* Without -d, CRIU stays the restored tree's parent and exits with its
 * status: so does ckpt restart. */
static int wait_restored(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int run(struct cli *c, int argc, char **argv)
{
	pid_t pid;
	int ret = parse(c, argc, argv);

	if (ret > 0)
		return 0;
	if (!ret)
		ret = open_dirs(c);
	if (!ret && c->prev)
		ret = c->dump ? criu_set_parent(&c->j, c->prev) :
				criu_fail(&c->j, EINVAL, "--prev-images-dir is for dump");
	if (!ret && c->dump)
		return criu_dump(&c->j) ? 1 : 0;
	if (ret)
		return ret;
	pid = criu_restore(&c->j);
	if (pid < 0)
		return 1;
	if (write_pidfile(c, pid)) {
		criu_kill_tree(pid);	/* as CRIU: not restored, then */
		return 1;
	}
	return c->j.flags & CKPT_DETACH ? 0 : wait_restored(pid);
}

/* @pre: a pre-dump, the tree left running, its memory tracked */
static int job(int argc, char **argv, bool dump, bool pre)
{
	struct cli *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		perror("criu");
		return 1;
	}
	c->dump = dump;
	c->j.images_dir = -1;
	c->j.logfd = 2;
	c->j.flags = pre ? CKPT_TRACK_MEM : dump ? CKPT_KILL : 0;
	ret = run(c, argc, argv);
	if (c->j.err) {
		fprintf(stderr, "criu (ckpt): %s failed: %s\n", dump ? "dump" : "restore", c->j.msg);
		if (c->j.logfd != 2)
			dprintf(c->j.logfd, "ckpt: %s failed: %s\n", dump ? "dump" : "restore", c->j.msg);
		ret = ret > 0 ? ret : 1;
	}
	if (c->j.images_dir >= 0)
		close(c->j.images_dir);
	if (c->j.logfd != 2)
		close(c->j.logfd);
	free(c);
	return ret;
}

int criu_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "dump"))
		return job(argc - 1, argv + 1, true, false);
	if (!strcmp(cmd, "pre-dump"))
		return job(argc - 1, argv + 1, true, true);
	if (!strcmp(cmd, "restore"))
		return job(argc - 1, argv + 1, false, false);
	if (!strcmp(cmd, "swrk"))
		return criu_swrk(argc - 1, argv + 1);
	if (!strcmp(cmd, "check")) {
		/* (nothing of the kernel to probe beforehand: ckpt checks
		 * what a tree needs when it checkpoints it) */
		puts("Looks good (ckpt " CKPT_VERSION_STRING ").");
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("Version: %d.%d\nckpt %s\n", CRIU_DROPIN_MAJOR, CRIU_DROPIN_MINOR, CKPT_VERSION_STRING);
		return 0;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	fputs(usage, stderr);
	return 2;
}
