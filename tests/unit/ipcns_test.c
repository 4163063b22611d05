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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* A checkpoint of the namespace the test is in, into @fd: 0, or -1 with
 * the message in log->msg. */
static int try_save(int fd, struct ckpt_log *log)
{
	struct cpt_task t = { .pid = getpid() }, *tasks[1] = { &t };
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR };
	struct cpt_ctx c = { .log = log, .tasks = tasks, .nr_tasks = 1,
			     .ns_own = 1u << NS_IPC };
	int ret = iw_init(&c.w, fd, log) || kind_dump_init(&c) ||
		  iw_record(&c.w, REC_HEAD, &h, sizeof(h)) || kind_ipcns.dump(&c, &t) ||
		  kind_ipcns.dump_check(&c);

	iw_free(&c.w);
	kind_dump_free(&c);
	return ret ? -1 : 0;
}

/* What checkpoint refuses, in one line naming the namespace and the
 * object, leaving the namespace as it was: @setup makes the case (after
 * the snapshot: reading a POSIX queue would fire its notification), @undo
 * takes it away again. */
struct case_arg {
	int mq, shmid;
	pid_t child;
	void *p;	/* the test's attach */
};

static void refused(const char *why, const char *want, void (*setup)(struct case_arg *),
		    void (*undo)(struct case_arg *))
{
	struct ckpt_log log = { .fd = -1 };
	struct case_arg a = { -1, -1, 0, (void *)-1 }, *arg = &a;
	int fd = memfd_create("refused", 0);
	char *before = snap(), *after;

	setup(arg);
	CHECK(try_save(fd, &log) && strstr(log.msg, want) && !strncmp(log.msg, "pid ", 4),
	      "%s: \"%s\", not %s", why, log.msg, want);
	undo(arg);
	after = snap();
	CHECK(!strcmp(before, after), "%s: the namespace changed:\n%s---\n%s", why, before, after);
	free(before);
	free(after);
	close(fd);
}

/* a child of the test registers, and waits for its pipe to close */
static void notify_on(struct case_arg *arg)
{
	int ready[2], hold[2];
	char x;

	CHECK(pipe(ready) == 0 && pipe(hold) == 0, "pipes");
	arg->child = fork();
	if (arg->child == 0) {
		struct sigevent ev = { .sigev_notify = SIGEV_NONE };
		mqd_t mq = mq_open("/ckq", O_RDONLY);

		close(hold[1]);
		x = mq >= 0 && mq_notify(mq, &ev) == 0;
		if (write(ready[1], &x, 1) == 1)
			while (read(hold[0], &x, 1) > 0)
				;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	CHECK(read(ready[0], &x, 1) == 1 && x == 1, "the child's mq_notify");
	close(ready[0]);
	arg->mq = hold[1];
}

static void notify_off(struct case_arg *arg)
{
	close(arg->mq);
	waitpid(arg->child, NULL, 0);
}

/* the test process itself (the tree's root) has the queue open */
static void mqfd_on(struct case_arg *arg)
{
	arg->mq = mq_open("/ckq", O_RDONLY);
	CHECK(arg->mq >= 0, "mq_open");
}

static void mqfd_off(struct case_arg *arg)
{
	close(arg->mq);
}

/* the test's attach of the one segment */
static void *attach_one(void)
{
	int *ids, n;
	void *p = (void *)-1;

	CHECK(sysvipc_ids("shm", &ids, &n) == 0 && n == 1, "the segment");
	if (n == 1)
		p = shmat(ids[0], NULL, SHM_RDONLY);
	CHECK(p != (void *)-1, "shmat");
	free(ids);
	return p;
}

static void attach_on(struct case_arg *arg)
{
	arg->p = attach_one();
}

static void attach_off(struct case_arg *arg)
{
	if (arg->p != (void *)-1)
		shmdt(arg->p);
}

/* kernel.shm_rmid_forced and a new segment no one attaches (the other,
 * attached meanwhile, would go with it set) */
static void forced_on(struct case_arg *arg)
{
	arg->p = attach_one();
	put("kernel/shm_rmid_forced", "1");
	arg->shmid = shmget(IPC_PRIVATE, 4096, 0600);
	CHECK(arg->shmid >= 0, "a new segment");
}

static void forced_off(struct case_arg *arg)
{
	shmctl(arg->shmid, IPC_RMID, NULL);
	put("kernel/shm_rmid_forced", "0");
	attach_off(arg);
}

static void test_refusals(void)
{
	refused("a queue with a notification", "ipc namespace ipc:[",
		notify_on, notify_off);
	refused("a queue with a notification", "is notified of its messages (mq_notify)",
		notify_on, notify_off);
	refused("a queue open in the tree", "is POSIX message queue /ckq, not supported",
		mqfd_on, mqfd_off);
	refused("a segment attached outside the tree", "ipc namespace ipc:[", attach_on, attach_off);
	refused("a segment attached outside the tree", "attached only by processes outside the tree",
		attach_on, attach_off);
	refused("an unattached segment with shm_rmid_forced", "shm_rmid_forced is 1",
		forced_on, forced_off);
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

/* ---- forged records: every field validated on load ---- */

struct forge {
	struct rst_ctx c;
	struct rst_task *t;
	struct ckpt_log log;
	uint64_t index;
};

static void forge_init(struct forge *f, bool own)
{
	memset(f, 0, sizeof(*f));
	f->log.fd = -1;
	f->t = calloc(1, sizeof(*f->t));
	f->t->pid = 1;
	f->c.log = &f->log;
	f->c.ns_own = own ? 1u << NS_IPC : 0;
	f->c.tasks = calloc(1, sizeof(*f->c.tasks));
	f->c.tasks[0] = f->t;
	f->c.nr_tasks = 1;
}

/* The record loaded: 0, or the message's text and -1. */
static int feed(struct forge *f, uint32_t type, const void *p, size_t n)
{
	struct rec r = { .type = type, .data = malloc(n + 1), .data_len = n,
			 .len = n, .index = f->index++ };
	int ret;

	memcpy(r.data, p, n);
	f->log.msg[0] = 0;
	f->log.err = 0;
	ret = kind_ipcns.load(&f->c, f->t, &r);
	free(r.data);
	return ret ? -1 : 0;
}

static struct rec_ipc_ns good_ns(void)
{
	return (struct rec_ipc_ns){
		.shmmax = 1 << 30, .shmall = 1 << 20, .shmmni = 4096, .msgmax = 8192,
		.msgmnb = 16384, .msgmni = 32000, .sem = { 32000, 1024000000, 500, 32000 },
		.shm_next_id = -1, .msg_next_id = -1, .sem_next_id = -1,
		.mq_queues_max = 256, .mq_msg_max = 10, .mq_msg_default = 10,
		.mq_msgsize_max = 8192, .mq_msgsize_default = 8192,
	};
}

/* A context with IPC_NS loaded, the forged record @type fed: refused
 * with @want in its message (NULL: accepted); then check() if @check. */
static void forged(const char *name, uint32_t type, const void *p, size_t n,
		   const char *want)
{
	struct rec_ipc_ns ns = good_ns();
	struct forge f;
	int ret;

	forge_init(&f, true);
	if (type != REC_IPC_NS || !want || strcmp(want, "twice") == 0)
		CHECK(feed(&f, REC_IPC_NS, &ns, sizeof(ns)) == 0, "%s: IPC_NS: %s", name, f.log.msg);
	ret = type ? feed(&f, type, p, n) : 0;
	if (!ret)
		ret = kind_ipcns.check(&f.c, f.t) ? -1 : 0;
	if (want)
		CHECK(ret && strstr(f.log.msg, want), "forged %s: \"%s\", not %s", name,
		      f.log.msg, want);
	else
		CHECK(!ret, "forged %s refused: %s", name, f.log.msg);
	rst_ctx_free(&f.c);
}

/* Several records in a row; the last refused with @want (NULL: all
 * accepted and checked). */
static void forged_seq(const char *name, const char *want, int n, ...)
{
	struct rec_ipc_ns ns = good_ns();
	struct forge f;
	va_list ap;
	int ret;

	forge_init(&f, true);
	ret = feed(&f, REC_IPC_NS, &ns, sizeof(ns));
	va_start(ap, n);
	for (int i = 0; i < n && !ret; i++) {
		uint32_t type = va_arg(ap, uint32_t);
		const void *p = va_arg(ap, const void *);
		size_t len = va_arg(ap, size_t);

		ret = feed(&f, type, p, len);
	}
	va_end(ap);
	if (!ret)
		ret = kind_ipcns.check(&f.c, f.t) ? -1 : 0;
	if (want)
		CHECK(ret && strstr(f.log.msg, want), "forged %s: \"%s\", not %s", name,
		      f.log.msg, want);
	else
		CHECK(!ret, "forged %s refused: %s", name, f.log.msg);
	rst_ctx_free(&f.c);
}

#define NSCASE(name, field, val, want) do { \
	struct rec_ipc_ns x = good_ns(); \
	x.field = (val); \
	forged(name, REC_IPC_NS, &x, sizeof(x), want); \
} while (0)

static void test_forged_ns(void)
{
	struct rec_ipc_ns ns = good_ns();
	struct forge f;

	forged("control: IPC_NS", 0, NULL, 0, NULL);
	NSCASE("IPC_NS reserved 1", reserved, 1, "reserved");
	NSCASE("IPC_NS shmmni -1", shmmni, -1, "shmmni");
	NSCASE("IPC_NS msgmni 2^24+1", msgmni, (1 << 24) + 1, "msgmni");
	NSCASE("IPC_NS semmni -1", sem[3], -1, "semmni");
	NSCASE("IPC_NS shm_rmid_forced 2", shm_rmid_forced, 2, "shm_rmid_forced");
	NSCASE("IPC_NS msgmax -1", msgmax, -1, "msgmax");
	NSCASE("IPC_NS semopm -1", sem[2], -1, "sem");
	NSCASE("IPC_NS msg_next_id -2", msg_next_id, -2, "next id");
	NSCASE("IPC_NS mq msg_max 0", mq_msg_max, 0, "fs.mqueue");
	NSCASE("IPC_NS mq msg_default 65537", mq_msg_default, 65537, "fs.mqueue");
	NSCASE("IPC_NS mq msgsize_max 127", mq_msgsize_max, 127, "fs.mqueue");
	NSCASE("IPC_NS mq msgsize_default 2^24+1", mq_msgsize_default, (16 << 20) + 1, "fs.mqueue");
	NSCASE("IPC_NS mq queues_max -1", mq_queues_max, -1, "fs.mqueue");
	forged("IPC_NS twice", REC_IPC_NS, &ns, sizeof(ns), "twice");
	forged("IPC_NS 87 bytes", REC_IPC_NS, &ns, sizeof(ns) - 1, "bad length");
	/* not the root's own namespace, or before IPC_NS */
	forge_init(&f, false);
	CHECK(feed(&f, REC_IPC_NS, &ns, sizeof(ns)) && strstr(f.log.msg, "not of the root's own"),
	      "IPC_NS of a tree without its own ipc namespace: %s", f.log.msg);
	rst_ctx_free(&f.c);
	forge_init(&f, true);
	CHECK(feed(&f, REC_IPC_SEM, &ns, sizeof(ns)) && strstr(f.log.msg, "before IPC_NS"),
	      "IPC_SEM before IPC_NS: %s", f.log.msg);
	f.log.msg[0] = 0;
	f.log.err = 0;
	CHECK(kind_ipcns.check(&f.c, f.t) && strstr(f.log.msg, "no IPC_NS"),
	      "own ipc namespace without IPC_NS: %s", f.log.msg);
	rst_ctx_free(&f.c);
}

#define R(type, x) (uint32_t)(type), (const void *)&(x), sizeof(x)
#define RN(type, x, n) (uint32_t)(type), (const void *)&(x), (size_t)(n)

static void test_forged_msq(void)
{
	struct rec_ipc_msq q = { .id = 5, .key = 9, .mode = 0600, .nr_msgs = 2, .cbytes = 3,
				 .qbytes = 100 };
	struct rec_ipc_msq q0 = { .id = 6, .key = 0, .mode = 0600 }, x;
	struct { struct rec_ipc_msg h; char t[8]; } m1 = { { 1, 1, 0 }, "a" },
		m2 = { { 2, 2, 0 }, "bc" }, bad;

	forged_seq("control: IPC_MSQ, 2 IPC_MSG", NULL, 3, R(REC_IPC_MSQ, q),
		   RN(REC_IPC_MSG, m1, 17), RN(REC_IPC_MSG, m2, 18));
	forged_seq("control: two private IPC_MSQ", NULL, 2, R(REC_IPC_MSQ, q0),
		   (uint32_t)REC_IPC_MSQ, (const void *)&(struct rec_ipc_msq){ .id = 7 },
		   sizeof(q0));
	x = q, x.id = -1;
	forged("IPC_MSQ id -1", REC_IPC_MSQ, &x, sizeof(x), "bad id");
	x = q, x.mode = 01600;
	forged("IPC_MSQ mode 01600", REC_IPC_MSQ, &x, sizeof(x), "bad mode");
	x = q, x.qbytes = 1ULL << 63;
	forged("IPC_MSQ qbytes 2^63", REC_IPC_MSQ, &x, sizeof(x), "bad sizes");
	x = q0, x.cbytes = 1;
	forged("IPC_MSQ no messages, 1 byte", REC_IPC_MSQ, &x, sizeof(x), "bad sizes");
	forged("IPC_MSQ 79 bytes", REC_IPC_MSQ, &q0, sizeof(q0) - 1, "bad length");
	forged_seq("IPC_MSQ id twice", "id saved twice", 2, R(REC_IPC_MSQ, q0), R(REC_IPC_MSQ, q0));
	x = q0, x.id = 8, x.key = 9;
	forged_seq("IPC_MSQ key twice", "key saved twice", 3, R(REC_IPC_MSQ, x),
		   (uint32_t)REC_IPC_MSQ, (const void *)&(struct rec_ipc_msq){ .id = 1, .key = 9 },
		   sizeof(x), R(REC_IPC_MSQ, q0));
	forged_seq("IPC_MSQ messages missing (check)", "messages are missing", 2,
		   R(REC_IPC_MSQ, q), RN(REC_IPC_MSG, m1, 17));
	forged_seq("IPC_MSQ messages missing (next record)", "messages are missing", 3,
		   R(REC_IPC_MSQ, q), RN(REC_IPC_MSG, m1, 17), R(REC_IPC_MSQ, q0));
	forged_seq("IPC_MSG without IPC_MSQ", "does not follow", 1, RN(REC_IPC_MSG, m1, 17));
	forged_seq("IPC_MSG one too many", "does not follow", 4, R(REC_IPC_MSQ, q),
		   RN(REC_IPC_MSG, m1, 17), RN(REC_IPC_MSG, m2, 18), RN(REC_IPC_MSG, m1, 17));
	forged_seq("IPC_MSG len 2, 1 byte", "bad length", 2, R(REC_IPC_MSQ, q),
		   RN(REC_IPC_MSG, m2, 17));
	forged_seq("IPC_MSG 15 bytes", "bad length", 2, R(REC_IPC_MSQ, q), RN(REC_IPC_MSG, m1, 15));
	bad = m1, bad.h.mtype = 0;
	forged_seq("IPC_MSG mtype 0", "bad type", 2, R(REC_IPC_MSQ, q), RN(REC_IPC_MSG, bad, 17));
	bad = m1, bad.h.reserved = 1;
	forged_seq("IPC_MSG reserved 1", "bad type", 2, R(REC_IPC_MSQ, q), RN(REC_IPC_MSG, bad, 17));
	forged_seq("IPC_MSG bytes past cbytes", "do not add up", 3, R(REC_IPC_MSQ, q),
		   RN(REC_IPC_MSG, m2, 18), RN(REC_IPC_MSG, m2, 18));
	forged_seq("IPC_MSG bytes short of cbytes", "do not add up", 3, R(REC_IPC_MSQ, q),
		   RN(REC_IPC_MSG, m1, 17), RN(REC_IPC_MSG, m1, 17));
}

static void test_forged_sem_mq(void)
{
	struct { struct rec_ipc_sem s; uint16_t v[2]; } s = {	/* 52 bytes */
		{ .id = 1, .key = 3, .mode = 0600, .nsems = 2 }, { 1, 32767 } }, x;
	struct rec_ipc_mq q = { .name = "q", .mode = 0600, .maxmsg = 2, .msgsize = 4, .nr_msgs = 1 }, y;
	struct { struct rec_ipc_mq_msg h; char d[8]; } m = { { 3, 4 }, "abcd" }, bm;

	forged("control: IPC_SEM", REC_IPC_SEM, &s, 52, NULL);
	x = s, x.s.nsems = 0;
	forged("IPC_SEM nsems 0", REC_IPC_SEM, &x, sizeof(x.s), "nsems");
	x = s, x.s.nsems = 3;
	forged("IPC_SEM nsems 3, 2 values", REC_IPC_SEM, &x, 52, "nsems");
	forged("IPC_SEM odd length", REC_IPC_SEM, &s, 51, "nsems");
	forged("IPC_SEM 47 bytes", REC_IPC_SEM, &s, 47, "nsems");
	x = s, x.v[1] = 32768;
	forged("IPC_SEM value 32768", REC_IPC_SEM, &x, 52, "above 32767");
	x = s, x.s.id = -5;
	forged("IPC_SEM id -5", REC_IPC_SEM, &x, 52, "bad id");
	x = s, x.s.mode = 0100000;
	forged("IPC_SEM mode", REC_IPC_SEM, &x, 52, "bad mode");
	forged_seq("IPC_SEM id twice", "id saved twice", 2, RN(REC_IPC_SEM, s, 52), RN(REC_IPC_SEM, s, 52));

	forged_seq("control: IPC_MQ, IPC_MQ_MSG", NULL, 2, R(REC_IPC_MQ, q), RN(REC_IPC_MQ_MSG, m, 12));
	y = q, memset(y.name, 'a', sizeof(y.name));
	forged("IPC_MQ name unterminated", REC_IPC_MQ, &y, sizeof(y), "bad name");
	y = q, strcpy(y.name, "a/b");
	forged("IPC_MQ name a/b", REC_IPC_MQ, &y, sizeof(y), "bad name");
	y = q, strcpy(y.name, "..");
	forged("IPC_MQ name ..", REC_IPC_MQ, &y, sizeof(y), "bad name");
	y = q, y.name[0] = 0;
	forged("IPC_MQ name empty", REC_IPC_MQ, &y, sizeof(y), "bad name");
	y = q, y.mode = 01777;
	forged("IPC_MQ mode 01777", REC_IPC_MQ, &y, sizeof(y), "bad mode");
	y = q, y.maxmsg = 0;
	forged("IPC_MQ maxmsg 0", REC_IPC_MQ, &y, sizeof(y), "bad sizes");
	y = q, y.msgsize = (16 << 20) + 1;
	forged("IPC_MQ msgsize 2^24+1", REC_IPC_MQ, &y, sizeof(y), "bad sizes");
	y = q, y.nr_msgs = 3;
	forged("IPC_MQ 3 messages of 2", REC_IPC_MQ, &y, sizeof(y), "bad sizes");
	forged("IPC_MQ 287 bytes", REC_IPC_MQ, &q, sizeof(q) - 1, "bad length");
	y = q, y.nr_msgs = 0;
	forged_seq("IPC_MQ twice", "saved twice", 2, R(REC_IPC_MQ, y), R(REC_IPC_MQ, y));
	forged_seq("IPC_MQ messages missing", "messages are missing", 1, R(REC_IPC_MQ, q));
	forged_seq("IPC_MQ_MSG without IPC_MQ", "does not follow", 1, RN(REC_IPC_MQ_MSG, m, 12));
	bm = m, bm.h.prio = 32768;
	forged_seq("IPC_MQ_MSG prio 32768", "bad priority", 2, R(REC_IPC_MQ, q),
		   RN(REC_IPC_MQ_MSG, bm, 12));
	bm = m, bm.h.len = 5;
	forged_seq("IPC_MQ_MSG 5 bytes of 4", "longer than", 2, R(REC_IPC_MQ, q),
		   RN(REC_IPC_MQ_MSG, bm, 13));
	forged_seq("IPC_MQ_MSG len 4, 3 bytes", "bad length", 2, R(REC_IPC_MQ, q),
		   RN(REC_IPC_MQ_MSG, m, 11));
	forged_seq("IPC_MQ_MSG 7 bytes", "bad length", 2, R(REC_IPC_MQ, q), RN(REC_IPC_MQ_MSG, m, 7));
}

int main(void)
{
	struct ckpt_log log = { .fd = 2 };
	int fd = memfd_create("img", 0);
	char *before, *after, *restored;

	test_forged_ns();
	test_forged_msq();
	test_forged_sem_mq();
	if (unshare(CLONE_NEWIPC)) {
		printf("unit SKIP ipcns_test: unshare(CLONE_NEWIPC): %s\n", strerror(errno));
		return failures != 0;
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
	test_refusals();
	free(before);
	free(after);
	free(restored);
	close(fd);
	printf("unit ipcns_test: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
