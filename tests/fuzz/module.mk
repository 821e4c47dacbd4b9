# tests/fuzz/module.mk — the fuzz harness over the trace reader and the
# report's join (docs/reliability.md §6).
#
#   make fuzz [FUZZ_SECONDS=150]   libFuzzer run (clang -fsanitize=fuzzer,
#                                  address,undefined; clang comes from
#                                  scripts/deps.sh fuzz) seeded with small real
#                                  traces generated here, then the saved
#                                  regressions; a crash leaves its input in
#                                  $(B)/fuzz/artifacts/ — copy it into
#                                  tests/fuzz/regressions/ with the fix.
#   $(B)/tests/fuzz_replay         the same harness in the ordinary build: make
#                                  test replays tests/fuzz/regressions/ and the
#                                  seeds, and truncates / bit-flips a trace.

FUZZ_DIR      := $(B)/fuzz
FUZZ_SECONDS  ?= 150
FUZZ_CC       ?= clang
FUZZ_SRCS     := tests/fuzz/fuzz_main.c tests/fuzz/fuzz_trace.c $(GP_TRACE_SRCS) $(REPORT_CORE_SRCS)

$(B)/tests/fuzz_replay: $(B)/obj/tests/fuzz/fuzz_replay.o $(B)/obj/tests/fuzz/fuzz_trace.o $(REPORT_LIB) \
                        $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS) $(GP_TRACE_LIBS)

ALL_TARGETS += $(B)/tests/fuzz_replay
TESTS       += tests/fuzz/test_fuzz_regress.sh
.SECONDARY: $(B)/obj/tests/fuzz/fuzz_replay.o $(B)/obj/tests/fuzz/fuzz_trace.o

$(FUZZ_DIR)/fuzz_trace: $(FUZZ_SRCS) $(wildcard tests/fuzz/*.h report/*.h report/*/*.h trace/*.h) $(REPORT_GEN)/html_assets.h
	@bash scripts/deps.sh fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -I. -Itrace -I$(REPORT_GEN) -I$(CUDA_HOME)/include \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $(FUZZ_SRCS) -llz4 -lsqlite3 $(GP_DEMANGLE_LIBS) -ldl -lm

# Seeds: small real traces of rel_prog on simcuda (needs the plain build).
$(FUZZ_DIR)/seeds/.done: tests/fuzz/make-seeds.sh $(GP_LIB_SO) $(REL_PROG) $(SIMCUDA_LIBS) $(B)/bin/gpuphase-report
	@mkdir -p $(dir $@)
	GP_BUILD=$(abspath $(B)) bash tests/fuzz/make-seeds.sh $(dir $@)
	@touch $@

.PHONY: fuzz fuzz-seeds
fuzz-seeds: $(FUZZ_DIR)/seeds/.done
fuzz: $(FUZZ_DIR)/fuzz_trace $(FUZZ_DIR)/seeds/.done
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_DIR)/fuzz_trace -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	  -malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	  -artifact_prefix=$(abspath $(FUZZ_DIR))/artifacts/ \
	  $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds tests/fuzz/regressions
