/* exec32.c - can this kernel run 32-bit programs at all?
 *
 * A kernel built without IA32 emulation, booted with ia32_emulation=0,
 * or running in a VM whose hypervisor has no 32-bit mode refuses every
 * i386 ELF with ENOEXEC.  Restoring a 32-bit process there would get
 * as far as its registers and then fail with the tree half built, or
 * leave a process that dies at its first instruction; so restart asks
 * the kernel first, the only way that tells: it executes the smallest
 * i386 program there is (exit(0) by int $0x80) from a memfd, in a child.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"

#define PROBE_BASE	0x08048000u	/* the i386 ABI's usual load address */

struct probe_elf {
	Elf32_Ehdr eh;
	Elf32_Phdr ph;
	uint8_t code[9];
} __attribute__((packed));

/* mov $1,%eax (exit); xor %ebx,%ebx (status 0); int $0x80 */
static const uint8_t probe_code[9] = { 0xb8, 0x01, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80 };

static void probe_image(struct probe_elf *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->eh.e_ident, ELFMAG, SELFMAG);
	p->eh.e_ident[EI_CLASS] = ELFCLASS32;
	p->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	p->eh.e_ident[EI_VERSION] = EV_CURRENT;
	p->eh.e_type = ET_EXEC;
	p->eh.e_machine = EM_386;
	p->eh.e_version = EV_CURRENT;
	p->eh.e_entry = PROBE_BASE + offsetof(struct probe_elf, code);
	p->eh.e_phoff = offsetof(struct probe_elf, ph);
	p->eh.e_ehsize = sizeof(p->eh);
	p->eh.e_phentsize = sizeof(p->ph);
	p->eh.e_phnum = 1;
	p->ph.p_type = PT_LOAD;
	p->ph.p_vaddr = p->ph.p_paddr = PROBE_BASE;
	p->ph.p_filesz = p->ph.p_memsz = sizeof(*p);
	p->ph.p_flags = PF_R | PF_X;
	p->ph.p_align = 0x1000;
	memcpy(p->code, probe_code, sizeof(probe_code));
}

/* 0: it ran and exited 0.  > 0: the errno of its execve, or EFAULT for a
 * probe that was started but did not exit 0 (*sig the signal, if one
 * killed it).  < 0: we could not ask (no memfd, exec from one refused). */
static int run_probe(int *sig)
{
	char *argv[] = { "ckpt-exec32-probe", NULL }, *envp[] = { NULL };
	struct probe_elf elf;
	int fd, p[2], err = 0, st;
	pid_t pid;

	*sig = 0;
	probe_image(&elf);
	fd = memfd_create("ckpt-exec32-probe", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, &elf, sizeof(elf)) != (ssize_t)sizeof(elf) || pipe2(p, O_CLOEXEC)) {
		err = errno ? errno : EIO;
		close(fd);
		return -err;
	}
	pid = fork();
	if (pid == 0) {
		/* the pipe closes on a successful exec; else it says why */
		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		err = errno;
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(126);
		_exit(127);
	}
	err = pid < 0 ? errno : 0;
	close(p[1]);
	close(fd);
	if (pid > 0) {
		if (read(p[0], &err, sizeof(err)) != sizeof(err))
			err = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!err && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			*sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
			err = EFAULT;
		}
	}
	close(p[0]);
	/* a memfd this system will not execute (vm.memfd_noexec) says
	 * nothing about 32-bit code */
	if (pid < 0 || err == EACCES || err == EPERM)
		return -(err ? err : EAGAIN);
	return err;
}

int ia32_exec_check(struct rst_ctx *c, pid_t pid)
{
	int err, sig;

#ifdef CKPT_TEST_HOOKS
	/* the test build only: stand in for a kernel that refuses i386
	 * ELFs, which no test machine may be (tests/README.md) */
	if (getenv("CKPT_TEST_NO_IA32")) {
		err = ENOEXEC;
		sig = 0;
	} else
#endif
		err = run_probe(&sig);
	if (err < 0) {
		log_info(c->log, "could not ask the kernel whether it runs 32-bit programs: %s",
			 strerror(-err));
		return 0;
	}
	if (!err)
		return 0;
	if (sig)
		return log_err(c->log, ENOEXEC,
			       "pid %d is a 32-bit process, and this kernel cannot run 32-bit programs (an i386 ELF was killed by signal %d)",
			       pid, sig);
	if (err == EFAULT)
		return log_err(c->log, ENOEXEC,
			       "pid %d is a 32-bit process, and this kernel cannot run 32-bit programs (an i386 ELF did not exit 0)",
			       pid);
	return log_err(c->log, err,
		       "pid %d is a 32-bit process, and this kernel cannot run 32-bit programs (execve of an i386 ELF: %s)",
		       pid, strerror(err));
}
