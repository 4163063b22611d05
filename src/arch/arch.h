/* arch.h - everything the core needs of the CPU architecture.
 *
 * Each port lives in src/arch/<arch>/ (the Makefile builds the one of
 * the compiler's target) and implements what is declared here; its own
 * types and constants come from <arch>/arch_types.h.  The core includes
 * this header and nothing under src/arch/ itself, so that a new port is
 * a folder.
 *
 * Besides these functions a port defines the kinds `regs` (registers and
 * FPU/vector state of each thread) and `ia32` (a process that runs the
 * port's 32-bit ABI; a port without one refuses such records).
 */
#ifndef CKPT_ARCH_H
#define CKPT_ARCH_H

#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__x86_64__)
#include "x86/arch_types.h"
#elif defined(__s390x__)
#include "s390x/arch_types.h"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include "ppc64le/arch_types.h"
#else
#error "ckpt has no port to this architecture (src/arch/)"
#endif

/* arch_types.h defines:
 *   arch_regs_t		the general registers as ptrace gives them
 *   ARCH_ID, ARCH_NAME	the HEAD's architecture number, and its name
 *   ARCH_RED_ZONE		bytes below the stack pointer the ABI keeps
 *   ARCH_TASK_SIZE		the top of a user address space
 *   ARCH_COMPAT_LIMIT	a 32-bit (compat) task's address space
 *   ARCH_COMPAT_REFUSED	(where defined) what a compat task is called,
 *				refused by name at checkpoint
 *   ARCH_MAP_32BIT		mmap's flag for memory a 32-bit task reaches
 *   ARCH_VDSO_MOVED	vdso_map() moves the puppet's own vdso (before
 *				the rest is unmapped), or maps one (after)
 *   struct arch_cpt_cache	what a checkpoint keeps across its tasks
 *   arch_sp(), arch_ip()	of an arch_regs_t
 */

struct ckpt_log;
struct cpt_ctx;
struct cpt_task;
struct rst_ctx;
struct rst_task;
struct remote;
struct rec_head;
struct rec_sigaction;
struct mm_state;

/* -- registers of a stopped thread: 0, or -1 with errno (as ptrace) */
int arch_get_regs(pid_t tid, arch_regs_t *r);
int arch_set_regs(pid_t tid, const arch_regs_t *r);
void arch_set_sp(arch_regs_t *r, uint64_t sp);
/* Where a guarded call's gadget returns to, the return gadget @ip,
 * where the port takes it from a register (s390x's r14, ppc64le's LR);
 * x86's is in the guard frame. */
void arch_set_ret(arch_regs_t *r, uint64_t ip);

/* -- remote system calls (remote.c) */
/* @r made to enter the system call @nr(@a) at the syscall instruction
 * @ip when resumed, in the 64-bit ABI; the stop it is in is not taken
 * for a call to restart. */
void arch_set_call(arch_regs_t *r, long nr, const long a[6], uint64_t ip);
/* A call whose arguments the port's ABI passes in memory (s390x's
 * mmap): the bytes (ARCH_CALL_MEM at most) to put below the stack into
 * @mem, and in *@arg which argument points there; 0: none. */
#define ARCH_CALL_MEM	64
size_t arch_call_mem(long nr, const long a[6], void *mem, int *arg);
/* The same through the 32-bit ABI (only where ARCH_COMPAT_LIMIT). */
void arch_set_call32(arch_regs_t *r, long nr, const long a[6], uint64_t ip);
/* At a syscall-exit stop: the result (-errno on failure). */
long arch_call_result(const arch_regs_t *r);
/* At the stop that ends the trampoline's one-stop sequence (struct
 * arch_tramp's fast_off): the call's result, kept aside from the
 * calls that follow it there. */
long arch_fast_result(const arch_regs_t *r);
/* @r made to run the trampoline's runner at @ip over the table of calls
 * from @table to @end (where the port has one: arch_tramp's batch_off). */
void arch_set_batch(arch_regs_t *r, uint64_t ip, uint64_t table, uint64_t end);
/* At its stop: where it stopped in the table (@end: all made) and the
 * result of the call there. */
void arch_batch_result(const arch_regs_t *r, uint64_t *at, long *res);
/* What seccomp sees of the call set in @r. */
void arch_call_data(const arch_regs_t *r, bool compat, struct seccomp_data *d);
/* @r made a harmless call instead: @k 0 getpid(), 1 read(-1, ...);
 * false where the port cannot make it the real one at the entry stop
 * (the call then goes in as it is). */
bool arch_stand_in(arch_regs_t *r, bool compat, int k);
/* At the entry stop of a stand-in (@now): the call made @real's. */
void arch_make_real(arch_regs_t *now, const arch_regs_t *real);

/* -- checkpoint */
/* Find a syscall instruction in the task's code (t->rm.sc_ip; and
 * sc32_ip, for 32-bit calls, where the port has them).  -ENOENT: none. */
int arch_find_syscall(struct cpt_task *t);
/* Before anything of the task is changed: every thread guarded where
 * the port can (a ckpt that dies leaves it as it was), its signals
 * blocked, those caught in delivery requeued.  *@lowest: where the main
 * thread's guard frame starts, room for scratch below it (0: none). */
int arch_guard_task(struct cpt_ctx *c, struct cpt_task *t, uint64_t *lowest);
/* A page of our code mapped into the guarded task @r, a runner of
 * tables of calls that stops on @sig, a signal it sends itself and the
 * process ignores (arch/x86/runner.c): a checkpoint's calls in one stop
 * a batch.  1: not for this task or port (nothing changed), 0, or an
 * error.  Unmapped by arch_unguard(). */
int arch_runner_map(struct remote *r, int sig);
/* @regs made to run @r's runner over the table from @table to @end. */
void arch_runner_regs(const struct remote *r, arch_regs_t *regs, uint64_t table,
		      uint64_t end);
/* Before a held thread is let go: what the guard put in it taken out. */
int arch_unguard(struct remote *rm);
void arch_cpt_cache_free(struct arch_cpt_cache *cache);

/* -- a thread's permissions for state components the kernel hands out
 * on request (x86: ARCH_GET_XCOMP_PERM, AMX) */
/* *@set false where the port has none; @scratch: 8 bytes in the task. */
int arch_xcomp_get(struct remote *rm, uint64_t scratch, uint64_t *perm, bool *set);
/* At restart, in the thread @rm of @t. */
int arch_xcomp_set(struct rst_task *t, struct remote *rm, uint64_t perm);

/* -- the HEAD record: what it says of this machine, and checks of an
 * image's against it (the architecture first, in one line). */
void arch_head_fill(struct rec_head *h);
int arch_head_check(struct ckpt_log *log, const struct rec_head *h);

/* -- restart: the puppet and its trampoline */
/* clone3() in assembly: the child runs no C and loops in pause() at
 * ckpt_puppet_syscall until ptrace takes it.  The child's pid or
 * -errno. */
long ckpt_puppet_clone(struct clone_args *args, size_t size);
extern char ckpt_puppet_syscall[];

/* The code the trampoline page starts with: a syscall instruction at
 * sc_off (at sc32_off the 32-bit one, if any; -1: none).  At fast_off
 * (-1: none) the one-stop sequence: the call, its result kept aside,
 * then tkill(gettid(), SIGSTOP), whose delivery stops the task under
 * ptrace at fast_end; a call made so costs one stop, not two.  At
 * batch_off (-1: none) the runner of a table of calls (remote_batch.c):
 * each made in turn, its result stored in its entry, up to the end of
 * the table or the first that fails, then the same SIGSTOP, stopping
 * at fast_end too. */
struct arch_tramp {
	const uint8_t *code;
	size_t len;
	uint32_t sc_off;
	int32_t sc32_off;
	int32_t fast_off;
	uint32_t fast_end;
	int32_t batch_off;
};
extern const struct arch_tramp arch_tramp;

/* -- the vdso at restart: this kernel's, where the image had it;
 * vdso_check() before any process exists */
int vdso_check(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s);
int vdso_map(struct rst_task *t, const struct mm_state *s);

/* -- 32-bit (compat) tasks; a port without them returns false */
bool cpt_ia32(const struct cpt_task *t);
bool task_ia32(struct rst_task *t);
/* Set a signal's action as a 32-bit caller (its handler gets 32-bit
 * frames). */
int ia32_sigaction(struct rst_task *t, int sig, const struct rec_sigaction *a);
/* 0 if this kernel runs 32-bit programs, else an error saying so. */
int ia32_exec_check(struct rst_ctx *c, pid_t pid);
/* The 32-bit openat (a 64-bit one adds O_LARGEFILE). */
extern const long arch_nr32_openat;

#endif
