/* page.h - the machine's page size, the unit of the memory kinds
 * (pagemap entries, PAGES runs, areas) and of the alignment of page data
 * in an image.  4 KiB on x86-64 and s390x, a constant there; a ppc64le
 * kernel may have 64 KiB pages (Debian's has), so it is asked there.  An
 * image counts in its HEAD's page_size, which restart requires to be the
 * machine's (head.c). */
#ifndef CKPT_PAGE_H
#define CKPT_PAGE_H

#include <stdint.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__) || defined(__s390x__)
#define PAGE		4096ULL
#else
#define PAGE		((uint64_t)getpagesize())
#endif
#define PAGE_MIN	4096ULL		/* no machine's is smaller */

#endif
