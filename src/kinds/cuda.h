/* cuda.h - CUDA processes: the driver's own checkpoint around ckpt's. */
#ifndef CKPT_CUDA_H
#define CKPT_CUDA_H

#include <stdbool.h>
#include <sys/stat.h>

#include "../kinds.h"

/* A CUDA device file: /dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm... */
bool cuda_device_path(const char *path);

/* Checkpoint, before the tree is seized (the driver needs it running):
 * every process of the tree rooted at @root that has a CUDA device open
 * is locked, then checkpointed by the driver (its GPU state moved into
 * its memory, its device files closed).  Refused (reported, naming pid,
 * fd, device and why) if the driver cannot do it; then nothing is left
 * changed. */
int cuda_freeze(struct cpt_ctx *c, pid_t root);
/* After the tree is let go: unless @killed, each such process is put
 * back on its GPU and unlocked, running as before.  Frees what
 * cuda_freeze kept. */
int cuda_thaw(struct cpt_ctx *c, bool killed);
/* Why a process still has a CUDA device open at @fd (for the refusal of
 * fdtable.c): one line. */
const char *cuda_why_not(struct cpt_ctx *c, pid_t pid);

#endif
