/* ipcns_test.c - the ipcns kind (and sysvshm's part of it) on an ipc
 * namespace of the test's own: SysV message queues, semaphore sets, an
 * unattached SysV segment, a POSIX message queue and the sysctls are
 * made in one new namespace, saved into an image, checked untouched by
 * the checkpoint, then made again from the image in another new
 * namespace and compared, field by field and message by message. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kinds.h"
#include "kinds/ns.h"
#include "kinds/sysvshm.h"

#include "check.h"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static void put(const char *name, const char *val)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && write(fd, val, strlen(val)) == (ssize_t)strlen(val), "writing %s", path);
	if (fd >= 0)
		close(fd);
}

static void msg(int id, long type, const char *text)
{
	struct { long mtype; char text[64]; } m = { type, "" };

	memcpy(m.text, text, strlen(text));
	CHECK(msgsnd(id, &m, strlen(text), IPC_NOWAIT) == 0, "msgsnd");
}

/* Everything the test makes, in the namespace it is in. */
static void populate(void)
{
	struct msqid_ds ds;
	struct semid_ds sds;
	struct mq_attr a = { .mq_maxmsg = 5, .mq_msgsize = 64 };
	unsigned short vals[3] = { 5, 0, 32767 };
	int q, s, m;
	mqd_t mq;
	char *p;

	put("kernel/msgmax", "9000");
	put("fs/mqueue/msg_max", "20");
	put("kernel/sem", "250 32000 40 128");
	put("kernel/msg_next_id", "7");
	/* made by uid 1000 (its cuid), given to 1001 */
	CHECK(syscall(SYS_setresuid, -1, 1000, -1) == 0, "seteuid 1000");
	q = msgget(0x1234, IPC_CREAT | 0600);
	CHECK(syscall(SYS_setresuid, -1, 0, -1) == 0, "seteuid 0");
	CHECK(q == 7, "msgget with next id 7: %d", q);
	msg(q, 3, "first");
	msg(q, 1, "second, longer");
	msg(q, 3, "");
	msg(q, 2, "fourth");
	CHECK(msgctl(q, IPC_STAT, &ds) == 0, "msq stat");
	ds.msg_perm.uid = 1001;
	ds.msg_perm.mode = 0640;
	ds.msg_qbytes = 5000;
	CHECK(msgctl(q, IPC_SET, &ds) == 0, "msq set");
	CHECK(msgget(IPC_PRIVATE, 0604) >= 0, "an empty private queue");
	s = semget(0x4321, 3, IPC_CREAT | 0660);
	CHECK(s >= 0 && semctl(s, 0, SETALL, (union semun){ .array = vals }) == 0, "sem set");
	CHECK(semctl(s, 0, IPC_STAT, (union semun){ .buf = &sds }) == 0, "sem stat");
	sds.sem_perm.gid = 1002;
	CHECK(semctl(s, 0, IPC_SET, (union semun){ .buf = &sds }) == 0, "sem set owner");
	put("kernel/shm_next_id", "3");
	m = shmget(0x5678, 10000, IPC_CREAT | 0644);
	CHECK(m == 3, "shmget with next id 3: %d", m);
	p = shmat(m, NULL, 0);
	CHECK(p != (void *)-1, "shmat");
	if (p != (void *)-1) {
		strcpy(p + 100, "hello");
		strcpy(p + 9000, "world");
		shmdt(p);
	}
	mq = mq_open("/ckq", O_CREAT | O_WRONLY, 0620, &a);
	CHECK(mq >= 0, "mq_open");
	CHECK(mq_send(mq, "a", 1, 1) == 0 && mq_send(mq, "bb", 2, 5) == 0 &&
	      mq_send(mq, "ccc", 3, 1) == 0 && mq_send(mq, "", 0, 0) == 0, "mq_send");
	CHECK(fchown(mq, 1003, 1004) == 0, "mq chown");
	close(mq);
}

static void add(char **s, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add(char **s, size_t *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	*s = realloc(*s, *n + k + 1);
	memcpy(*s + *n, buf, k + 1);
	*n += k;
}

static void snap_msq(char **s, size_t *n, int id)
{
	struct msqid_ds ds;
	struct { long mtype; char text[64]; } m;

	CHECK(msgctl(id, IPC_STAT, &ds) == 0, "msq %d stat", id);
	add(s, n, "msq %d key %x mode %o uid %u gid %u cuid %u cgid %u qbytes %lu n %lu:", id,
	    ds.msg_perm.__key, ds.msg_perm.mode, ds.msg_perm.uid, ds.msg_perm.gid,
	    ds.msg_perm.cuid, ds.msg_perm.cgid, ds.msg_qbytes, ds.msg_qnum);
	for (unsigned long i = 0; i < ds.msg_qnum; i++) {
		ssize_t k = msgrcv(id, &m, sizeof(m.text), i, MSG_COPY | IPC_NOWAIT);

		add(s, n, " %ld:%.*s", m.mtype, (int)(k < 0 ? 0 : k), m.text);
	}
	add(s, n, "\n");
}

static void snap_sem(char **s, size_t *n, int id)
{
	struct semid_ds ds;
	unsigned short v[3];

	CHECK(semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds }) == 0 &&
	      semctl(id, 0, GETALL, (union semun){ .array = v }) == 0, "sem %d", id);
	add(s, n, "sem %d key %x mode %o uid %u gid %u cuid %u nsems %lu: %u %u %u\n", id,
	    ds.sem_perm.__key, ds.sem_perm.mode, ds.sem_perm.uid, ds.sem_perm.gid,
	    ds.sem_perm.cuid, ds.sem_nsems, v[0], v[1], v[2]);
}

static void snap_shm(char **s, size_t *n, int id)
{
	struct shmid_ds ds;
	char *p = shmat(id, NULL, SHM_RDONLY);

	CHECK(shmctl(id, IPC_STAT, &ds) == 0 && p != (void *)-1, "shm %d", id);
	add(s, n, "shm %d key %x mode %o uid %u size %zu nattch %lu: %s %s\n", id,
	    ds.shm_perm.__key, ds.shm_perm.mode, ds.shm_perm.uid, ds.shm_segsz,
	    ds.shm_nattch - 1, p + 100, p + 9000);
	shmdt(p);
}

/* The POSIX queue, read and put back (the test's own reading). */
static void snap_mq(char **s, size_t *n)
{
	mqd_t mq = mq_open("/ckq", O_RDWR | O_NONBLOCK);
	struct mq_attr a;
	struct { char d[64]; unsigned int prio; ssize_t len; } m[8];
	struct stat st;
	int k = 0;

	CHECK(mq >= 0 && mq_getattr(mq, &a) == 0 && fstat(mq, &st) == 0, "mq");
	add(s, n, "mq maxmsg %ld msgsize %ld mode %o uid %u gid %u:", a.mq_maxmsg, a.mq_msgsize,
	    st.st_mode & 0777, st.st_uid, st.st_gid);
	while (k < 8 && (m[k].len = mq_receive(mq, m[k].d, 64, &m[k].prio)) >= 0)
		k++;
	for (int i = 0; i < k; i++) {
		add(s, n, " %u:%.*s", m[i].prio, (int)m[i].len, m[i].d);
		mq_send(mq, m[i].d, m[i].len, m[i].prio);
	}
	add(s, n, "\n");
	close(mq);
}

static char *snap(void)
{
	const char *sysctls[] = { "kernel/msgmax", "kernel/sem", "fs/mqueue/msg_max",
				  "kernel/msg_next_id", "kernel/shmmni" };
	char *s = NULL, path[64], buf[96];
	size_t n = 0;
	int *ids, nr;

	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/sys/%s", sysctls[i]);
		f = fopen(path, "r");
		CHECK(f && fgets(buf, sizeof(buf), f), "%s", path);
		add(&s, &n, "%s %s", sysctls[i], buf);
		if (f)
			fclose(f);
	}
	CHECK(sysvipc_ids("msg", &ids, &nr) == 0 && nr == 2, "two queues");
	for (int i = 0; i < nr; i++)
		snap_msq(&s, &n, ids[i]);
	free(ids);
	CHECK(sysvipc_ids("sem", &ids, &nr) == 0 && nr == 1, "one set");
	for (int i = 0; i < nr; i++)
		snap_sem(&s, &n, ids[i]);
	free(ids);
	CHECK(sysvipc_ids("shm", &ids, &nr) == 0 && nr == 1, "one segment");
	for (int i = 0; i < nr; i++)
		snap_shm(&s, &n, ids[i]);
	free(ids);
	snap_mq(&s, &n);
	return s;
}

static void save(int fd, struct ckpt_log *log)
{
	struct cpt_task t = { .pid = getpid() }, *tasks[1] = { &t };
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR };
	struct cpt_ctx c = { .log = log, .tasks = tasks, .nr_tasks = 1,
			     .ns_own = 1u << NS_IPC };

	CHECK(iw_init(&c.w, fd, log) == 0 && kind_dump_init(&c) == 0, "init");
	CHECK(iw_record(&c.w, REC_HEAD, &h, sizeof(h)) == 0, "head");
	CHECK(kind_ipcns.dump(&c, &t) == 0, "dump: %s", log->msg);
	CHECK(kind_ipcns.dump_check(&c) == 0, "dump_check: %s", log->msg);
	CHECK(iw_tail(&c.w) == 0, "tail");
	iw_free(&c.w);
	kind_dump_free(&c);
}

/* The image loaded as the model would, then made in the namespace the
 * test is in now. */
static void restore(int fd, struct ckpt_log *log)
{
	struct rst_task *t = calloc(1, sizeof(*t));
	struct rst_ctx c = { .log = log, .img_fd = fd, .here = true, .ns_own = 1u << NS_IPC };
	struct img_reader r;
	struct rec rec;
	int ret, nrec = 0;

	c.tasks = calloc(1, sizeof(*c.tasks));
	c.tasks[0] = t;
	c.nr_tasks = 1;
	t->pid = 1;
	ret = ir_init(&r, fd, log);
	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		const struct kind_ops *k = kind_for_type(rec.type);

		ret = rec.type == REC_HEAD ? 0 : k ? k->load(&c, t, &rec) : -EBADMSG;
		free(rec.data);
		nrec++;
	}
	ir_free(&r);
	CHECK(ret == 0 && nrec > 10, "load: %d %s", ret, log->msg);
	CHECK(kind_ipcns.check(&c, t) == 0 && kind_sysvshm.check(&c, t) == 0, "check: %s", log->msg);
	CHECK(kind_ipcns.restore(&c, t) == 0, "restore: %s", log->msg);
	CHECK(kind_sysvshm.restore_end(&c) == 0, "restore_end: %s", log->msg);
	c.released = true;
	rst_ctx_free(&c);
}

int main(void)
{
	struct ckpt_log log = { .fd = 2 };
	int fd = memfd_create("img", 0);
	char *before, *after, *restored;

	if (unshare(CLONE_NEWIPC)) {
		printf("unit SKIP ipcns_test: unshare(CLONE_NEWIPC): %s\n", strerror(errno));
		return 0;
	}
	populate();
	before = snap();
	save(fd, &log);
	after = snap();
	CHECK(!strcmp(before, after), "the checkpoint changed the namespace:\n%s---\n%s", before, after);
	CHECK(unshare(CLONE_NEWIPC) == 0, "a second ipc namespace");
	restore(fd, &log);
	restored = snap();
	CHECK(!strcmp(before, restored), "restored:\n%s--- not as saved:\n%s", restored, before);
	if (getenv("IPCNS_TEST_SHOW"))
		printf("%s", restored);
	free(before);
	free(after);
	free(restored);
	close(fd);
	printf("unit ipcns_test: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
