# gpuphase — top-level build.
#
# Each component adds itself through its own module.mk (trace/, collector/,
# libgpuphase/, report/, simcuda/, examples/, tests/): it appends to the lists
# below and defines its own rules. Everything is built under $(B) (default
# build/), so sanitizer variants live side by side (build/asan, build/tsan).
#
#   make            build everything
#   make test       build, then run every Criterion suite and end-to-end test
#   make asan|tsan  the same under AddressSanitizer+UBSan / ThreadSanitizer
#   make bench      benchmarks (prints "bench: ..." lines and tables)
#   make demo       run an example under the profiler and print its report
#   make cross-aarch64  compile gpuphase attach's aarch64 code (cli/module.mk)
#
# Dependencies are Debian packages, installed by scripts/deps.sh (as root) or
# named with the exact apt-get line (otherwise). CUDA comes from $(CUDA_HOME).

CUDA_HOME ?= /usr/local/cuda
B         ?= build
SAN       ?=
CC        ?= cc
NVCC      ?= $(CUDA_HOME)/bin/nvcc
PYTHON    ?= python3
PREFIX    ?= /usr/local

ifeq ($(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h),)
  $(error CUDA toolkit not found: $(CUDA_HOME)/include/cuda_runtime_api.h is missing. Install the CUDA 13 toolkit or set CUDA_HOME=/path/to/cuda)
endif

OPT      ?= -O2
WARN      = -Wall -Wextra -Werror
CSTD      = -std=c11
SANFLAGS_asan = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SANFLAGS_tsan = -fsanitize=thread
SANFLAGS  = $(SANFLAGS_$(SAN))
CPPFLAGS += -D_GNU_SOURCE -I. -Itrace -Icollector -I$(CUDA_HOME)/include
CFLAGS   += $(CSTD) $(WARN) $(OPT) -g -fPIC -pthread $(SANFLAGS)
LDFLAGS  += -pthread $(SANFLAGS)
CUDA_LIBDIR = $(CUDA_HOME)/lib64

# Lists that module.mk files append to.
ALL_TARGETS :=      # everything `make` builds
TESTS       :=      # test programs (Criterion or shell) run by `make test`
TSAN_TESTS  :=      # the subset that `make tsan` runs (concurrency tests)
BENCHES     :=      # commands run by `make bench`, one per line item
EXAMPLES    :=      # example binaries

.PHONY: all test asan tsan bench demo clean deps install fuzz
all: deps-stamp-all

DEPS_STAMP = $(B)/.deps-ok
$(DEPS_STAMP): scripts/deps.sh
	@mkdir -p $(B)
	@bash scripts/deps.sh core
	@touch $@
deps: $(DEPS_STAMP)

# Generic compile rule; modules may add per-target flags with target-specific
# variables. Order-only dependency on the deps stamp so a clean machine first
# installs what it needs.
$(B)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# trace/ first: the format library depends on nothing, and every component
# above names $(GP_TRACE_LIB) in its rules.
include trace/module.mk
include collector/module.mk
-include simcuda/module.mk
-include examples/module.mk
-include libgpuphase/module.mk
-include report/module.mk
-include tests/module.mk
-include cli/module.mk
-include examples/server/module.mk
-include tests/gpu/module.mk
-include tests/reliability/module.mk
-include tests/fuzz/module.mk

deps-stamp-all: $(DEPS_STAMP) $(ALL_TARGETS)
.PHONY: deps-stamp-all

# The sanitizer runtime that must be preloaded before an instrumented
# libgpuphase.so can load into an uninstrumented program (examples, nvcc).
SAN_RUNTIME_asan = $(shell $(CC) -print-file-name=libasan.so)
SAN_RUNTIME_tsan = $(shell $(CC) -print-file-name=libtsan.so)
SAN_RUNTIME      = $(SAN_RUNTIME_$(SAN))

TEST_ENV = GP_BUILD=$(abspath $(B)) GP_SRC=$(abspath .) GP_SAN=$(SAN) GP_SAN_RUNTIME=$(SAN_RUNTIME) CUDA_HOME=$(CUDA_HOME)

test: all
	@$(TEST_ENV) bash tests/run-tests.sh $(TESTS)

asan:
	$(MAKE) B=build/asan SAN=asan test

tsan:
	$(MAKE) B=build/tsan SAN=tsan all
	@$(TEST_ENV) GP_BUILD=$(abspath build/tsan) GP_SAN=tsan GP_SAN_RUNTIME=$(SAN_RUNTIME_tsan) \
	  bash tests/run-tests.sh $(patsubst $(B)/%,build/tsan/%,$(TSAN_TESTS))

bench: all
	@$(TEST_ENV) bash bench/run-bench.sh $(BENCHES)

# make demo: build, then record the launch-bound and sync-bound examples
# (on simcuda when there is no GPU), print both reports, write HTML reports.
demo: all
	@$(TEST_ENV) bash scripts/demo.sh

# make install PREFIX=/usr/local [DESTDIR=...]: the commands, the library,
# the man page, the docs and the report's default category table (compiled
# into gpuphase-report; installed for users to read and extend) in the usual
# places (gpuphase finds the library as ../lib/libgpuphase.so next to itself).
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/doc/gpuphase $(DESTDIR)$(PREFIX)/share/gpuphase
	install -m 755 $(B)/bin/gpuphase $(B)/bin/gpuphase-report $(B)/bin/gpuphase-agent $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(B)/lib/libgpuphase.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 cli/gpuphase.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md $(wildcard docs/*.md) $(DESTDIR)$(PREFIX)/share/doc/gpuphase/
	install -m 644 report/core/categories.tsv $(DESTDIR)$(PREFIX)/share/gpuphase/

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
