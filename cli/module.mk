# cli/module.mk — the `gpuphase` command ($(B)/bin/gpuphase) and its unit
# test (cli/tests/). The end-to-end tests of the command (tests/e2e/test_cli_*)
# and the CUDA program they run are built by tests/module.mk, which is
# included before this file. Included from the top Makefile.

CLI_SRCS := cli/gpuphase.c cli/record.c cli/record_wait.c cli/trigger.c cli/control.c cli/attach.c cli/ptcall.c cli/target.c cli/report.c cli/help.c cli/locate.c cli/elfscan.c
# The library's own GPUPHASE_* parser (pure): `record` checks its options
# with it, so the command and the library read one grammar.
# gpuphase-report's option table (report/options.c): `report`, `record
# --report` and `attach` tell report options from traces by the report's
# own list.
CLI_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRCS)) $(GP_LIB_CONFIG_OBJ) $(B)/obj/report/options.o
CLI_LDLIBS = $(GP_TRACE_LIBS)

$(B)/bin/gpuphase: $(CLI_OBJS) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(GP_TRACE_LIB) $(CLI_LDLIBS)

# Unit test of the ELF inspection (Criterion). It inspects the two builds
# of tests/e2e/cli_app.cu (tests/module.mk), and the C library it runs on
# (the symbol lookup, against dlsym).
$(B)/tests/test_cli_elf: $(B)/obj/cli/tests/test_cli_elf.o $(B)/obj/cli/elfscan.o | $(CLI_APP_BINS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcriterion -ldl

# gpuphase-agent (`gpuphase agent` execs it): the Prometheus sidecar. A
# program of its own so that only it links the report library and
# libmicrohttpd (Debian's libmicrohttpd-dev, scripts/deps.sh core); the
# control socket's checks and exchange are control.c's, shared with trigger.
AGENT_SRCS := cli/agent.c cli/agent_procs.c cli/agent_reduce.c cli/agent_state.c cli/agent_metrics.c cli/control.c
AGENT_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(AGENT_SRCS))
$(B)/bin/gpuphase-agent: $(AGENT_OBJS) $(REPORT_LIB) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lmicrohttpd $(REPORT_LIBS) $(GP_TRACE_LIBS)

ALL_TARGETS += $(B)/bin/gpuphase $(B)/bin/gpuphase-agent $(B)/tests/test_cli_elf
TESTS       += $(B)/tests/test_cli_elf
.SECONDARY: $(B)/obj/cli/tests/test_cli_elf.o

# make cross-aarch64: the aarch64 code of `gpuphase attach` (cli/ptcall.c,
# with attach.c, target.c and elfscan.c around it) and the library side it
# drives (GOT and export patching, hooks), compiled with Debian's aarch64
# cross compiler — not linked (no aarch64 lz4/libunwind here), not run (no
# aarch64 machine). The compiler comes from `scripts/deps.sh cross-aarch64`
# (optional: make test does not need it). Each object is checked to be
# AArch64 code.
CROSS_AARCH64_CC   ?= aarch64-linux-gnu-gcc
CROSS_AARCH64_SRCS := cli/attach.c cli/ptcall.c cli/target.c cli/elfscan.c cli/report.c cli/trigger.c libgpuphase/attach_session.c libgpuphase/hooks.c libgpuphase/resolve.c \
                      libgpuphase/lib.c
CROSS_AARCH64_OBJS := $(patsubst %.c,$(B)/cross-aarch64/%.o,$(CROSS_AARCH64_SRCS))
$(B)/cross-aarch64/.deps-ok: scripts/deps.sh
	@mkdir -p $(dir $@)
	@bash scripts/deps.sh cross-aarch64
	@touch $@
$(B)/cross-aarch64/%.o: %.c | $(B)/cross-aarch64/.deps-ok
	@mkdir -p $(dir $@)
	$(CROSS_AARCH64_CC) $(CPPFLAGS) $(CSTD) $(WARN) $(OPT) -fPIC -pthread -fvisibility=hidden -c $< -o $@
	@readelf -h $@ | grep -q 'Machine:.*AArch64' || { echo "$@: not AArch64 code" >&2; exit 1; }
.PHONY: cross-aarch64
cross-aarch64: $(CROSS_AARCH64_OBJS)
	@echo "cross-aarch64: $(words $(CROSS_AARCH64_OBJS)) objects compiled for aarch64 (not linked, not run)"
