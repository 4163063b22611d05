/* rpc.h - CRIU's RPC messages (generated from rpc.proto by protoc-c) and
 * a request's options as a drop-in job (rpc.c). */
#ifndef CKPT_CRIU_RPC_H
#define CKPT_CRIU_RPC_H

#include <stdbool.h>
#include <sys/types.h>

#include "rpc.pb-c.h"

struct criu_job;

/* @o, a DUMP (@dump) or RESTORE request's options from pid @peer, into
 * @j: 0, or a negative errno with the job failed (naming the option). */
int rpc_job(struct criu_job *j, const CriuOpts *o, pid_t peer, bool dump);
/* The same but for the directories and the log (no file is opened). */
int rpc_map(struct criu_job *j, const CriuOpts *o, pid_t peer, bool dump);

#endif
