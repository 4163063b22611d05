/* mmap32 - a restored 32-bit process still gets 32-bit addresses.
 *
 * The restored process was built by a 64-bit puppet; the kernel chooses
 * where mmap() puts an area by the kind of system call (a 32-bit one
 * here), so after restart mmap, malloc and brk must still give areas
 * below 4 GiB, where /proc/self/maps shows them.
 */
#include "tp.h"

#include <stdint.h>
#include <sys/mman.h>

/* An area of /proc/self/maps starts at @p. */
static int mapped_at(void *p)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	snprintf(want, sizeof(want), "%08lx-", (unsigned long)(uintptr_t)p);
	while (f && fgets(line, sizeof(line), f))
		found |= !strncmp(line, want, strlen(want));
	if (f)
		fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	char *before, *p, *big, *brk0, *brk1;

	tp_init(argc, argv);
	before = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (before == MAP_FAILED)
		return 2;
	before[0] = 1;
	tp_ready();
	tp_wait_go();

	p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	tp_check(p != MAP_FAILED && mapped_at(p), "mmap gave %p, not in the maps", p);
	if (p != MAP_FAILED)
		memset(p, 0x5a, 16 << 20);
	big = malloc(64 << 20);
	tp_check(big != NULL, "malloc(64 MiB) failed");
	if (big)
		memset(big, 0xa5, 64 << 20);
	brk0 = sbrk(0);
	tp_check(sbrk(1 << 20) == brk0 && (brk1 = sbrk(0)) == brk0 + (1 << 20),
		 "brk did not grow from %p", brk0);
	memset(brk0, 1, 1 << 20);
	tp_check(before[0] == 1, "the area mapped before lost its data");
	return tp_done();
}
