# collector/module.mk — the collector, the in-process transport of a trace:
# per-thread rings, the registry, string interning and the writer thread that
# drains the rings into a trace file, or one file per window in a duty cycle
# (libgpcollector.a), with its tests and
# benchmark. libgpuphase.so links it (and tests that need real traces); the
# file format it writes, and the reader, are the trace library below it
# (trace/module.mk), so libgpcollector.a is always followed on a link line by
# $(GP_TRACE_LIB).
#
# Threads: any number of producers (each owns its ring) and one writer thread
# (gp_collector.h, gp_collector_int.h give the rules).
# Invariants: the collector moves records but does not define them: every
# byte it writes is laid out by trace/gp_format.h and trace/gp_file.h, and it
# calls down into libgptrace.a (the block CRC) and never the other way.
#
# Anything that links $(GP_COLLECTOR_LIB) links, after it,
# $(GP_TRACE_LIB) $(GP_COLLECTOR_LIBS).

GP_COLLECTOR_SRCS := collector/collector.c collector/ring.c collector/registry.c \
                     collector/intern.c collector/writer.c \
                     collector/header.c collector/windows.c
GP_COLLECTOR_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(GP_COLLECTOR_SRCS))
GP_COLLECTOR_LIB  := $(B)/lib/libgpcollector.a
GP_COLLECTOR_LIBS := $(GP_TRACE_LIBS) -pthread

$(GP_COLLECTOR_LIB): $(GP_COLLECTOR_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

GP_COLLECTOR_TESTS := $(B)/tests/test_collector_ring $(B)/tests/test_collector_never \
                      $(B)/tests/test_collector_stress

# Criterion cannot start under ThreadSanitizer (tests/common/tcrit.h):
# tsan builds run the same suites on a minimal stand-in runner.
ifeq ($(SAN),tsan)
$(B)/obj/collector/tests/%.o: CPPFLAGS += -DGP_TEST_MINI
GP_COLLECTOR_TEST_LIBS :=
else
GP_COLLECTOR_TEST_LIBS := -lcriterion
endif

$(B)/tests/test_collector_%: $(B)/obj/collector/tests/test_collector_%.o $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_COLLECTOR_TEST_LIBS) $(GP_COLLECTOR_LIBS)

$(B)/bench/bench_collector: $(B)/obj/collector/bench/bench_collector.o $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_COLLECTOR_LIBS) -lm

ALL_TARGETS += $(GP_COLLECTOR_LIB) $(GP_COLLECTOR_TESTS) $(B)/bench/bench_collector
BENCHES     += $(B)/bench/bench_collector
TESTS       += $(GP_COLLECTOR_TESTS)
TSAN_TESTS  += $(B)/tests/test_collector_ring $(B)/tests/test_collector_stress $(B)/tests/test_collector_never

# Keep test/bench objects (they are intermediates of the pattern rule above).
.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/collector/tests/%.o,$(GP_COLLECTOR_TESTS)) \
            $(B)/obj/collector/bench/bench_collector.o
