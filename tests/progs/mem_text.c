/* mem_text - a large memory of text (compressible, as most programs'
 * heaps are) with a random area in the middle (not), both intact after
 * restart, in areas of their own.  MEM_TEXT_MIB sets the text's size
 * (default 32).  Its .flags
 * runs the state test with --compress; tests/cases/compress.sh compares
 * its image sizes. */
#include "tp.h"

#include <stdint.h>
#include <sys/mman.h>

#define MiB (1024UL * 1024)
#define RAND_SIZE (4 * MiB)

static uint64_t sum(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

int main(int argc, char **argv)
{
	const char *env = getenv("MEM_TEXT_MIB");
	size_t len = (env ? strtoul(env, NULL, 10) : 32) * MiB, off = 0;
	unsigned char *text, *rnd;
	uint64_t want_text, want_rnd, x = 88172645463325252ULL;
	unsigned line = 0;

	tp_init(argc, argv);
	/* text, a PROT_NONE page, the random area: two areas, two records */
	text = mmap(NULL, len + 4096 + RAND_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED || mprotect(text + len, 4096, PROT_NONE))
		return 2;
	rnd = text + len + 4096;
	while (off + 80 < len)
		off += sprintf((char *)text + off, "%08u: checkpoint %u of a process writes its pages, %u\n",
			       line, line % 97, line * 7 % 1000), line++;
	for (size_t i = 0; i < RAND_SIZE; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(rnd + i, &x, 8);
	}
	want_text = sum(text, len);
	want_rnd = sum(rnd, RAND_SIZE);
	tp_ready();
	tp_wait_go();
	tp_check(sum(text, len) == want_text, "text changed");
	tp_check(sum(rnd, RAND_SIZE) == want_rnd, "random area changed");
	return tp_done();
}
