# tests/module.mk — the cross-component suites that no single module owns:
# the end-to-end tests in tests/e2e/ (the real pipeline — gpuphase record,
# libgpuphase, simcuda, gpuphase-report — on small CUDA programs whose ground
# truth simcuda writes) with the programs they run, and the report corpus.
# Module unit tests live in <module>/tests/ and are built by that module.
# Included after every module whose outputs these tests use, and before
# cli/module.mk (whose unit test inspects the two builds of cli_app).

# The `gpuphase` command's CUDA test program, built both ways: with a shared
# cudart (hookable) and a static one (injection only). nvcc is slow: only
# these two.
CLI_APP_BINS := $(B)/tests/cli_app_shared $(B)/tests/cli_app_static
$(B)/tests/cli_app_shared: tests/e2e/cli_app.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O2 -Xcompiler -Wall,-Wextra,-Werror -o $@ $<
$(B)/tests/cli_app_static: tests/e2e/cli_app.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart static -O2 -Xcompiler -Wall,-Wextra,-Werror -o $@ $<

# The report's scenarios and the analyses' program: CUDA C programs built
# like the examples, run under the profiler by the shell tests below.
E2E_REPORT_BINS := $(B)/tests/e2e/report_rule_of_thumb $(B)/tests/e2e/report_multistream \
                   $(B)/tests/e2e/report_realcuda \
                   $(B)/tests/e2e/analyses_run $(B)/tests/e2e/whatif_pairs
$(E2E_REPORT_BINS): $(B)/tests/e2e/%: tests/e2e/%.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -o $@ $<

ALL_TARGETS += $(CLI_APP_BINS) $(E2E_REPORT_BINS)

# The command end to end (record, report/diff/export hand-over, trigger, attach,
# help, install, static cudart, one GPUPHASE_* grammar with the library).
TESTS += tests/e2e/test_cli_help.sh tests/e2e/test_cli_record.sh tests/e2e/test_cli_grammar.sh \
	 tests/e2e/test_cli_static.sh tests/e2e/test_cli_trigger.sh tests/e2e/test_cli_install.sh \
	 tests/e2e/test_cli_stop.sh tests/e2e/test_cli_choose.sh tests/e2e/test_cli_record_finish.sh \
	 tests/e2e/test_cli_attach.sh
# The report against simcuda's ground truth, its command line, the analyses
# (graphs, trends, stages, host, stability), NVTX-named stages (metrics.md
# §15; examples/gpu/nvtx_ranges is built by tests/gpu/module.mk) and the
# outputs' shape (json schema, csv, chrome-trace, html) for every kind of trace,
# the what-if predictions against programs with the change made for real, and
# CUPTI's own cost taken out of the phases (records, calibration, self-overhead).
TESTS += tests/e2e/test_report_e2e.sh tests/e2e/test_report_cli.sh tests/e2e/test_analyses_e2e.sh \
	 tests/e2e/test_report_cupti_awkward.sh tests/e2e/test_report_cupti_cost.sh \
	 tests/e2e/test_nvtx_stages.sh tests/e2e/test_report_outputs.sh tests/e2e/test_export_formats.sh \
	 tests/e2e/test_export_readers.sh tests/e2e/test_export_html_browser.sh \
	 tests/e2e/test_whatif_e2e.sh tests/e2e/test_report_outfiles.sh \
	 tests/e2e/test_report_reading.sh tests/e2e/test_report_diff.sh tests/e2e/test_report_progress.sh
# The library without libunwind, and under a sanitizer-instrumented build.
TESTS      += tests/e2e/test_stacks_no_libunwind.sh
# Call sites: Python frames through ctypes for every CPython found, native
# frames named offline from .symtab / DWARF lines (libdw).
TESTS      += tests/e2e/test_pyframes.sh tests/e2e/test_native_names.sh
TSAN_TESTS += tests/e2e/test_preload_sanitizer.sh

# The report corpus: committed traces and the outputs the report must give
# for them, byte for byte (tests/corpus/make-corpus.sh says how to rebuild).
TESTS += tests/corpus/test_report_corpus.sh
