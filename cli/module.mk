# cli/module.mk — the `gpuphase` command ($(B)/bin/gpuphase), its tests, and
# the two builds of the small CUDA test program they run (shared and static
# cudart). Included from the top Makefile.

CLI_SRCS := cli/gpuphase.c cli/record.c cli/trigger.c cli/report.c cli/help.c cli/locate.c cli/elfscan.c
# The library's own GPUPHASE_* parser (pure): `record` checks its options
# with it, so the command and the library read one grammar.
CLI_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRCS)) $(GP_LIB_CONFIG_OBJ)
CLI_LDLIBS = $(GP_COLLECTOR_LIBS)

$(B)/bin/gpuphase: $(CLI_OBJS) $(B)/lib/libgpcollector.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(B)/lib/libgpcollector.a $(CLI_LDLIBS)

# The CUDA test program, built both ways (nvcc is slow: only these two).
$(B)/tests/cli_app_shared: tests/e2e/cli_app.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O2 -Xcompiler -Wall,-Wextra,-Werror -o $@ $<
$(B)/tests/cli_app_static: tests/e2e/cli_app.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart static -O2 -Xcompiler -Wall,-Wextra,-Werror -o $@ $<

# Unit test of the ELF inspection (Criterion).
$(B)/tests/test_cli_elf: $(B)/obj/tests/e2e/test_cli_elf.o $(B)/obj/cli/elfscan.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion

CLI_TEST_DEPS := $(B)/tests/cli_app_shared $(B)/tests/cli_app_static
$(B)/tests/test_cli_elf: | $(CLI_TEST_DEPS)

ALL_TARGETS += $(B)/bin/gpuphase $(B)/tests/test_cli_elf $(CLI_TEST_DEPS)
TESTS += $(B)/tests/test_cli_elf tests/e2e/test_cli_help.sh tests/e2e/test_cli_record.sh tests/e2e/test_cli_grammar.sh \
	 tests/e2e/test_cli_static.sh tests/e2e/test_cli_trigger.sh tests/e2e/test_cli_install.sh
