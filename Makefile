# ckpt - checkpoint/restart of running Linux processes.
#   make          build build/ckpt, build/libckpt.a, build/libckpt.so (release)
#   make install  install them, the header, ckpt.pc and the man pages
#                 (PREFIX=/usr/local, DESTDIR=; make uninstall undoes it)
#   make demo     build and run the demo
#   make test     build with ASan/UBSan and run the whole test suite
#   make test-gpu build the CUDA test programs (nvcc) and run tests/gpu/
# WERROR=1 makes warnings errors in the release build; the test build and
# `make test` (CI) always have it.

.DEFAULT_GOAL := all

# The one place the version is written is the header the library's users
# compile against; the soname, ckpt.pc and the man pages take it from there.
VERSION := $(shell awk -F'"' '/define CKPT_VERSION_STRING/ { print $$2 }' include/ckpt.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libckpt.so.$(SOMAJOR)

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 \
	   -Wmissing-prototypes -Wstrict-prototypes -Wvla -Wundef -pthread
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# (recursive: `test` sets WERROR for the release objects it builds too)
RELFLAGS = $(WARN) $(if $(filter 1,$(WERROR)),-Werror) $(CFLAGS) -fPIC
TESTFLAGS := $(WARN) -Werror -O1 -g $(SAN) -DCKPT_TEST_HOOKS
DEPFLAGS = -MMD -MP -MF $(@:.o=.d)

# The architecture port (src/arch/ARCH/): the compiler's target by
# default (make CC=s390x-linux-gnu-gcc builds the s390x one).
ARCH    ?= $(shell $(CC) -dumpmachine | sed -e 's/-.*//' -e 's/^x86_64$$/x86/' -e 's/^powerpc64le$$/ppc64le/')
SRCS    := $(wildcard src/*.c src/kinds/*.c src/files/*.c src/arch/*.c src/arch/$(ARCH)/*.c)
CLISRCS := src/ckpt.c src/demo.c $(wildcard src/criu/*.c)
LIBSRCS := $(filter-out $(CLISRCS),$(SRCS))

# Release: one set of objects, position-independent, for the program and
# both libraries.
OBJS    := $(patsubst src/%.c,build/obj/%.o,$(LIBSRCS))
CLIOBJS := $(patsubst src/%.c,build/obj/%.o,$(CLISRCS))
# Test: one set of objects under the sanitizers, with the test hooks
# (CKPT_TEST_NO_IA32: act as a kernel that cannot run 32-bit programs,
# see tests/README.md), for build/test/ckpt and the unit tests.
TOBJS    := $(patsubst src/%.c,build/test/obj/%.o,$(LIBSRCS))
TCLIOBJS := $(patsubst src/%.c,build/test/obj/%.o,$(CLISRCS))
LIBS     := -pthread
# zstd for --compress, if libzstd-dev is here (ZSTD=0: build without it;
# such a ckpt refuses --compress and compressed images in one line).
ZSTD ?= $(shell pkg-config --exists libzstd 2>/dev/null && echo 1)
ifeq ($(ZSTD),1)
CPPFLAGS += -DCKPT_ZSTD
LIBS     += -lzstd
endif

# The CRIU drop-in (src/criu/, the command line's): CRIU's RPC messages
# in C from src/criu/rpc.proto, by protoc-c (Debian's
# protobuf-c-compiler), linked with libprotobuf-c (libprotobuf-c-dev).
PROTOC_C ?= protoc-c
CRIUGEN  := build/gen/criu/rpc.pb-c.c
CLIOBJS  += build/obj/criu/rpc.pb-c.o
TCLIOBJS += build/test/obj/criu/rpc.pb-c.o
CLILIBS  := $(LIBS) -lprotobuf-c
# build/ckpt takes libzstd and libprotobuf-c from their archives, where
# Debian's -dev packages put them: two shared libraries fewer to load
# make every command 0.2 ms faster here.
# (Not under LDFLAGS=-static, where everything is an archive anyway.)
have_archive = $(filter /%,$(shell $(CC) $(CFLAGS) $(LDFLAGS) -print-file-name=lib$(1).a))
CKPTLIBS := $(CLILIBS)
ifeq ($(filter -static,$(LDFLAGS)),)
ifneq ($(and $(call have_archive,protobuf-c),$(if $(filter 1,$(ZSTD)),$(call have_archive,zstd),y)),)
CKPTLIBS := $(filter-out -lzstd,$(LIBS)) -Wl,-Bstatic $(if $(filter 1,$(ZSTD)),-lzstd) \
	    -lprotobuf-c -Wl,-Bdynamic
endif
endif
build/gen/criu/%.pb-c.c build/gen/criu/%.pb-c.h: src/criu/%.proto
	@command -v $(PROTOC_C) > /dev/null && [ -e /usr/include/protobuf-c/protobuf-c.h ] || \
		bash tests/setup.sh build || { echo "protoc-c or libprotobuf-c missing: install protobuf-c-compiler and libprotobuf-c-dev" >&2; exit 1; }
	@mkdir -p $(@D)
	$(PROTOC_C) --proto_path=src/criu --c_out=$(@D) $<
$(filter build/obj/criu/% build/test/obj/criu/%,$(CLIOBJS) $(TCLIOBJS)): build/gen/criu/rpc.pb-c.h
build/obj/criu/%.o build/test/obj/criu/%.o: CPPFLAGS += -Ibuild/gen/criu
# (generated: protoc-c's warnings are not ours)
build/obj/criu/rpc.pb-c.o: $(CRIUGEN)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -w -c $< -o $@
build/test/obj/criu/rpc.pb-c.o: $(CRIUGEN)
	$(CC) $(CPPFLAGS) -O1 -g $(SAN) -w -c $< -o $@

all: build/ckpt build/libckpt.a build/libckpt.so build/man/ckpt.1 build/man/ckpt.3

build/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(RELFLAGS) $(DEPFLAGS) -Iinclude -c $< -o $@

build/test/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TESTFLAGS) $(DEPFLAGS) -Iinclude -c $< -o $@

build/ckpt: $(CLIOBJS) $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CKPTLIBS)

build/libckpt.a: $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# Only the calls of ckpt.h are exported (src/libckpt.map): the rest are
# the library's own and would clash with its users' names.
build/libckpt.so.$(VERSION): $(OBJS) src/libckpt.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=src/libckpt.map -o $@ $(OBJS) $(LIBS)
build/$(SONAME): build/libckpt.so.$(VERSION)
	ln -sf $(<F) $@
build/libckpt.so: build/$(SONAME)
	ln -sf $(<F) $@

# Not a PIE, the sanitizers' runtimes linked in: their relocations are
# done at link time, not by the loader at every start, where each page
# they write costs a fault (on this project's VMs a costly one).  The
# suite runs this binary thousands of times: 72 -> 44 ms a start here.
TLDFLAGS := -no-pie -static-libasan -static-libubsan
build/test/ckpt: $(TCLIOBJS) $(TOBJS)
	$(CC) $(SAN) $(TLDFLAGS) -o $@ $^ $(CLILIBS)

build/test/libckpt.a: $(TOBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The man pages get their version from ckpt.h, as everything else does.
build/man/%: man/% include/ckpt.h
	@mkdir -p $(@D)
	sed 's/@VERSION@/$(VERSION)/g' $< > $@

TESTPROGS := $(patsubst tests/progs/%.c,build/test/progs/%,$(wildcard tests/progs/*.c))
build/test/progs/%: tests/progs/%.c tests/progs/tp.h
	@mkdir -p build/test/progs
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<
build/test/progs/threads200: tests/progs/threads.c

# The same state tests as 32-bit programs (gcc -m32; tests/setup.sh
# installs gcc-multilib if it is missing), but those written in x86-64
# assembly, and the 32-bit ones of tests/progs32/.
PROGS32 := $(filter-out amx regs mixed_tree tcp_bigq,$(patsubst tests/progs/%.c,%,$(wildcard tests/progs/*.c))) \
	   $(patsubst tests/progs32/%.c,%,$(wildcard tests/progs32/*.c))
TESTPROGS32 := $(patsubst %,build/test/progs32/%,$(PROGS32))
# <asm/...> for -m32 is gcc-multilib's one symlink, /usr/include/asm,
# which Debian removes with gcc-multilib when a cross compiler is
# installed (make test-s390x): build/test/m32inc has the same link.
CC32 := $(CC) -m32 -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -Itests/progs \
	-idirafter build/test/m32inc
build/test/progs32/%: tests/progs32/%.c tests/progs/tp.h | build/test/m32 build/test/m32inc/asm
	@mkdir -p build/test/progs32
	$(CC32) -o $@ $<
build/test/progs32/%: tests/progs/%.c tests/progs/tp.h | build/test/m32 build/test/m32inc/asm
	@mkdir -p build/test/progs32
	$(CC32) -o $@ $<
build/test/m32:
	bash tests/setup.sh
	@mkdir -p build/test && touch $@
build/test/m32inc/asm:
	@mkdir -p build/test/m32inc
	ln -sfn /usr/include/x86_64-linux-gnu/asm $@

AUXPROGS := build/test/aux/holder build/test/aux/tracer build/test/aux/kvserver \
	    build/test/aux/connecting \
	    build/test/aux/tcp_states build/test/aux/tcp_pending \
	    build/test/aux/sockhold \
	    build/test/aux/child32 build/test/aux/holder32 build/test/aux/strict \
	    build/test/aux/true32 build/test/aux/userns_run build/test/aux/dirtier
build/test/aux/%: tests/aux/%.c
	@mkdir -p build/test/aux
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -o $@ $<

build/test/aux/child32: tests/aux/child32.c tests/aux/worker.h | build/test/m32 build/test/m32inc/asm
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/aux/holder32: tests/aux/holder.c | build/test/m32 build/test/m32inc/asm
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/aux/true32: tests/aux/true32.c | build/test/m32 build/test/m32inc/asm
	@mkdir -p build/test/aux
	$(CC32) -o $@ $<
build/test/progs/mixed_tree: tests/aux/worker.h build/test/aux/child32

UNITS := $(patsubst tests/unit/%.c,build/test/unit/%,$(wildcard tests/unit/*.c))
build/test/unit/%: tests/unit/%.c build/test/libckpt.a
	@mkdir -p $(@D)
	$(CC) $(TESTFLAGS) -MMD -MP -MF $@.d -Iinclude -Isrc -o $@ $< build/test/libckpt.a $(LIBS)

demo: build/ckpt
	./build/ckpt demo

# T=NAME (or a glob, or part of names): only those tests.  The release
# build comes first, under -Werror as in CI: the install test installs it
# and must find nothing left to build.
# tests/setup.sh first, in a make of its own: what it installs
# (libzstd-dev) decides how this one builds.
# The state tests on another architecture, cross-built and run in a full
# system emulator (tests/arch/run.sh fetches what it needs into
# build/arch/ the first time; many minutes; not part of `make test`).
test-s390x test-ppc64le:
	bash tests/arch/run.sh $(patsubst test-%,%,$@)

test:
	bash tests/setup.sh
	$(MAKE) --no-print-directory test-run
test-run: WERROR = 1
test-run: all build/test/ckpt $(TESTPROGS) $(TESTPROGS32) $(AUXPROGS) $(UNITS)
	bash tests/run.sh $(T)

# libFuzzer over the image reader, the kinds' load() and checks and
# `ckpt info` (fuzz/image_fuzz.c), built with clang (tests/setup.sh
# installs it).  `make fuzz` runs it FUZZ_TIME seconds (default 600).
FUZZCC    := clang
# (warnings are the gcc builds' to enforce: clang's differ, -w here)
FUZZFLAGS := -std=gnu11 -w -O1 -g -fno-omit-frame-pointer \
	     -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FOBJS := $(patsubst src/%.c,build/fuzz/obj/%.o,$(LIBSRCS))
build/fuzz/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZCC) $(CPPFLAGS) $(FUZZFLAGS) $(DEPFLAGS) -Iinclude -c $< -o $@
build/fuzz/image_fuzz: fuzz/image_fuzz.c $(FOBJS)
	$(FUZZCC) -std=gnu11 -Wall -Werror -O1 -g -fsanitize=fuzzer,address,undefined \
		-Iinclude -Isrc -o $@ $^ $(LIBS)
# CRIU's RPC requests as `ckpt swrk` maps them (fuzz/rpc_fuzz.c).
RPCFUZZSRCS := src/criu/rpc.c src/criu/job.c $(CRIUGEN)
build/fuzz/rpc_fuzz: fuzz/rpc_fuzz.c $(RPCFUZZSRCS) build/gen/criu/rpc.pb-c.h
	@mkdir -p $(@D)
	$(FUZZCC) -std=gnu11 -Wall -Werror -Wno-unused-parameter -O1 -g -fsanitize=fuzzer,address,undefined \
		-Iinclude -Isrc -Ibuild/gen/criu -o $@ fuzz/rpc_fuzz.c $(RPCFUZZSRCS) -lprotobuf-c
fuzz: all build/fuzz/image_fuzz $(TESTPROGS)
	bash fuzz/run.sh $(or $(FUZZ_TIME),600)

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

# Installation: the GNU directory variables, DESTDIR for staging.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PCDIR      ?= $(LIBDIR)/pkgconfig
INSTALL    ?= install

# ckpt.pc names the directories it is installed for: made at install
# time, never kept in build/ where another PREFIX would find it stale.
# Installing only copies what `all` built (the install test relies on it).
install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR) \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	$(INSTALL) -m 755 build/ckpt $(DESTDIR)$(BINDIR)/ckpt
	@# CRIU_LINK=1: ckpt also as `criu` (the CRIU drop-in, README)
	$(if $(filter 1,$(CRIU_LINK)),ln -sf ckpt $(DESTDIR)$(BINDIR)/criu)
	$(INSTALL) -m 755 build/libckpt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libckpt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libckpt.so
	$(INSTALL) -m 644 build/libckpt.a $(DESTDIR)$(LIBDIR)/libckpt.a
	$(INSTALL) -m 644 include/ckpt.h $(DESTDIR)$(INCLUDEDIR)/ckpt.h
	$(INSTALL) -m 644 build/man/ckpt.1 $(DESTDIR)$(MANDIR)/man1/ckpt.1
	$(INSTALL) -m 644 build/man/ckpt.3 $(DESTDIR)$(MANDIR)/man3/ckpt.3
	sed -e 's|@PREFIX@|$(PREFIX)|g' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g' \
	    -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBS@|$(LIBS)|g' \
	    ckpt.pc.in > $(DESTDIR)$(PCDIR)/ckpt.pc
	chmod 644 $(DESTDIR)$(PCDIR)/ckpt.pc
	@if [ -z "$(DESTDIR)" ]; then PATH=$$PATH:/sbin:/usr/sbin ldconfig 2> /dev/null || :; fi

uninstall:
	if [ "$$(readlink $(DESTDIR)$(BINDIR)/criu)" = ckpt ]; then rm -f $(DESTDIR)$(BINDIR)/criu; fi
	rm -f $(DESTDIR)$(BINDIR)/ckpt $(DESTDIR)$(LIBDIR)/libckpt.so.$(VERSION) \
	      $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libckpt.so \
	      $(DESTDIR)$(LIBDIR)/libckpt.a $(DESTDIR)$(INCLUDEDIR)/ckpt.h \
	      $(DESTDIR)$(PCDIR)/ckpt.pc $(DESTDIR)$(MANDIR)/man1/ckpt.1 \
	      $(DESTDIR)$(MANDIR)/man3/ckpt.3

clean:
	rm -rf build

.PHONY: all demo test test-run test-gpu test-s390x test-ppc64le fuzz install uninstall clean

-include $(patsubst %.o,%.d,$(OBJS) $(CLIOBJS) $(TOBJS) $(TCLIOBJS) $(FOBJS)) $(UNITS:=.d)
