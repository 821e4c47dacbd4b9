# report/module.mk — gpuphase-report, the offline analyser, its unit tests
# (report/tests/) and its benchmark (report/bench/). libgpreport.a holds the driver
# (pipeline.c, which reads traces through the collector's reader: link
# libgpcollector.a after it), the analysis core, the analyses (every file in
# report/analyses/) and the outputs.
REPORT_CORE_SRCS := report/pipeline.c \
                    report/core/analysis.c report/core/analysis_names.c report/core/analysis_fold.c report/core/analysis_finish.c \
                    report/core/join.c report/core/sync.c report/core/sync_queue.c report/core/cupti_cost.c report/core/gpu_clock.c report/core/symbolize.c report/util/strtab.c report/util/codec.c report/util/map.c report/util/stats.c report/util/clockmap.c \
                    $(wildcard report/analyses/*.c) \
                    report/core/rep.c report/core/verdict.c report/util/fmt.c report/outputs/output.c report/outputs/diff.c report/util/outfile.c \
                    report/stability.c report/outputs/export_chrome.c report/outputs/export_perfetto.c report/outputs/export_sqlite.c \
                    report/outputs/export_html.c report/outputs/partial.c report/outputs/partial_rep.c
REPORT_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_CORE_SRCS))
REPORT_LIB       := $(B)/lib/libgpreport.a
REPORT_GEN       := $(B)/gen/report

# The HTML page's script and style, kept as files (report/outputs/assets/) and
# compiled in as C strings so the page needs nothing at run time.
$(REPORT_GEN)/html_assets.h: report/outputs/assets/report.js report/outputs/assets/report.css
	@mkdir -p $(dir $@)
	{ for a in js css; do echo "static const char gp_html_$$a[] ="; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' report/outputs/assets/report.$$a; echo ";"; done; } > $@.tmp && mv $@.tmp $@
$(B)/obj/report/outputs/export_html.o: $(REPORT_GEN)/html_assets.h
$(B)/obj/report/outputs/export_html.o: CPPFLAGS += -I$(REPORT_GEN)
REPORT_LIBS       = -lsqlite3 $(GP_DEMANGLE_LIBS) -lm -ldl

$(REPORT_LIB): $(REPORT_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/gpuphase-report: $(B)/obj/report/main.o $(REPORT_LIB) $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

# Unit tests: report/tests/test_report_*.c, one binary each in $(B)/tests/.
REPORT_TESTS := $(patsubst report/tests/%.c,$(B)/tests/%,$(wildcard report/tests/test_report_*.c))

$(B)/tests/test_report_%: $(B)/obj/report/tests/test_report_%.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcriterion $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

$(B)/bench/bench_report: $(B)/obj/report/bench/bench_report.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(REPORT_LIB) $(B)/bin/gpuphase-report $(REPORT_TESTS)
TESTS       += $(REPORT_TESTS)

.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/report/tests/%.o,$(REPORT_TESTS)) $(B)/obj/report/bench/bench_report.o

ALL_TARGETS += $(B)/bench/bench_report
BENCHES     += $(B)/bench/bench_report

