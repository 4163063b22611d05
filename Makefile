# ckpt - checkpoint/restart of running Linux processes.
#   make          build build/ckpt (release) and build/libckpt.a
#   make demo     build and run the demo
#   make test     build with ASan/UBSan and run the whole test suite

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -pthread
SRCS    := $(wildcard src/*.c src/kinds/*.c src/files/*.c src/arch/x86/*.c)
LIBSRCS := $(filter-out src/ckpt.c src/demo.c src/pidns.c,$(SRCS))
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

# The test build: the same sources under the sanitizers.
build/test/ckpt: $(SRCS) $(wildcard src/*.h src/kinds/*.h src/files/*.h src/arch/x86/*.h include/*.h)
	@mkdir -p build/test
	$(CC) $(WARN) -O1 -g $(SAN) -Iinclude -o $@ $(SRCS)

TESTPROGS := $(patsubst tests/progs/%.c,build/test/progs/%,$(wildcard tests/progs/*.c))
build/test/progs/%: tests/progs/%.c tests/progs/tp.h
	@mkdir -p build/test/progs
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<
build/test/progs/threads200: tests/progs/threads.c

AUXPROGS := build/test/aux/holder build/test/aux/tracer build/test/aux/kvserver
build/test/aux/%: tests/aux/%.c
	@mkdir -p build/test/aux
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<

UNITS := $(patsubst tests/unit/%.c,build/test/unit/%,$(wildcard tests/unit/*.c))
build/test/unit/%: tests/unit/%.c $(LIBSRCS)
	@mkdir -p build/test/unit
	$(CC) $(WARN) -O1 -g $(SAN) -Iinclude -Isrc -o $@ $< $(LIBSRCS)

demo: build/ckpt
	./build/ckpt demo

test: build/test/ckpt $(TESTPROGS) $(AUXPROGS) $(UNITS)
	bash tests/setup.sh
	bash tests/run.sh

clean:
	rm -rf build

.PHONY: all demo test clean
