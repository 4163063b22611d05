/* madvise.c - an area's advice (MADV_SEQUENTIAL, MADV_RANDOM, DONTFORK,
 * DONTDUMP, WIPEONFORK...) and MAP_DROPPABLE survive the restart, read
 * back from /proc/self/smaps VmFlags; a droppable area's content may be
 * dropped (ckpt saves none of it), an advised one's is kept. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "tp.h"

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/* The VmFlags line of the area at @addr. */
static int vmflags(void *addr, char *out, size_t n)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	int found = 0;

	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			found = 1;
		else if (found && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, n, "%s", line + 8);
			break;
		}
	}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

static int has(const char *flags, const char *f)
{
	char pat[8];

	snprintf(pat, sizeof(pat), " %s", f);
	return strstr(flags, pat) != NULL;
}

int main(int argc, char **argv)
{
	static const struct { int advice; const char *flag; } adv[] = {
		{ MADV_SEQUENTIAL, "sr" }, { MADV_RANDOM, "rr" },
		{ MADV_DONTFORK, "dc" }, { MADV_DONTDUMP, "dd" },
		{ MADV_WIPEONFORK, "wf" },
	};
	enum { N = sizeof(adv) / sizeof(adv[0]) };
	char *a[N], *drop, fl[512];

	tp_init(argc, argv);
	for (int i = 0; i < N; i++) {
		a[i] = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a[i] == MAP_FAILED || madvise(a[i], 2 * 4096, adv[i].advice))
			return printf("FAIL: mmap/madvise %d: %s\n", i, strerror(errno)), 1;
		snprintf(a[i], 64, "area %d", i);
	}
	drop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);
	if (drop != MAP_FAILED)
		strcpy(drop, "droppable");
	tp_ready();
	tp_wait_go();
	for (int i = 0; i < N; i++) {
		char want[64];

		snprintf(want, sizeof(want), "area %d", i);
		tp_check(!vmflags(a[i], fl, sizeof(fl)), "area %d gone", i);
		tp_check(has(fl, adv[i].flag), "area %d lost %s: %s", i, adv[i].flag, fl);
		tp_check(!strcmp(a[i], want), "area %d content: %s", i, a[i]);
	}
	if (drop != MAP_FAILED) {
		tp_check(!vmflags(drop, fl, sizeof(fl)) && has(fl, "dp"),
			 "droppable area lost dp: %s", fl);
		/* the kernel may drop it at any time: empty (restored: ckpt
		 * saves no page of it) or as written (not restored, as when
		 * ckpt is killed mid-checkpoint: tests/killpoints.sh) */
		tp_check(!drop[0] || !strcmp(drop, "droppable"),
			 "droppable area content: %.16s", drop);
	}
	return tp_done();
}
