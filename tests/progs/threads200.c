/* threads200.c - threads.c with 200 threads. */
#define NTHREADS 200
#include "threads.c"
