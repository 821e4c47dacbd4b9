# report/module.mk — gpuphase-report, the offline analyser, its unit tests
# (report/tests/) and its benchmark (report/bench/). libgpreport.a holds
# every layer below main.c; pipeline.c reads traces through the trace
# library's reader (link libgptrace.a after it).
#
# Layers, each calling only the ones below it (tests/layout/test_report_layers.sh
# holds includes to this order, keeps folders free of circles and the module
# maps complete):
#   report/            top: main.c (the command), pipeline.c (reading traces
#                      into the core and the analyses), stability.c,
#                      options.c (the option table of every command line;
#                      the gpuphase command links it too, cli/module.mk)
#   report/outputs/    what a reader gets: output.c (text, markdown, csv),
#                      output_json.c (json), advice.c (the run's advice), window_empty.c (a window that held nothing), diff.c, export_*.c (Chrome, Perfetto, SQLite,
#                      HTML; the page's script and style in report/outputs/assets/),
#                      partial.c and partial_rep.c (the .gpp partial results)
#   report/analyses/   registry.c/.h (the plug-in interface and the list), one
#                      file per analysis, depgraph.c (the what-if graph;
#                      depgraph_legacy.c the legacy default stream's order,
#                      depgraph_replay.c its replay, depgraph_match.c what a
#                      change applies to, depgraph_parse.c its --whatif
#                      grammar, depgraph_int.h their layout; whatif.h the
#                      --whatif refusal main.c asks for), peaks.c
#   report/core/       the analysis core: analysis.c (the two-pass protocol;
#                      analysis_int.h maps its files), the join, sync
#                      attribution, rep.c (the aggregates), verdict.c
#   report/util/       leaves: map, strtab, stats, clockmap, fmt, outfile,
#                      codec (the bounded binary encoding)
# report/bench/ and report/tests/ are programs over the library, above it.
# One list per layer, top to bottom; every .c of a layer's folder is built.
REPORT_CORE_SRCS := report/pipeline.c report/stability.c report/options.c \
                    $(sort $(wildcard report/outputs/*.c)) \
                    $(sort $(wildcard report/analyses/*.c)) \
                    $(sort $(wildcard report/core/*.c)) \
                    $(sort $(wildcard report/util/*.c))
REPORT_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_CORE_SRCS))
REPORT_LIB       := $(B)/lib/libgpreport.a
REPORT_GEN       := $(B)/gen/report

# The HTML page's script and style, kept as files (report/outputs/assets/) and
# compiled in as C strings so the page needs nothing at run time.
$(REPORT_GEN)/html_assets.h: report/outputs/assets/report.js report/outputs/assets/report.css
	@mkdir -p $(dir $@)
	{ for a in js css; do echo "static const char gp_html_$$a[] ="; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' report/outputs/assets/report.$$a; echo ";"; done; } > $@.tmp && mv $@.tmp $@
# The default kernel-name -> category table, kept as a file
# (report/core/categories.tsv, installed for the user to read and extend) and
# compiled in, so the report never depends on finding it.
$(REPORT_GEN)/categories_table.h: report/core/categories.tsv
	@mkdir -p $(dir $@)
	{ echo "static const char gp_category_table_text[] ="; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g; s/?/\\?/g; s/^/"/; s/$$/\\n"/' report/core/categories.tsv; echo ";"; } > $@.tmp && mv $@.tmp $@
$(B)/obj/report/core/category.o: $(REPORT_GEN)/categories_table.h
$(B)/obj/report/core/category.o: CPPFLAGS += -I$(REPORT_GEN)
$(B)/obj/report/outputs/export_html.o: $(REPORT_GEN)/html_assets.h
$(B)/obj/report/outputs/export_html.o: CPPFLAGS += -I$(REPORT_GEN)
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

$(B)/bench/bench_report: $(B)/obj/report/bench/bench_report.o $(REPORT_LIB) $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) | $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(REPORT_LIBS) $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(REPORT_LIB) $(B)/bin/gpuphase-report $(REPORT_TESTS)
TESTS       += $(REPORT_TESTS)

.SECONDARY: $(patsubst $(B)/tests/%,$(B)/obj/report/tests/%.o,$(REPORT_TESTS)) $(B)/obj/report/bench/bench_report.o

ALL_TARGETS += $(B)/bench/bench_report
BENCHES     += $(B)/bench/bench_report

