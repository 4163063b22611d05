/* sockopt.h - helpers for socket kinds of file (inet.c; any socket), and
 * the generic table of socket options an image keeps (rec_sockopt
 * entries), for any family. */
#ifndef CKPT_SOCKOPT_H
#define CKPT_SOCKOPT_H

#include <stdint.h>
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

/* When restart sets an option: EARLY right after socket(), before
 * bind/connect and before the datagrams waiting are sent to it again;
 * LATE once the socket is built (a filter would drop those datagrams, a
 * device binding keep them from the loopback, IP_FREEBIND's saved value
 * must not stop the bind). */
enum sockopt_phase { SOCKOPT_EARLY, SOCKOPT_LATE };

/* Checkpoint: every option of the table the kernel answers for @sk, as
 * rec_sockopt entries appended to the malloc()ed *buf (*len bytes).
 * 0 or -errno, *what then naming the option. */
int sockopt_dump(int sk, char **buf, uint32_t *len, const char **what);
/* Restart: are these @len bytes well-formed entries, each of the table,
 * each once, each value in its bounds?  0 or -EBADMSG, *what naming the
 * bad one. */
int sockopt_check(const char *buf, uint32_t len, const char **what);
/* Restart: set on @sk the options of @phase as the entries say (those a
 * new socket has already left alone).  0 or -errno, *what naming it. */
int sockopt_restore(int sk, const char *buf, uint32_t len,
		    enum sockopt_phase phase, const char **what);
/* Is the option @level/@name among the entries, and its int value? */
int sockopt_find_int(const char *buf, uint32_t len, int level, int name,
		     int *val);

#endif
