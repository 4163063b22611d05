/* compat.c - 32-bit processes (IA32 emulation): IA32 and IA32_THREAD.
 *
 * A 32-bit process differs from a 64-bit one in few places the kernel
 * keeps apart: its vdso (ARCH_MAP_VDSO_32, mm.c), sigactions set by a
 * 32-bit caller (marked so the kernel builds 32-bit signal frames), the
 * robust list a 32-bit caller registers, and its TLS descriptors in the
 * GDT (set_thread_area).  Registers come in the 64-bit layout from ptrace
 * whatever the task runs (cs tells), and are validated like the seed's:
 * user code and data selectors or TLS entries only (regs.c).  Remote
 * calls run in 64-bit mode; the few that must come from a 32-bit caller
 * go through an int $0x80 (remote_call32).
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"

#ifndef PTRACE_GET_THREAD_AREA
#define PTRACE_GET_THREAD_AREA	25
#define PTRACE_SET_THREAD_AREA	26
#endif
#define ARCH_MAP_VDSO_32	0x2002
#define TLS_FIRST	12	/* GDT_ENTRY_TLS_MIN */
#define TLS_N		3
#define ROBUST_LEN32	12	/* struct compat_robust_list_head */
#define TLS_FLAGS	0x7f	/* every user_desc bit but lm */
#define TLS_32BIT	0x01
#define TLS_CONTENTS	0x06
#define TLS_NOT_PRESENT	0x20
#define TLS_EMPTY	0x28	/* read_exec_only | seg_not_present */

struct ia32_state {
	bool ia32;
};

/* The whole image's: this kernel's 32-bit vdso layout, once known. */
struct ia32_ctx {
	bool have_vdso;
	struct vma_list vdso;
};

struct ia32_thread_state {
	bool have;
	struct rec_ia32_thread th;
};

bool cpt_ia32(const struct cpt_task *t)
{
	return t->rm.regs.cs == IA32_CS;
}

bool task_ia32(struct rst_task *t)
{
	struct ia32_state *s = KSTATE(t, kind_ia32);

	return s && s->ia32;
}

bool ia32_selector_ok(uint64_t sel)
{
	if (sel == 0 || sel == IA32_CS || sel == USER_DS_SEL || sel == USER64_CS)
		return true;
	return (sel & 7) == 3 && (sel >> 3) >= TLS_FIRST &&
	       (sel >> 3) < TLS_FIRST + TLS_N;
}

/* ELFCLASS32 or ELFCLASS64: what the process exec'd. */
static int exe_class(pid_t pid)
{
	unsigned char h[EI_NIDENT] = { 0 };
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read(fd, h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		h[EI_CLASS] = ELFCLASSNONE;
	close(fd);
	return h[EI_CLASS];
}

static const char *mode_name(uint64_t cs)
{
	return cs == IA32_CS ? "32-bit" : cs == USER64_CS ? "64-bit" : "other";
}

/* Every thread runs the kind of code its program is: one that far-jumped
 * to the other mode is not something we restore. */
static int ia32_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_ia32 r = { .abi = IA32_ABI_I386 };
	int class = exe_class(t->pid);
	bool ia32 = cpt_ia32(t);

	if (class < 0)
		return log_err(c->log, -class, "pid %d: reading its executable:", t->pid);
	for (int i = 0; i < t->nr_threads; i++) {
		uint64_t cs = t->threads[i].rm->regs.cs;

		if (cs != (ia32 ? IA32_CS : USER64_CS) ||
		    (class == ELFCLASS32) != ia32)
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: tid %d runs %s code in a %s program (cs 0x%llx): not supported",
				       t->pid, t->threads[i].tid, mode_name(cs),
				       class == ELFCLASS32 ? "32-bit" : "64-bit",
				       (unsigned long long)cs);
	}
	if (!ia32)
		return 0;
	if (!t->rm.sc32_ip)
		return log_err(c->log, ENOEXEC, "pid %d: no int $0x80 in its vdso", t->pid);
	return iw_record(&c->w, REC_IA32, &r, sizeof(r));
}

static int ia32_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *th)
{
	struct rec_ia32_thread r;
	uint32_t robust[2];
	int ret;

	if (!cpt_ia32(t))
		return 0;
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < TLS_N; i++) {
		struct user_desc d = { 0 };

		if (ptrace(PTRACE_GET_THREAD_AREA, th->tid, TLS_FIRST + i, &d))
			return log_err(c->log, errno, "tid %d: TLS entry %d:", th->tid,
				       TLS_FIRST + i);
		memcpy(&r.tls[i], &d, sizeof(r.tls[i]));
	}
	ret = rcheck32(th->rm, NULL, "get_robust_list (32-bit)", NR32_get_robust_list,
		       0, t->scratch, t->scratch + 4, 0);
	if (!ret)
		ret = remote_read(th->rm, t->scratch, robust, sizeof(robust));
	if (ret)
		return ret;
	r.robust_list = robust[0];
	r.robust_len = robust[1];
	return iw_record(&c->w, REC_IA32_THREAD, &r, sizeof(r));
}

static bool tls_ok(const struct rec_tls_desc *d, uint32_t entry)
{
	if (d->entry != entry || d->flags & ~TLS_FLAGS || d->limit > 0xfffff)
		return false;
	if (!d->base && !d->limit && (d->flags == TLS_EMPTY || !d->flags))
		return true;	/* an empty entry */
	/* what the kernel's own set_thread_area accepts: present 32-bit
	 * data segments (the kernel makes them DPL 3) */
	return (d->flags & TLS_32BIT) && !(d->flags & TLS_NOT_PRESENT) &&
	       ((d->flags & TLS_CONTENTS) >> 1) <= 1;
}

static int ia32_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	if (r->type == REC_IA32) {
		const struct rec_ia32 *a = r->data;
		struct ia32_state *s = kind_state(t, &kind_ia32, sizeof(*s));

		if (!s)
			return log_err(c->log, ENOMEM, "ia32 state:");
		if (r->data_len != sizeof(*a) || a->abi != IA32_ABI_I386 ||
		    a->reserved || s->ia32 || t->nr_threads)
			return log_err(c->log, EBADMSG, "pid %d: bad or misplaced IA32 record",
				       t->pid);
		s->ia32 = true;
		return 0;
	}
	struct ia32_thread_state *s = kind_thread_state(t, &kind_ia32, sizeof(*s));
	const struct rec_ia32_thread *a = r->data;

	if (!s || !task_ia32(t) || r->data_len != sizeof(*a) || s->have)
		return log_err(c->log, EBADMSG, "pid %d: bad or misplaced IA32_THREAD record",
			       t->pid);
	for (int i = 0; i < TLS_N; i++)
		if (!tls_ok(&a->tls[i], TLS_FIRST + i))
			return log_err(c->log, EBADMSG,
				       "pid %d: IA32_THREAD: bad TLS descriptor %u (flags 0x%x)",
				       t->pid, a->tls[i].entry, a->tls[i].flags);
	if (a->robust_len != ROBUST_LEN32)	/* what the kernel says even with no list */
		return log_err(c->log, EBADMSG, "pid %d: IA32_THREAD: bad robust list length %u",
			       t->pid, a->robust_len);
	s->th = *a;
	s->have = true;
	return 0;
}

static int ia32_check(struct rst_ctx *c, struct rst_task *t)
{
	for (int i = 0; i < t->nr_threads; i++) {
		struct ia32_thread_state *s = KTSTATE(&t->threads[i], kind_ia32);

		if (task_ia32(t) && (!s || !s->have))
			return log_err(c->log, EBADMSG, "tid %d: image lacks IA32_THREAD",
				       t->threads[i].tid);
	}
	return 0;
}

/* The descriptors before the registers that select them (regs.c, phase
 * LAST); the robust list as a 32-bit caller, which the kernel keeps
 * apart from a 64-bit one's. */
static int ia32_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct ia32_thread_state *s = KTSTATE(th, kind_ia32);

	if (!s)
		return 0;
	for (int i = 0; i < TLS_N; i++) {
		struct user_desc d;

		memcpy(&d, &s->th.tls[i], sizeof(d));
		if (ptrace(PTRACE_SET_THREAD_AREA, th->tid, TLS_FIRST + i, &d))
			return log_err(c->log, errno, "tid %d: setting TLS entry %d:",
				       th->tid, TLS_FIRST + i);
	}
	if (!s->th.robust_list)
		return 0;
	return rcheck32(th->rm, NULL, "set_robust_list (32-bit)", NR32_set_robust_list,
			s->th.robust_list, s->th.robust_len, 0, 0);
}

int ia32_sigaction(struct rst_task *t, int sig, const struct rec_sigaction *a)
{
	/* struct sigaction of a 32-bit caller */
	uint32_t act[5] = { a->handler, a->flags, a->restorer, (uint32_t)a->mask,
			    (uint32_t)(a->mask >> 32) };
	uint64_t addr;
	int ret;

	/* (signals.c checked the addresses are 32-bit ones) */
	ret = rst_scratch_put(t, 0, act, sizeof(act), &addr);
	return ret ? ret : rcheck32(&t->rm, NULL, "rt_sigaction (32-bit)",
				    NR32_rt_sigaction, sig, addr, 0, 8);
}

/* A child of ours swaps its vdso for the 32-bit one and waits, while we
 * read its maps.  It runs no code that needs a vdso (no clock calls). */
static int vdso32_maps(struct rst_ctx *c, struct vma_list *out)
{
	struct vma_list self;
	int p[2], ret, st;
	char ok = 0;
	pid_t pid;

	ret = proc_maps(getpid(), &self);
	if (ret)
		return log_err(c->log, -ret, "reading own maps:");
	if (pipe2(p, O_CLOEXEC)) {
		vma_list_free(&self);
		return log_err(c->log, errno, "pipe:");
	}
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < self.n; i++)
			if (!strcmp(self.v[i].path, "[vdso]") ||
			    !strncmp(self.v[i].path, "[vvar", 5))
				syscall(SYS_munmap, self.v[i].start,
					self.v[i].end - self.v[i].start);
		ok = syscall(SYS_arch_prctl, ARCH_MAP_VDSO_32, 0) >= 0;	/* its size */
		if (write(p[1], &ok, 1) == 1)
			for (;;)
				syscall(SYS_pause);
		_exit(1);
	}
	vma_list_free(&self);
	close(p[1]);
	if (pid < 0 || read(p[0], &ok, 1) != 1 || !ok)
		ret = log_err(c->log, pid < 0 ? errno : ENOEXEC,
			      "this kernel cannot map a 32-bit vdso (no IA32 emulation?)");
	else if ((ret = proc_maps(pid, out)))
		ret = log_err(c->log, -ret, "reading the maps of a 32-bit vdso:");
	close(p[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	return ret;
}

int ia32_vdso_layout(struct rst_ctx *c, const struct vma_list **out)
{
	struct ia32_ctx *x = kind_ctx_state(c, &kind_ia32, sizeof(*x));
	int ret;

	if (!x)
		return log_err(c->log, ENOMEM, "ia32 state:");
	if (!x->have_vdso) {
		ret = vdso32_maps(c, &x->vdso);
		if (ret)
			return ret;
		x->have_vdso = true;
	}
	*out = &x->vdso;
	return 0;
}

static void ia32_free_ctx(void *state)
{
	struct ia32_ctx *x = state;

	if (x->have_vdso)
		vma_list_free(&x->vdso);
	free(x);
}

static void ia32_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_IA32) {
		info_u64(o, "abi", ((const struct rec_ia32 *)r->data)->abi);
		return;
	}
	const struct rec_ia32_thread *a = r->data;
	char key[16];

	for (int i = 0; i < TLS_N; i++) {
		snprintf(key, sizeof(key), "tls%u_base", a->tls[i].entry);
		info_hex(o, key, a->tls[i].base);
	}
	info_hex(o, "robust_list", a->robust_list);
}

static const struct rec_desc ia32_recs[] = {
	{ REC_IA32, "IA32", 0 },
	{ REC_IA32_THREAD, "IA32_THREAD", 0 },
	{ 0 }
};

const struct kind_ops kind_ia32 = {
	.name = "ia32",
	.recs = ia32_recs,
	.phase = PHASE_STATE,
	.dump = ia32_dump,
	.dump_thread = ia32_dump_thread,
	.load = ia32_load,
	.check = ia32_check,
	.restore_thread = ia32_restore_thread,
	.free_ctx = ia32_free_ctx,
	.show = ia32_show,
};
