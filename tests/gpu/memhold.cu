/* memhold.cu - a CUDA process holding device memory, for tests/gpu/run.sh.
 *
 * usage: memhold MIB DIR [hold|spin|fork|managed]
 * It fills MIB MiB of device memory with a pattern no fresh process has,
 * prints "READY <pid>" on stdout and waits, making no CUDA call, until
 * DIR/go exists; then checks every element on the device and again on
 * the host, runs a new kernel over them and checks that too, and prints
 * "PASS <elements>" (exit 0) or "FAIL: ..." (exit 1).
 *   spin: a kernel spinning for 8 s is in flight when it says READY
 *         (the CUDA driver cannot lock it meanwhile);
 *   fork: it forks a child that holds its device files and makes no
 *         CUDA call; READY names the child, which exits at DIR/go;
 *   managed: the memory is managed (cudaMallocManaged), 64 MiB.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	printf("FAIL: %s: %s\n", #x, cudaGetErrorString(e_)); fflush(stdout); exit(1); } } while (0)

__host__ __device__ static unsigned int pattern(size_t i, unsigned int seed)
{
	unsigned long long x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (unsigned int)(x ^ (x >> 29));
}

__global__ void fill(unsigned int *d, size_t n, unsigned int seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		d[i] = pattern(i, seed);
}

__global__ void check(const unsigned int *d, size_t n, unsigned int seed,
		      unsigned long long *bad)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		if (d[i] != pattern(i, seed))
			atomicAdd(bad, 1ULL);
}

__global__ void step(unsigned int *d, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		d[i] = d[i] * 3u + 1u;
}

__global__ void spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

static void wait_go(const char *dir)
{
	char path[4096];
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	snprintf(path, sizeof(path), "%s/go", dir);
	while (access(path, F_OK))
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "hold";
	size_t mib = argc > 2 ? strtoull(argv[1], NULL, 10) : 0;
	bool managed = !strcmp(mode, "managed");
	unsigned int seed = 0x5eed0000u ^ (unsigned int)mib;
	unsigned long long *bad, nbad = 0;
	unsigned int *d, *h;
	size_t n;
	pid_t child = 0;

	if (argc < 3 || !mib) {
		fprintf(stderr, "usage: memhold MIB DIR [hold|spin|fork|managed]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (managed)
		mib = 64;
	n = mib * (1 << 20) / sizeof(unsigned int);
	if (managed)
		CK(cudaMallocManaged(&d, n * sizeof(*d)));
	else
		CK(cudaMalloc(&d, n * sizeof(*d)));
	CK(cudaMalloc(&bad, sizeof(*bad)));
	fill<<<1024, 256>>>(d, n, seed);
	CK(cudaDeviceSynchronize());
	if (!strcmp(mode, "fork")) {
		child = fork();
		if (child == 0) {	/* holds the device files, no CUDA call */
			wait_go(argv[2]);
			_exit(0);
		}
		printf("READY %d\n", child);
	} else if (!strcmp(mode, "spin")) {
		spin<<<1, 1>>>(8ULL * 1000 * 1000 * 1000);
		printf("READY %d\n", getpid());
		CK(cudaDeviceSynchronize());
	} else {
		printf("READY %d\n", getpid());
	}
	wait_go(argv[2]);
	if (child > 0)
		waitpid(child, NULL, 0);

	/* on the device */
	CK(cudaMemset(bad, 0, sizeof(*bad)));
	check<<<1024, 256>>>(d, n, seed, bad);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&nbad, bad, sizeof(nbad), cudaMemcpyDeviceToHost));
	if (nbad) {
		printf("FAIL: %llu of %zu elements differ on the device\n", nbad, n);
		return 1;
	}
	/* on the host, element by element */
	h = (unsigned int *)malloc(n * sizeof(*h));
	if (!h) {
		printf("FAIL: malloc\n");
		return 1;
	}
	CK(cudaMemcpy(h, d, n * sizeof(*h), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		if (h[i] != pattern(i, seed)) {
			printf("FAIL: element %zu is %#x, not %#x\n", i, h[i], pattern(i, seed));
			return 1;
		}
	/* a new kernel over them */
	step<<<1024, 256>>>(d, n);
	CK(cudaMemcpy(h, d, n * sizeof(*h), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		if (h[i] != pattern(i, seed) * 3u + 1u) {
			printf("FAIL: after a new kernel, element %zu is %#x\n", i, h[i]);
			return 1;
		}
	printf("PASS %zu\n", n);
	return 0;
}
