/* fakecuda.c - a libcuda.so.1 from before r570: the driver's basic
 * calls, and no cuCheckpointProcess* API.  tests/gpu/run.sh puts it
 * first in ckpt's LD_LIBRARY_PATH to see that ckpt refuses then. */
int cuInit(unsigned int flags)
{
	return 0;
}

int cuDriverGetVersion(int *v)
{
	*v = 12040;
	return 0;
}

int cuGetErrorName(int r, const char **s)
{
	*s = "CUDA_ERROR_UNKNOWN";
	return 0;
}

int cuGetErrorString(int r, const char **s)
{
	*s = "unknown error";
	return 0;
}
