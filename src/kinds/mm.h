/* mm.h - what the mm kind keeps of an image, and what the kind's parts
 * (mm.c, mm_dump.c, mm_load.c, mm_restore.c, and the vdso's,
 * arch/x86/vdso.c) give each other. */
#ifndef CKPT_MM_H
#define CKPT_MM_H

#include "../../include/ckpt.h"
#include "../kinds.h"
#include "../pagecopy.h"

/* Pages to read from the image into an area: its own (PAGES) and those
 * it shares with its parent (PAGES_REF, found in the parent's). */
struct page_seg {
	uint64_t addr, npages;
	uint64_t off;		/* image offset of the first page */
	bool ref;		/* the parent's page (PAGES_REF) */
	uint32_t file;		/* 0: the image; k: its chain's k-th parent
				 * image (PAGES_AT, rst_ctx.chain_fd) */
};

struct rst_vma {
	struct rec_vma v;
	const char *path;
	struct page_seg *segs;	/* by address, not overlapping */
	uint32_t nr_segs;
	size_t cap_segs;
	bool have_pages, have_refs;
	uint64_t pages_len;	/* bytes over all segs */
	const struct rec_pages_run *guards;	/* its VMA_GUARDS, if any */
	uint32_t nr_guards;
};

struct mm_state {
	bool have_mm;
	struct rec_mm mm;
	const uint8_t *auxv;
	const char *exe;
	struct rst_vma *vmas;
	int nr, cap;
	void **recs;		/* record payloads the above point into */
	size_t nr_recs, cap_recs;
	const struct rec_aio **aio;	/* its AIO rings (mm_aio.c) */
	int nr_aio;
	size_t cap_aio;
	uint64_t aio_end;	/* the last ring's end: areas come after */
	bool premapped;		/* built before its children were forked */
	bool parent_rec;	/* a PARENT record came with it */
};

/* Shared anonymous memory across the tree: the first area of an object
 * is mapped fresh (the object made as large as all its areas need, with
 * offset 0 at the lowest one); every later one maps the same object,
 * which it opens through the first one's /proc/PID/map_files. */
struct shm_first {
	uint32_t id;
	pid_t pid;
	uint64_t start, end, pgoff;
	uint64_t base, size;	/* the object: the lowest offset any area
				 * maps, and how far beyond it they reach */
	bool tasks;		/* mapped by more than one process */
	bool eager;		/* --lazy: loaded whole (an area of it must be) */
	/* --lazy: its loader's (the first process's) requests' channel,
	 * ckpt's end, or -1; the object's index there (mm_lazy_shm.c) */
	int ctl;
	uint32_t obj;
};

/* A shared anonymous memory object in the image, found again by its
 * inode. */
struct cpt_shm {
	uint64_t dev, ino;
	uint64_t start;	/* the first area met, of pid */
	pid_t pid;
	uint32_t id;
	bool fobj;	/* its areas map the FILE_OBJ fobj.c saved of it */
};

/* A task's tracking userfaultfd (mm_track.c): as its parent image's
 * MM_TRACK recorded it, or as found in it now. */
struct track_prev {
	pid_t pid;
	uint32_t fd;
	uint64_t ino;
};

/* The checkpoint's incremental side (mm_track.c). */
struct mm_track {
	struct rec_parent par;	/* the parent image, for REC_PARENT */
	char *path;		/* its path as recorded */
	bool parent_written;
	struct track_prev *prev;	/* the parent image's MM_TRACKs */
	int nr_prev;
	size_t cap_prev;
	struct track_prev *hidden;	/* ckpt's userfaultfds found now */
	int nr_hidden;
	size_t cap_hidden;
	struct track_prev *made;	/* ... and made now (ino unused) */
	int nr_made;
	size_t cap_made;
};

/* The checkpoint's (mm_dump.c): every such object seen so far. */
struct mm_cpt {
	struct cpt_shm *shm;
	int nr_shm;
	size_t cap_shm;
	struct page_bufs bufs;	/* pagecopy.h: for every area */
	struct mm_track track;
};

/* PAGEMAP_SCAN (Linux 6.7; the uapi headers here are older). */
struct pm_region {
	uint64_t start, end, categories;
};

struct pm_scan {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PM_SCAN_IOCTL	_IOWR('f', 16, struct pm_scan)
#define PM_IS_WRITTEN	(1ULL << 1)
#define PM_IS_FILE	(1ULL << 2)
#define PM_IS_PRESENT	(1ULL << 3)
#define PM_IS_SWAPPED	(1ULL << 4)
#define PM_IS_PFNZERO	(1ULL << 5)
#define PM_IS_GUARD	(1ULL << 8)

#define TASK_SIZE_64	ARCH_TASK_SIZE	/* (arch.h) */

extern const struct kind_ops kind_mm;
/* The kind's sides (struct kind_ops). */
int mm_dump(struct cpt_ctx *c, struct cpt_task *t);
void mm_dump_free(struct cpt_ctx *c, void *state);
int mm_dump_check(struct cpt_ctx *c);
int mm_load(struct rst_ctx *c, struct rst_task *t, struct rec *r);
int mm_check(struct rst_ctx *c, struct rst_task *t);
int mm_restore(struct rst_ctx *c, struct rst_task *t);
int mm_fork_prepare(struct rst_ctx *c, struct rst_task *parent);
void mm_free(struct rst_task *t, void *state);
void mm_free_ctx(void *state);
/* mm_restore.c: @path opened by the puppet, its fd in *fd. */
int mm_open_file(struct rst_task *t, const char *path, int flags, long *fd);
/* mm_aio.c: AIO rings, saved instead of their areas' VMA records. */
bool mm_aio_area(const struct vma *v);
int mm_aio_dump(struct cpt_ctx *c, struct cpt_task *t, const struct vma *v);
int mm_aio_load(struct rst_ctx *c, struct mm_state *s, struct rec *r);
int mm_aio_restore(struct rst_task *t, const struct mm_state *s);
/* mm_track.c: incremental checkpoints.  begin: the parent image read
 * (dump_begin); hold: ckpt's own userfaultfd in @t found; task: whether
 * @t's pages are tracked since the parent (REC_PARENT written first);
 * reset: tracking (re)started once @t's pages are read, its MM_TRACK
 * written. */
int mm_track_begin(struct cpt_ctx *c, pid_t root);
int mm_track_hold(struct cpt_ctx *c, struct cpt_task *t);
int mm_track_task(struct cpt_ctx *c, struct cpt_task *t, bool *tracked);
int mm_track_reset(struct cpt_ctx *c, struct cpt_task *t, int pmfd);
/* A failed checkpoint takes back the trackers it made. */
void mm_track_end(struct cpt_ctx *c, bool killed);
void mm_track_free(struct mm_track *tr);
/* mm_load.c: the first area of shared anonymous object @id, NULL if
 * none. */
const struct shm_first *mm_shm_first(const struct rst_ctx *c, uint32_t id);
struct shm_first *mm_shm_first_rw(struct rst_ctx *c, uint32_t id);
/* Each object with an area @eager says yes to marked eager. */
void mm_shm_mark(struct rst_ctx *c, bool (*eager)(const struct rst_vma *v));
/* mm_lazy.c: restart --lazy.  Whether @v's pages are left to the
 * loader; the image refused if it cannot be restarted so; the loader
 * started for @t, its areas registered. */
bool mm_lazy_area(const struct rst_ctx *c, const struct rst_vma *v);
int mm_lazy_check(struct rst_ctx *c);
int mm_lazy_start(struct rst_ctx *c, struct rst_task *t, struct mm_state *s);
/* mm_lazy_shm.c: its shared anonymous memory, each object served by
 * the loader of the first process that maps it.  Whether the loader may
 * take any (c->lazy_shm), and @v; whether @v's object is another
 * process's loader's; the objects @t's loader serves (their fds in
 * *@fds, the caller's to free with them); pages of @v at [addr, addr +
 * len) pending no more; every pending page allocated (before the areas
 * are registered: a touch between the two must find the page there);
 * the loader's views mapped; the loader's channel @ctl noted for the
 * objects other processes map.  Another's object: its pages at [addr,
 * addr + len) written by restart, told to its loader; @t's areas of the
 * objects of @owner's loader, registered on @ufd, given to it. */
struct lazy_shm;
void mm_lazy_shm_check(struct rst_ctx *c);
bool mm_lazy_shm_area(const struct rst_ctx *c, const struct rst_vma *v);
bool mm_lazy_shm_foreign(const struct rst_ctx *c, const struct rst_task *t,
			 const struct rst_vma *v);
int mm_lazy_shm_gather(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		       struct lazy_shm *out, int **fds);
int mm_lazy_shm_cut(struct rst_ctx *c, const struct rst_vma *v, struct lazy_shm *out,
		    uint64_t addr, uint64_t len);
int mm_lazy_shm_alloc(struct rst_ctx *c, struct rst_task *t, struct lazy_shm *out, int *fds);
int mm_lazy_shm_views(struct rst_ctx *c, struct rst_task *t, struct lazy_shm *out, int *fds);
bool mm_lazy_shm_shared(struct rst_ctx *c, const struct lazy_shm *out);
int mm_lazy_shm_owned(struct rst_ctx *c, const struct lazy_shm *out, int ctl);
int mm_lazy_shm_tell_cut(struct rst_ctx *c, const struct rst_vma *v, uint64_t addr,
			 uint64_t len);
int mm_lazy_shm_tell_add(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
			 pid_t owner, int ufd);
void mm_lazy_shm_free(struct lazy_shm *out, int *fds);

#endif
