/* netlock.h - the network lock of TCP connections being saved (inet.c). */
#ifndef CKPT_NETLOCK_H
#define CKPT_NETLOCK_H

#include <stdbool.h>

#include "../image_format.h"

/* The SO_MARK of what ckpt sends through a lock (CRIU's SOCCR_MARK). */
#define NETLOCK_MARK		0xc114
#define NETLOCK_MARK_STR	"0xc114"

/* Drop what comes in for @ri's connection and what it sends (two
 * iptables/ip6tables rules in chain CKPT-LOCK, made with the jumps from
 * INPUT and OUTPUT unless @chain_ready).
 * 0, or -errno / a positive exit status of iptables, and *why says what
 * failed. */
int netlock_add(const struct rec_inet *ri, bool chain_ready, char *why,
		size_t n);
/* Remove those rules.  0: removed; 1: there was none; else as above. */
int netlock_del(const struct rec_inet *ri, char *why, size_t n);
/* Let @ri's incoming packets that carry NETLOCK_MARK pass its lock (@on:
 * a rule before it), or no longer (@on false: that rule removed).  As
 * netlock_add (no chain: exit status 1). */
int netlock_pass_marked(const struct rec_inet *ri, bool on, char *why, size_t n);

#endif
