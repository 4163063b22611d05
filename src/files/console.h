/* console.h - a terminal container's console (console.c, for tty.c). */
#ifndef CKPT_FILES_CONSOLE_H
#define CKPT_FILES_CONSOLE_H

#include "../ctx.h"

/* The master of a restored pty whose master was outside the tree, to
 * restart's caller: its console callback, or its console socket. */
int console_give(struct rst_ctx *c, int master);

#endif
