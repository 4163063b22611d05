/* timing.h - the -v breakdown of where a checkpoint's or a restart's
 * time went (the phases: enum log_phase, log.h). */
#ifndef CKPT_TIMING_H
#define CKPT_TIMING_H

#include "log.h"

/* Log (with -v only) the time since l->times.start, split by phase and
 * by kind; @what: "checkpoint" or "restart". */
void timing_report(struct ckpt_log *l, const char *what);

#endif
