# ckpt - checkpoint/restart of running Linux processes.
#   make          build build/ckpt (release) and build/libckpt.a
#   make demo     build and run the demo
#   make test     build with ASan/UBSan and run the whole test suite
#   make test-gpu build the CUDA test programs (nvcc) and run tests/gpu/

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -pthread
SRCS    := $(wildcard src/*.c src/kinds/*.c src/files/*.c src/arch/x86/*.c)
LIBSRCS := $(filter-out src/ckpt.c src/demo.c,$(SRCS))
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

all: build/ckpt build/libckpt.a

build/ckpt: $(SRCS) $(wildcard src/*.h src/kinds/*.h src/files/*.h src/arch/x86/*.h include/*.h)
	@mkdir -p build
	$(CC) $(WARN) $(CFLAGS) -Iinclude -o $@ $(SRCS)

build/libckpt.a: $(LIBSRCS) $(wildcard src/*.h src/kinds/*.h src/files/*.h src/arch/x86/*.h include/*.h)
	@mkdir -p build/obj
	rm -f $@
	for f in $(LIBSRCS); do \
		$(CC) $(WARN) $(CFLAGS) -Iinclude -c $$f -o build/obj/$$(echo $$f | tr / _).o || exit 1; \
	done
	ar rcs $@ build/obj/*.o

# The test build: the same sources under the sanitizers, with the test
# hooks (CKPT_TEST_NO_IA32: act as a kernel that cannot run 32-bit
# programs, see tests/README.md); the release build has none.
build/test/ckpt: $(SRCS) $(wildcard src/*.h src/kinds/*.h src/files/*.h src/arch/x86/*.h include/*.h)
	@mkdir -p build/test
	$(CC) $(WARN) -O1 -g $(SAN) -DCKPT_TEST_HOOKS -Iinclude -o $@ $(SRCS)

TESTPROGS := $(patsubst tests/progs/%.c,build/test/progs/%,$(wildcard tests/progs/*.c))
build/test/progs/%: tests/progs/%.c tests/progs/tp.h
	@mkdir -p build/test/progs
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<
build/test/progs/threads200: tests/progs/threads.c

# The same state tests as 32-bit programs (gcc -m32; tests/setup.sh
# installs gcc-multilib if it is missing), but those written in x86-64
# assembly, and the 32-bit ones of tests/progs32/.
PROGS32 := $(filter-out amx regs mixed_tree,$(patsubst tests/progs/%.c,%,$(wildcard tests/progs/*.c))) \
	   $(patsubst tests/progs32/%.c,%,$(wildcard tests/progs32/*.c))
TESTPROGS32 := $(patsubst %,build/test/progs32/%,$(PROGS32))
CC32 := $(CC) -m32 -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -Itests/progs
build/test/progs32/%: tests/progs32/%.c tests/progs/tp.h | build/test/m32
	@mkdir -p build/test/progs32
	$(CC32) -o $@ $<
build/test/progs32/%: tests/progs/%.c tests/progs/tp.h | build/test/m32
	@mkdir -p build/test/progs32
	$(CC32) -o $@ $<
build/test/m32:
	bash tests/setup.sh
	@mkdir -p build/test && touch $@

AUXPROGS := build/test/aux/holder build/test/aux/tracer build/test/aux/kvserver \
	    build/test/aux/connecting \
	    build/test/aux/child32 build/test/aux/holder32 build/test/aux/strict \
	    build/test/aux/true32
build/test/aux/%: tests/aux/%.c
	@mkdir -p build/test/aux
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<

build/test/aux/child32: tests/aux/child32.c tests/aux/worker.h | build/test/m32
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/aux/holder32: tests/aux/holder.c | build/test/m32
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/aux/true32: tests/aux/true32.c | build/test/m32
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/progs/mixed_tree: tests/aux/worker.h build/test/aux/child32

UNITS := $(patsubst tests/unit/%.c,build/test/unit/%,$(wildcard tests/unit/*.c))
build/test/unit/%: tests/unit/%.c $(LIBSRCS)
	@mkdir -p build/test/unit
	$(CC) $(WARN) -O1 -g $(SAN) -Iinclude -Isrc -o $@ $< $(LIBSRCS)

demo: build/ckpt
	./build/ckpt demo

# T=NAME (or a glob, or part of names): only those tests
test: build/test/ckpt $(TESTPROGS) $(TESTPROGS32) $(AUXPROGS) $(UNITS)
	bash tests/setup.sh
	bash tests/run.sh $(T)

# CUDA processes on a real GPU (tests/gpu/run.sh): the release build,
# the test program built with nvcc for the GPU at hand, a libcuda.so.1
# from before r570 to be refused.
NVCC      ?= nvcc
NVCCFLAGS ?= -O2 -arch=native
build/gpu/memhold: tests/gpu/memhold.cu
	@mkdir -p build/gpu
	$(NVCC) $(NVCCFLAGS) -o $@ $<
build/gpu/fake/libcuda.so.1: tests/gpu/fakecuda.c
	@mkdir -p build/gpu/fake
	$(CC) -std=gnu11 -shared -fPIC -O2 -Wall -Wextra -Werror -Wno-unused-parameter -o $@ $<

test-gpu: build/ckpt build/gpu/fake/libcuda.so.1
	@if [ ! -e /dev/nvidiactl ]; then \
		echo "SKIP: no NVIDIA GPU here (/dev/nvidiactl absent): GPU tests not run"; \
		echo "0 passed, 0 failed"; \
	else \
		$(MAKE) build/gpu/memhold && bash tests/gpu/run.sh; \
	fi

clean:
	rm -rf build

.PHONY: all demo test test-gpu clean
