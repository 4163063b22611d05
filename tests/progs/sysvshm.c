/* sysvshm.c - SysV shared memory shared by a parent and its child: a
 * keyed segment (the child's attach read-only), an IPC_PRIVATE one the
 * child has partly unmapped (two areas of it, one mprotect'ed read-only),
 * one marked IPC_RMID while both have it attached, and an SHM_EXEC attach.  After the restart every byte is there, a
 * write by one is seen by the other, IPC_STAT shows the same ids, sizes,
 * modes and attach counts, and the marked one goes with its last detach.
 *
 * It holds a flock on $TP_TMPDIR/lock, for a test to make its restart
 * fail late.  The segments it leaves if it dies are listed in $TP_TMPDIR/shm_ids for
 * the runner to remove; it removes them (and the list) itself at the end.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include "tp.h"

#define KEY	0x636b7353	/* "ckpS" */
#define A_SIZE	(3 * 4096 + 100)	/* not whole pages */
#define B_SIZE	(16 * 4096)
#define C_SIZE	8192
#define A_MARK	12300		/* in A's last, partial page */
#define B_CHILD	100		/* the child's verdict: 1 ok, 2 not */
#define B_DONE	101		/* the child saw the parent's write to A */
#define B_READY	102

static int ida, idb, idc;
static char ids_path[512];

static int wait_byte(volatile char *p, int ms)
{
	struct timespec ts = { 0, 1000 * 1000 };

	for (int i = 0; i < ms && !*p; i++)
		nanosleep(&ts, NULL);
	return *p;
}

static int pattern(int seg, size_t off)
{
	return (int)((off * 7 + seg * 13) & 0xff) | 1;
}

static int check_fill(const char *p, int seg, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if ((unsigned char)p[i] != pattern(seg, i) &&
		    !(seg == 'B' && i >= B_CHILD && i <= B_READY) &&
		    !(seg == 'A' && i == A_MARK)) {
			tp_fail("segment %c: byte %zu is %d, not %d", seg, i,
				(unsigned char)p[i], pattern(seg, i));
			return 0;
		}
	return 1;
}

/* The perms column of the area at @p in /proc/self/maps. */
static void perms_of(const void *p, char perms[5])
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/maps", "r");

	strcpy(perms, "?");
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)p);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			sscanf(strchr(line, ' ') + 1, "%4s", perms);
	if (f)
		fclose(f);
}

static void child(char *a_rw, char *b, char *c)
{
	char *a = shmat(ida, NULL, SHM_RDONLY), perms[5];
	int ok;

	if (a == (void *)-1 || shmdt(a_rw))
		_exit(3);
	/* two areas of B: the one at B's start and the one past the hole */
	if (munmap(b + 4 * 4096, 4096) ||
	    mprotect(b + 5 * 4096, B_SIZE - 5 * 4096, PROT_READ))
		_exit(3);
	b[B_READY] = 1;
	tp_wait_go();
	ok = check_fill(a, 'A', 0, A_SIZE) && check_fill(b, 'B', 0, 4 * 4096) &&
	     check_fill(b, 'B', 5 * 4096, B_SIZE) && check_fill(c, 'C', 0, C_SIZE);
	perms_of(a, perms);
	if (strcmp(perms, "r--s")) {
		tp_fail("child: read-only attach of A is %s", perms);
		ok = 0;
	}
	/* made read-only, but attached writable: it can be made so again */
	perms_of(b + 5 * 4096, perms);
	if (strcmp(perms, "r--s") ||
	    mprotect(b + 5 * 4096, B_SIZE - 5 * 4096, PROT_READ | PROT_WRITE)) {
		tp_fail("child: B past the hole is %s, or cannot be made writable", perms);
		ok = 0;
	}
	b[B_CHILD] = ok ? 1 : 2;
	if (!wait_byte(a + A_MARK, 10000))
		tp_fail("child: the parent's write to A never showed");
	b[B_DONE] = 1;
	_exit(tp_failures ? 1 : 0);
}

static void *attach(int id)
{
	void *p = shmat(id, NULL, 0);

	if (p == (void *)-1) {
		perror("shmat");
		exit(2);
	}
	return p;
}

static void check_stat(int id, int seg, size_t size, unsigned mode,
		       unsigned long nattch, int key)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds)) {
		tp_fail("segment %c: IPC_STAT of id %d: %s", seg, id, strerror(errno));
		return;
	}
	tp_check(ds.shm_segsz == size, "segment %c: %zu bytes, not %zu", seg,
		 (size_t)ds.shm_segsz, size);
	tp_check((ds.shm_perm.mode & 01777) == mode, "segment %c: mode 0%o, not 0%o",
		 seg, ds.shm_perm.mode & 01777, mode);
	tp_check(ds.shm_nattch == nattch, "segment %c: %lu attaches, not %lu", seg,
		 (unsigned long)ds.shm_nattch, nattch);
	tp_check(ds.shm_perm.__key == key, "segment %c: key 0x%x, not 0x%x", seg,
		 ds.shm_perm.__key, key);
}

static void setup(char **a, char **b, char **c)
{
	const char *dir = getenv("TP_TMPDIR");
	int old = shmget(KEY, 0, 0), lk;
	FILE *f;

	if (old >= 0)
		shmctl(old, IPC_RMID, NULL);	/* left by a run that died */
	ida = shmget(KEY, A_SIZE, IPC_CREAT | IPC_EXCL | 0640);
	idb = shmget(IPC_PRIVATE, B_SIZE, 0600);
	idc = shmget(IPC_PRIVATE, C_SIZE, 0604);
	if (ida < 0 || idb < 0 || idc < 0) {
		perror("shmget");
		exit(2);
	}
	snprintf(ids_path, sizeof(ids_path), "%s/shm_ids", dir ? dir : "/tmp");
	f = fopen(ids_path, "w");
	if (f) {
		fprintf(f, "%d %d\n", ida, idb);
		fclose(f);
	}
	/* a lock another process can hold, to fail a restart after the
	 * segments are made (tests/run.sh sysvshm_recreated) */
	snprintf(ids_path, sizeof(ids_path), "%s/lock", dir ? dir : "/tmp");
	lk = open(ids_path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (lk < 0 || flock(lk, LOCK_EX)) {
		perror("lock");
		exit(2);
	}
	snprintf(ids_path, sizeof(ids_path), "%s/shm_ids", dir ? dir : "/tmp");
	*a = attach(ida);
	*b = attach(idb);
	*c = attach(idc);
	for (size_t i = 0; i < A_SIZE; i++)
		(*a)[i] = pattern('A', i);
	for (size_t i = 0; i < C_SIZE; i++)
		(*c)[i] = pattern('C', i);
	for (size_t i = 0; i < B_SIZE; i++)
		(*b)[i] = pattern('B', i);
	for (int i = B_CHILD; i <= B_READY; i++)
		(*b)[i] = 0;
	(*a)[A_MARK] = 0;
}

int main(int argc, char **argv)
{
	char *a, *b, *c, *ax, perms[5];
	pid_t pid;
	int st;

	tp_init(argc, argv);
	setup(&a, &b, &c);
	/* a third attach of A, executable */
	ax = shmat(ida, NULL, SHM_RDONLY | SHM_EXEC);
	if (ax == (void *)-1)
		return 2;
	pid = fork();
	if (pid == 0)
		child(a, b, c);
	if (!wait_byte(b + B_READY, 10000) || shmctl(idc, IPC_RMID, NULL))
		return 2;
	tp_ready();
	tp_wait_go();
	check_fill(a, 'A', 0, A_SIZE);
	check_fill(b, 'B', 0, B_SIZE);
	check_fill(c, 'C', 0, C_SIZE);
	tp_check(shmget(KEY, 0, 0) == ida, "key 0x%x is no longer id %d", KEY, ida);
	tp_check(wait_byte(b + B_CHILD, 10000) == 1,
		 "the child's write to B never showed, or its checks failed");
	perms_of(ax, perms);
	tp_check(!strcmp(perms, "r-xs"), "the SHM_EXEC attach of A is %s", perms);
	tp_check(ax[A_MARK - 1] == (char)pattern('A', A_MARK - 1), "A's third attach lost its data");
	/* the parent's two, the child's inherited SHM_EXEC one, its own */
	check_stat(ida, 'A', A_SIZE, 0640, 4, KEY);
	check_stat(idb, 'B', B_SIZE, 0600, 3, IPC_PRIVATE);
	check_stat(idc, 'C', C_SIZE, 0604 | SHM_DEST, 2, IPC_PRIVATE);
	a[A_MARK] = 'P';
	tp_check(wait_byte(b + B_DONE, 10000), "the child never saw the write to A");
	tp_check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child failed (status 0x%x)", st);
	shmdt(c);
	tp_check(shmctl(idc, IPC_STAT, &(struct shmid_ds){ 0 }) < 0,
		 "segment C, marked for deletion, outlived its last attach");
	shmctl(ida, IPC_RMID, NULL);
	shmctl(idb, IPC_RMID, NULL);
	unlink(ids_path);
	return tp_done();
}
