/* tty.h - what the tty kind's halves share (tty.c says what it saves):
 * the device numbers of terminals, the checkpoint's state, and the
 * operations each half gives the tables in tty.c. */
#ifndef CKPT_FILES_TTY_H
#define CKPT_FILES_TTY_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "../files.h"

#define SPEED_BITS	0x100fu		/* CBAUD | CBAUDEX */
#define CIBAUD_BITS	0x100f0000u

static inline bool is_master(dev_t rdev)
{
	return major(rdev) == 5 && minor(rdev) == 2;
}

static inline bool is_pts(dev_t rdev)
{
	return major(rdev) >= 136 && major(rdev) <= 143;
}

static inline uint32_t pts_index(dev_t rdev)
{
	return ((major(rdev) - 136) << 20) | minor(rdev);
}

static inline bool is_terminal(dev_t rdev)
{
	unsigned int ma = major(rdev);

	return ma == 4 || ma == 5 || is_pts(rdev);
}

struct cpt_pty {
	uint32_t index;		/* /dev/pts/N */
	pid_t pid;		/* a process of the tree with the master */
	int fd;
	uint32_t id;		/* its TTY record, once written */
};

/* The checkpoint's: every pty master the tree holds, once scanned, and
 * the job's terminal. */
struct tty_cpt {
	struct cpt_pty *ptys;
	int nr_ptys;
	size_t cap_ptys;
	bool scanned;
	uint32_t job_tty;	/* the job's terminal's TTY record, once written */
	struct cpt_ctty { dev_t dev; uint32_t id; } *cttys;	/* TTY_CTTY_PATH */
	int nr_cttys;
	size_t cap_cttys;
};

/* tty_dump.c */
bool tty_match(struct cpt_ctx *c, const struct fd_probe *p);
int tty_dump(struct cpt_ctx *c, const struct fd_probe *p,
	     struct rec_file *f, void **extra, uint32_t *extra_len);
void tty_dump_free(struct cpt_ctx *c, void *state);

/* tty_restore.c */
int ttyk_load(struct rst_ctx *c, struct rst_task *t, struct rec *r);
int ttyk_check(struct rst_ctx *c, struct rst_task *t);
int ttyk_session_made(struct rst_ctx *c, struct rst_task *t);
int ttyk_restore(struct rst_ctx *c, struct rst_task *t);
int ttyk_built(struct rst_ctx *c);
void ttyk_free_ctx(void *state);
int tty_file_load(struct rst_ctx *c, struct rst_file *f);
int tty_file_check(struct rst_ctx *c, const struct rst_file *f);
int tty_file_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		  long *fd);

#endif
