/* clone_share.c - children cloned with CLONE_FILES and with CLONE_FS
 * (not threads) still share the fd table, or the working directory,
 * with their parent after restart: what the child changes, the parent
 * sees. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tp.h"

static volatile int *shared;
static char subdir[4096];

static int files_child(void *arg)
{
	(void)arg;
	tp_wait_go();
	shared[0] = open("/dev/null", O_RDONLY);	/* into the shared table */
	return 0;
}

static int fs_child(void *arg)
{
	(void)arg;
	tp_wait_go();
	return chdir(subdir) ? 1 : 0;	/* the parent's cwd too */
}

int main(int argc, char **argv)
{
	char cwd[4096];
	pid_t f, s;
	int st;

	tp_init(argc, argv);
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	shared[0] = -1;
	snprintf(subdir, sizeof(subdir), "%s/cs-%d", getenv("TP_TMPDIR") ?: "/tmp", getpid());
	mkdir(subdir, 0755);
	f = clone(files_child, (char *)malloc(65536) + 65536, CLONE_FILES | SIGCHLD, NULL);
	s = clone(fs_child, (char *)malloc(65536) + 65536, CLONE_FS | SIGCHLD, NULL);
	tp_ready();
	tp_wait_go();
	tp_check(waitpid(f, &st, 0) == f && WIFEXITED(st) && !WEXITSTATUS(st), "files child");
	tp_check(waitpid(s, &st, 0) == s && WIFEXITED(st) && !WEXITSTATUS(st), "fs child");
	tp_check(shared[0] >= 0 && fcntl(shared[0], F_GETFD) >= 0,
		 "fd %d the CLONE_FILES child opened is not in our table", shared[0]);
	tp_check(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, subdir),
		 "the CLONE_FS child's chdir did not move us (%s)", cwd);
	rmdir(subdir);
	return tp_done();
}
