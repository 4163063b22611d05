/* cuda.h - CUDA processes: the driver's own checkpoint around ckpt's. */
#ifndef CKPT_CUDA_H
#define CKPT_CUDA_H

#include <stdbool.h>
#include <sys/stat.h>

#include "../kinds.h"

/* A CUDA device file: /dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm... */
bool cuda_device_path(const char *path);

/* Why a process still has a CUDA device open at @fd (for the refusal of
 * fdtable.c): one line. */
const char *cuda_why_not(struct cpt_ctx *c, pid_t pid);

#endif
