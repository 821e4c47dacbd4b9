# report/module.mk — gpuphase-report, the offline analyser, its unit tests
# (report/tests/) and its benchmark. libgpreport.a holds the driver
# (pipeline.c, which reads traces through the trace library's reader: link
# libgptrace.a after it), the analysis core, the analyses (every file in
# report/analyses/) and the outputs.
REPORT_CORE_SRCS := report/pipeline.c \
                    report/analysis.c report/analysis_names.c report/analysis_fold.c report/analysis_finish.c \
                    report/join.c report/sync.c report/sync_queue.c report/cupti_cost.c report/gpu_clock.c report/symbolize.c report/strtab.c report/map.c report/stats.c report/clockmap.c \
                    report/analyses.c report/depgraph.c report/peaks.c $(wildcard report/analyses/*.c) \
                    report/rep.c report/verdict.c report/fmt.c report/output.c report/diff.c report/outfile.c \
                    report/stability.c report/export_chrome.c report/export_perfetto.c report/export_sqlite.c \
                    report/export_html.c report/partial.c report/partial_rep.c
REPORT_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_CORE_SRCS))
REPORT_LIB       := $(B)/lib/libgpreport.a
REPORT_GEN       := $(B)/gen/report

# The HTML page's script and style, kept as files (report/assets/) and
# compiled in as C strings so the page needs nothing at run time.
$(REPORT_GEN)/html_assets.h: report/assets/report.js report/assets/report.css
	@mkdir -p $(dir $@)
	{ for a in js css; do echo "static const char gp_html_$$a[] ="; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' report/assets/report.$$a; echo ";"; done; } > $@.tmp && mv $@.tmp $@
$(B)/obj/report/export_html.o: $(REPORT_GEN)/html_assets.h
$(B)/obj/report/export_html.o: CPPFLAGS += -I$(REPORT_GEN)
REPORT_LIBS       = -lsqlite3 $(GP_DEMANGLE_LIBS) -lm -ldl

$(REPORT_LIB): $(REPORT_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/gpuphase-report: $(B)/obj/report/main.o $(REPORT_LIB) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS) $(GP_TRACE_LIBS)

# Unit tests: report/tests/test_report_*.c, one binary each in $(B)/tests/.
REPORT_TESTS := $(patsubst report/tests/%.c,$(B)/tests/%,$(wildcard report/tests/test_report_*.c))

$(B)/tests/test_report_%: $(B)/obj/report/tests/test_report_%.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcriterion $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

$(B)/bench/bench_report: $(B)/obj/report/bench_report.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(REPORT_LIB) $(B)/bin/gpuphase-report $(REPORT_TESTS)
TESTS       += $(REPORT_TESTS)

.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/report/tests/%.o,$(REPORT_TESTS)) $(B)/obj/report/bench_report.o

ALL_TARGETS += $(B)/bench/bench_report
BENCHES     += $(B)/bench/bench_report

