/* image_format_mm.h - the records of an address space: its areas,
 * their pages, AIO rings, guard pages, incremental chains.
 * Included by image_format.h, which has the records' framing and the
 * pinned sizes: include that, not this. */
#ifndef CKPT_IMAGE_FORMAT_MM_H
#define CKPT_IMAGE_FORMAT_MM_H

#include <stdint.h>

struct rec_mm {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint32_t auxv_len;	/* bytes of auxv that follow */
	uint32_t exe_len;	/* bytes of exe path (with NUL) after auxv */
	/* uint8_t auxv[auxv_len]; char exe[exe_len]; */
};

enum vma_kind {
	VMA_ANON	= 1,	/* private or shared anonymous */
	VMA_FILE	= 2,	/* file-backed */
	VMA_VDSO	= 3,
	VMA_VVAR	= 4,	/* [vvar] and [vvar_vclock] */
	VMA_NONAME	= 5,	/* a memfd or deleted file: the FILE_OBJ shm_id */
	VMA_SYSV	= 6,	/* a SysV shm attach: the SYSV_SHM shm_id, pgoff
				 * bytes into it */
	VMA_PACKET	= 20,	/* a packet socket's rings mapped: shm_id is
				 * the FILE (FILE_PACKET) whose rings it maps
				 * whole; no pages (the number FILE_PACKET's) */
};

/* vma.madv bits: what madvise()/mlock() state the area carries */
#define VMA_MADV_DONTFORK	0x01
#define VMA_MADV_WIPEONFORK	0x02
#define VMA_MADV_DONTDUMP	0x04
#define VMA_MADV_HUGEPAGE	0x08
#define VMA_MADV_NOHUGEPAGE	0x10
#define VMA_MADV_MERGEABLE	0x20
#define VMA_MLOCKED		0x40
#define VMA_SEALED		0x80
#define VMA_MAYWRITE		0x100	/* shared file area may become writable */
#define VMA_NORESERVE		0x200	/* mapped MAP_NORESERVE */
#define VMA_MADV_SEQUENTIAL	0x400
#define VMA_MADV_RANDOM		0x800
#define VMA_DROPPABLE		0x1000	/* MAP_DROPPABLE: no pages saved */
#define VMA_MADV_ALL		0x1fff

struct rec_vma {
	uint64_t start, end;
	uint64_t pgoff;		/* bytes into the file */
	uint32_t prot;		/* PROT_* */
	uint32_t flags;		/* MAP_PRIVATE/MAP_SHARED/MAP_GROWSDOWN */
	uint32_t kind;		/* enum vma_kind */
	uint32_t madv;		/* VMA_MADV_* */
	uint64_t file_size;	/* file identity, checked at restart */
	int64_t  file_mtime_ns;
	uint32_t path_len;	/* bytes of path (with NUL) that follow */
	uint32_t shm_id;	/* shared anonymous: its memory object (objref),
				 * the same in every process that maps it;
				 * VMA_NONAME: the FILE_OBJ it maps;
				 * VMA_SYSV: the SYSV_SHM it attaches */
};

struct rec_pages_run {
	uint64_t addr;
	uint64_t npages;
};

struct rec_pages {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t pad_len;	/* zero bytes between runs and data */
	/* struct rec_pages_run runs[nr_runs]; uint8_t pad[pad_len];
	 * uint8_t data[npages * page_size], starting page-aligned in the
	 * stream. */
};

/* Pages of a child's private area still copy-on-write shared with its
 * parent's same area: their content is the parent's page at the same
 * address (from the parent's PAGES or, in turn, PAGES_REF). */
struct rec_pages_ref {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t reserved;
	/* struct rec_pages_run runs[nr_runs]; */
};

/* An AIO context (io_setup) of the last TASK: its ring, a "/[aio]"
 * mapping with no VMA record of its own, made again by io_setup, brought
 * to where ring->tail was by as many no-op requests, given its saved
 * events and head, and moved (mremap) to @addr, which is the context's
 * id.  Requests still in flight are not seen (only the kernel knows
 * them): only completed events are kept. */
struct rec_aio {
	uint64_t addr;		/* the ring's address: the aio_context_t */
	uint64_t len;		/* the ring mapping's bytes */
	uint32_t nr;		/* ring->nr: events the ring holds */
	uint32_t head, tail;	/* ring->head, ring->tail, both < nr */
	uint32_t data_len;	/* bytes that follow: the ring past its
				 * 32-byte header, len - 32 */
};

/* The guard pages (madvise MADV_GUARD_INSTALL) of the last VMA: installed
 * again once its pages are in.  A guard page is no page: never read. */
struct rec_vma_guards {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t reserved;
	/* struct rec_pages_run runs[nr_runs]; */
};

/* REC_PARENT: this image is incremental (HEAD flag CKPT_PARENT): the
 * pages its PAGES_PARENT records name are in the image at @path_len
 * bytes of path (with NUL) that follow, relative to this image's
 * directory unless absolute, which is the image whose TAIL, size and
 * HEAD time are these. */
struct rec_parent {
	uint64_t size;		/* the parent's bytes */
	uint64_t nr_records;	/* its TAIL's */
	uint64_t time_ns;	/* its HEAD's */
	uint32_t chain;		/* its TAIL's */
	uint32_t path_len;
};

/* REC_MM_TRACK: the last TASK's private areas are write-protected
 * (userfaultfd, UFFD_FEATURE_WP_ASYNC) since this image's pages were
 * read, by the userfaultfd at @fd of the task whose inode is @ino: the
 * next incremental checkpoint finds it there and saves only the pages
 * written since. */
struct rec_mm_track {
	uint32_t fd;
	uint32_t reserved;
	uint64_t ino;
};

/* REC_PAGES_AT: made by restart (chain.c) as it assembles a chain, in
 * the image it reads then, never in a file: a struct rec_pages_ref head
 * (vma_start, npages, nr_runs, reserved 0), then nr_runs of these, in
 * address order: the pages at @addr are @npages pages at @off of the
 * chain's parent image @file (1: the parent, 2: its parent...). */
struct rec_pages_at {
	uint64_t addr;
	uint64_t npages;
	uint64_t off;
	uint32_t file;
	uint32_t reserved;
};

#endif
