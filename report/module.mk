# report/module.mk — gpuphase-report, the offline analyser, its tests and its
# benchmark. The analysis core (libgpreport.a) needs no trace file; the binary
# links the collector's reader.
REPORT_CORE_SRCS := report/map.c report/stats.c report/analysis.c report/rep.c report/verdict.c \
                    report/xa.c report/graphs.c report/trends.c report/hostload.c report/stages.c report/stability.c \
                    report/output.c report/export_chrome.c report/export_sqlite.c report/export_html.c
REPORT_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_CORE_SRCS))
REPORT_LIB       := $(B)/lib/libgpreport.a
REPORT_LIBS       = -lsqlite3 -lstdc++ -lm

$(REPORT_LIB): $(REPORT_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/gpuphase-report: $(B)/obj/report/main.o $(REPORT_LIB) $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

REPORT_TESTS := $(B)/tests/test_report_core

$(B)/tests/test_report_%: $(B)/obj/report/test_report_%.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcriterion $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

$(B)/bench/bench_report: $(B)/obj/report/bench_report.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(REPORT_LIB) $(B)/bin/gpuphase-report $(REPORT_TESTS)
TESTS       += $(REPORT_TESTS)

.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/report/%.o,$(REPORT_TESTS)) $(B)/obj/report/bench_report.o

ALL_TARGETS += $(B)/bench/bench_report
BENCHES     += $(B)/bench/bench_report

ALL_TARGETS += $(B)/tests/test_report_xa
TESTS       += $(B)/tests/test_report_xa
.SECONDARY: $(B)/obj/report/test_report_xa.o
