# collector/module.mk — the collector: rings, registry, interning, writer
# thread, trace file writer and reader (libgpcollector.a), gpuphase-dump, and
# the collector's tests and benchmark.
#
# Anything that links $(B)/lib/libgpcollector.a must also link $(GP_COLLECTOR_LIBS).
# A program that must always demangle kernel names (the report, tests) also
# links $(GP_DEMANGLE_LIBS): kernel_name.c uses the process's own C++ runtime
# (dlsym) so that libgpuphase.so never needs one, and --as-needed would drop a
# plain -lstdc++ that no object references directly.

GP_COLLECTOR_SRCS := collector/collector.c collector/crc32c.c collector/ring.c collector/registry.c \
                     collector/intern.c collector/writer.c collector/reader.c \
                     collector/kernel_name.c
GP_COLLECTOR_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(GP_COLLECTOR_SRCS))
GP_COLLECTOR_LIB  := $(B)/lib/libgpcollector.a
GP_COLLECTOR_LIBS := -llz4 -ldl -pthread
GP_DEMANGLE_LIBS  := -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state

$(GP_COLLECTOR_LIB): $(GP_COLLECTOR_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/gpuphase-dump: $(B)/obj/collector/dump.o $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_COLLECTOR_LIBS)

GP_COLLECTOR_TESTS := $(B)/tests/test_collector_ring $(B)/tests/test_collector_format \
                      $(B)/tests/test_collector_never \
                      $(B)/tests/test_collector_stress $(B)/tests/test_collector_kernel_name

# Criterion cannot start under ThreadSanitizer (tests/common/tcrit.h):
# tsan builds run the same suites on a minimal stand-in runner.
ifeq ($(SAN),tsan)
$(B)/obj/collector/tests/%.o: CPPFLAGS += -DGP_TEST_MINI
GP_COLLECTOR_TEST_LIBS :=
else
GP_COLLECTOR_TEST_LIBS := -lcriterion
endif

$(B)/tests/test_collector_%: $(B)/obj/collector/tests/test_collector_%.o $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_COLLECTOR_TEST_LIBS) $(GP_COLLECTOR_LIBS) $(GP_DEMANGLE_LIBS)

$(B)/bench/bench_collector: $(B)/obj/collector/bench/bench_collector.o $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_COLLECTOR_LIBS) -lm

ALL_TARGETS += $(GP_COLLECTOR_LIB) $(B)/bin/gpuphase-dump $(GP_COLLECTOR_TESTS) $(B)/bench/bench_collector
BENCHES     += $(B)/bench/bench_collector
TESTS       += $(GP_COLLECTOR_TESTS)
TSAN_TESTS  += $(B)/tests/test_collector_ring $(B)/tests/test_collector_stress $(B)/tests/test_collector_never

# Keep test/bench objects (they are intermediates of the pattern rule above).
.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/collector/tests/%.o,$(GP_COLLECTOR_TESTS)) \
            $(B)/obj/collector/bench/bench_collector.o
