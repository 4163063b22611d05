/* dataruns.h - the bytes of a file or a segment as runs that skip holes
 * (dataruns.c): FILE_DATA after a FILE_OBJ (files/fobj.c), SYSV_DATA
 * after a SYSV_SHM (kinds/sysvshm.c), one layout (struct rec_file_data)
 * and one implementation. */
#ifndef CKPT_DATARUNS_H
#define CKPT_DATARUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "kinds.h"

/* Checkpoint: the runs of a file that hold data. */
struct data_runs {
	struct rec_data_run *r;
	uint32_t n, cap;
	uint64_t bytes;
};

/* The runs of @fd's first @size bytes that hold data (a hole reads as
 * zeros anyway) into *rs (data_runs_free() it, whatever the result).
 * 0 or -errno. */
int data_runs_find(int fd, uint64_t size, struct data_runs *rs);
void data_runs_free(struct data_runs *rs);
/* Those runs of @fd as a @type record of object @id.  0 or -errno (not
 * reported). */
int data_runs_write(struct cpt_ctx *c, int fd, uint32_t type, uint32_t id,
		    const struct data_runs *rs);
/* Both at once: nothing written if @fd has no data. */
int data_runs_save(struct cpt_ctx *c, int fd, uint64_t size, uint32_t type,
		   uint32_t id);

/* Restart: where an object's bytes are in the image. */
struct rst_data_runs {
	const struct rec_data_run *runs;
	uint32_t nr_runs;
	bool have;		/* its data record is loaded */
	uint64_t off;		/* image offset of the first run's bytes */
	void *rec;		/* the record payload runs point into */
};

/* @r, a FILE_DATA or SYSV_DATA record, into *d: the bytes of the object
 * loaded last (@d NULL if none), whose id is @id and which is @size bytes
 * long; @owner is its record's name, @unit what it is ("file").  Takes
 * the payload from @r.  0, or -EBADMSG (reported). */
int data_runs_load(struct ckpt_log *log, struct rec *r, struct rst_data_runs *d,
		   uint64_t id, uint64_t size, const char *owner, const char *unit);
/* `ckpt info` of such a record. */
void data_runs_show(struct info_out *o, const struct rec *r);

#endif
