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
                   $(B)/tests/e2e/analyses_run $(B)/tests/e2e/whatif_pairs \
                   $(B)/tests/e2e/report_profiler $(B)/tests/e2e/report_devices \
                   $(B)/tests/e2e/multirank $(B)/tests/e2e/counters_run \
                   $(B)/tests/e2e/cold_start $(B)/tests/e2e/exit_in_call \
                   $(B)/tests/e2e/window_unopened $(B)/tests/e2e/launch_config \
                   $(B)/tests/e2e/host_callback $(B)/tests/e2e/fork_fresh $(B)/tests/e2e/exit_path
$(E2E_REPORT_BINS): $(B)/tests/e2e/%: tests/e2e/%.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -o $@ $<

# A trace rewritten with CUPTI's queue-full records delivered late (the
# report's late-record test), or with some kernel records left out (the
# cross-rank test's lost collectives).
$(B)/tests/e2e/trace_reorder: $(B)/obj/tests/e2e/trace_reorder.o $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(GP_TRACE_LIBS)

# The attach test's program that looks its launch function up itself
# (dlsym, dlvsym) before and during an attach.
$(B)/tests/e2e/attach_lookups: tests/e2e/attach_lookups.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -o $@ $< -ldl

# The interrupt test's program: launches until a signal kills it.
$(B)/tests/e2e/interrupt_loop: tests/e2e/interrupt_loop.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -o $@ $<

ALL_TARGETS += $(CLI_APP_BINS) $(E2E_REPORT_BINS) $(B)/tests/e2e/attach_lookups $(B)/tests/e2e/trace_reorder \
	       $(B)/tests/e2e/interrupt_loop

# A test-only interposer (tests/common/clockshift.c): one process's clocks
# and host name read as another host's, for the cross-host tests. Built
# without the sanitizers, like the programs it is preloaded into.
$(B)/tests/libclockshift.so: tests/common/clockshift.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CSTD) $(WARN) $(OPT) -fPIC -shared -o $@ $< -ldl
ALL_TARGETS += $(B)/tests/libclockshift.so

# The command end to end (record, report/diff/export hand-over, trigger, attach,
# help, install, static cudart, one GPUPHASE_* grammar with the library).
TESTS += tests/e2e/test_cli_help.sh tests/e2e/test_cli_record.sh tests/e2e/test_cli_grammar.sh \
	 tests/e2e/test_cli_static.sh tests/e2e/test_cli_trigger.sh tests/e2e/test_cli_install.sh \
	 tests/e2e/test_cli_stop.sh tests/e2e/test_cli_choose.sh tests/e2e/test_cli_record_finish.sh \
	 tests/e2e/test_cli_attach.sh tests/e2e/test_cli_attach_lookups.sh tests/e2e/test_cli_record_interrupt.sh
# `pip install .`: the wheel (meson-python driving this Makefile) in a fresh
# venv, its gpuphase recording an example from outside the tree, and the
# library's CUPTI from a pip-installed CUDA.
TESTS += tests/e2e/test_pip_wheel.sh
# The report against simcuda's ground truth, its command line, the analyses
# (graphs, trends, stages, host, stability), NVTX-named stages (metrics.md
# §15; examples/gpu/nvtx_ranges is built by tests/gpu/module.mk) and the
# outputs' shape (json schema, csv, chrome-trace, html) for every kind of trace,
# the what-if predictions against programs with the change made for real,
# capture windows (iterations, time, trigger, profiler; one that never
# opens or holds nothing, and counters asked for and not had), two devices,
# queue-full records delivered late, CUPTI's own cost taken out of the
# phases (records, calibration, self-overhead), the GPU clock's offset
# bounded and taken out of queue and waits, hook-only captures and the
# --filter/--thresholds/--top views held to the truth, and the tampers a
# review found the truth check accepting, each refused.
TESTS += tests/e2e/test_report_e2e.sh tests/e2e/test_report_cli.sh tests/e2e/test_analyses_e2e.sh \
	 tests/e2e/test_report_cupti_awkward.sh tests/e2e/test_report_cupti_cost.sh \
	 tests/e2e/test_nvtx_stages.sh tests/e2e/test_report_outputs.sh tests/e2e/test_export_formats.sh \
	 tests/e2e/test_export_readers.sh tests/e2e/test_export_html_browser.sh \
	 tests/e2e/test_whatif_e2e.sh tests/e2e/test_report_advice.sh tests/e2e/test_report_outfiles.sh \
	 tests/e2e/test_report_reading.sh tests/e2e/test_report_diff.sh tests/e2e/test_report_progress.sh \
	 tests/e2e/test_report_windows.sh tests/e2e/test_window_unopened.sh tests/e2e/test_report_devices.sh tests/e2e/test_report_queue_late.sh \
	 tests/e2e/test_duty_cycle.sh tests/e2e/test_attach_duty_cycle.sh \
	 tests/e2e/test_report_partial.sh tests/e2e/test_python_dask.sh tests/e2e/test_python_package.sh \
	 tests/e2e/test_report_truth_modes.sh \
	 tests/e2e/test_report_tampers.sh tests/e2e/test_report_gpu_clock.sh tests/e2e/test_report_hostile.sh \
	 tests/e2e/test_launch_config.sh tests/e2e/test_report_host_callback.sh
# A job past one machine: rank variables and names, clock pairs, two ranks as
# two hosts (clockshift.so) lined up, cross-rank analyses against the truth.
TESTS += tests/e2e/test_multinode.sh
# Copies' bandwidth against the link peaks, and the hardware counters
# (simcuda's CUPTI profiling API): roofline verdicts against the truth.
TESTS += tests/e2e/test_counters_e2e.sh
# gpuphase agent under a real Prometheus server (scripts/deps.sh prometheus):
# its query API against the reports of the same windows, promtool, restart,
# two processes, a dead one forgotten; a forged state as tamper control.
TESTS += tests/e2e/test_agent_prometheus.sh
# gpuphase agent --listen: IPv4, [IPv6], dual stack, a host name; malformed
# values refused on one line; a port in use.
TESTS += tests/e2e/test_agent_listen.sh
# Threads that start CUDA together: no call lost while the library starts
# (under TSan too: the start's wait is a cross-thread handshake).
TESTS += tests/e2e/test_cold_start.sh
TSAN_TESTS += tests/e2e/test_cold_start.sh
# Children forked before the parent's first CUDA call (a pre-fork server):
# each a full capture of its own (CUPTI, truth, duty cycle, control socket);
# children of a started parent keep the old rule.
TESTS += tests/e2e/test_fork_fresh.sh
# exit() from a signal handler inside a CUDA call: the exit path never hangs,
# at random points (600 runs) and under each lock the random runs met (the
# library's window lock, simcuda's CUPTI lock, malloc's arena lock: gdb stops
# the program inside each and the alarm lands there).
TESTS += tests/e2e/test_exit_in_call.sh tests/e2e/test_exit_under_lock.sh
# _exit and _Exit finish the trace as exit() does (a fork worker, Python's
# multiprocessing, a vfork child that touches nothing).
TESTS += tests/e2e/test_exit_path.sh
# The library without libunwind, and under a sanitizer-instrumented build.
TESTS      += tests/e2e/test_stacks_no_libunwind.sh
# Call sites: Python frames through ctypes for every CPython found (3.9 and
# 3.10 each in a test of its own, skipped where absent), the version
# detection and its fallback on a fake interpreter, native frames named
# offline from .symtab / DWARF lines (libdw).
TESTS      += tests/e2e/test_pyframes.sh tests/e2e/test_pyframes_py39.sh tests/e2e/test_pyframes_py310.sh \
              tests/e2e/test_pyframes_fallback.sh tests/e2e/test_native_names.sh
TSAN_TESTS += tests/e2e/test_preload_sanitizer.sh

# The report's layers: no include up a layer, no circle between folders,
# module maps that name every file (reads sources only).
TESTS += tests/layout/test_report_layers.sh

# The report corpus: committed traces and the outputs the report must give
# for them, byte for byte (tests/corpus/make-corpus.sh says how to rebuild).
TESTS += tests/corpus/test_report_corpus.sh

# The test runner's own test: fake tests of known honest count (passes,
# failures, skips, parts, majority retries) against its closing line.
TESTS += tests/runner/test_run_tests.sh

# The layout: each component's module map (a header's file list) against the
# files really there, with a tamper control (a map line removed must fail).
TESTS += tests/layout/test_module_maps.sh

# The size limits: no production source over 1,000 lines, no function over
# 150 (docs/CONTRIBUTING.md), with a tamper control at the limits.
TESTS += tests/layout/test_sizes.sh
