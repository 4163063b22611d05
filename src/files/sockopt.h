/* sockopt.h - helpers for socket kinds of file (inet.c; any socket). */
#ifndef CKPT_SOCKOPT_H
#define CKPT_SOCKOPT_H

#include <sys/types.h>

/* Our own copy of @pid's socket @fd (pidfd_getfd): the same description.
 * The fd, or -errno. */
int sock_copy(pid_t pid, int fd);
/* getsockopt of an int: 0 and *val, or -errno. */
int sock_get_int(int sk, int level, int name, int *val);
/* setsockopt of an int: 0 or -errno. */
int sock_set_int(int sk, int level, int name, int val);
/* The socket's family (SO_DOMAIN) of @pid's @fd, -errno if none. */
int sock_family_of(pid_t pid, int fd);

#endif
