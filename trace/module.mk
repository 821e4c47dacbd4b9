# trace/module.mk — the trace format library (libgptrace.a): the record layout
# (gp_format.h), the file framing (gp_file.h), the block checksum (crc32c.c),
# the streaming reader (gp_reader.h, reader.c) and the one kernel-name rule
# (kernel_name.h), plus gpuphase-dump and the format's own tests.
#
# Both sides of the file link it: the collector's writer thread (collector/,
# whose libgpcollector.a sits on top of it), libgpuphase.so, the report, the
# `gpuphase` command and simcuda.
#
# Threads: it starts none and holds no shared state; the CRC and kernel-name
# functions may be called from any thread, a reader object belongs to one
# thread at a time.
# Invariants: the file format is defined here once (gp_format.h, gp_file.h;
# docs/format.md is the same contract in prose), and this library depends on
# nothing else in the tree: no file here includes a collector/, libgpuphase/
# or report/ header. So it is included first, and every archive that uses it
# comes before it on a link line:
#     $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) $(GP_TRACE_LIBS)
#
# Anything that links $(GP_TRACE_LIB) also links $(GP_TRACE_LIBS). A program
# that must always demangle kernel names (the report, tests) also links
# $(GP_DEMANGLE_LIBS): kernel_name.c uses the process's own C++ runtime
# (dlsym) so that libgpuphase.so never needs one, and --as-needed would drop a
# plain -lstdc++ that no object references directly.

GP_TRACE_SRCS    := trace/crc32c.c trace/reader.c trace/kernel_name.c
GP_TRACE_OBJS    := $(patsubst %.c,$(B)/obj/%.o,$(GP_TRACE_SRCS))
GP_TRACE_LIB     := $(B)/lib/libgptrace.a
GP_TRACE_LIBS    := -llz4 -ldl
GP_DEMANGLE_LIBS := -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state

$(GP_TRACE_LIB): $(GP_TRACE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/gpuphase-dump: $(B)/obj/trace/dump.o $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_TRACE_LIBS)

# The format suite writes its traces through the real writer thread, so the
# trace tests also link the collector (by path: collector/module.mk is
# included after this file). The kernel-name suite needs only this library.
GP_TRACE_TESTS := $(B)/tests/test_trace_format $(B)/tests/test_trace_kernel_name

# Criterion cannot start under ThreadSanitizer (tests/common/tcrit.h):
# tsan builds compile the same suites for a minimal stand-in runner.
ifeq ($(SAN),tsan)
$(B)/obj/trace/tests/%.o: CPPFLAGS += -DGP_TEST_MINI
GP_TRACE_TEST_LIBS :=
else
GP_TRACE_TEST_LIBS := -lcriterion
endif

$(B)/tests/test_trace_%: $(B)/obj/trace/tests/test_trace_%.o $(B)/lib/libgpcollector.a $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_TRACE_TEST_LIBS) $(GP_TRACE_LIBS) $(GP_DEMANGLE_LIBS) -pthread

ALL_TARGETS += $(GP_TRACE_LIB) $(B)/bin/gpuphase-dump $(GP_TRACE_TESTS)
TESTS       += $(GP_TRACE_TESTS)

# Keep test objects (they are intermediates of the pattern rule above).
.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/trace/tests/%.o,$(GP_TRACE_TESTS))
