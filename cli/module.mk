# cli/module.mk — the `gpuphase` command ($(B)/bin/gpuphase) and its unit
# test (cli/tests/). The end-to-end tests of the command (tests/e2e/test_cli_*)
# and the CUDA program they run are built by tests/module.mk, which is
# included before this file. Included from the top Makefile.

CLI_SRCS := cli/gpuphase.c cli/record.c cli/trigger.c cli/attach.c cli/report.c cli/help.c cli/locate.c cli/elfscan.c
# The library's own GPUPHASE_* parser (pure): `record` checks its options
# with it, so the command and the library read one grammar.
CLI_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRCS)) $(GP_LIB_CONFIG_OBJ)
CLI_LDLIBS = $(GP_COLLECTOR_LIBS)

$(B)/bin/gpuphase: $(CLI_OBJS) $(B)/lib/libgpcollector.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(B)/lib/libgpcollector.a $(CLI_LDLIBS)

# Unit test of the ELF inspection (Criterion). It inspects the two builds
# of tests/e2e/cli_app.cu (tests/module.mk).
$(B)/tests/test_cli_elf: $(B)/obj/cli/tests/test_cli_elf.o $(B)/obj/cli/elfscan.o | $(CLI_APP_BINS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -lcriterion

ALL_TARGETS += $(B)/bin/gpuphase $(B)/tests/test_cli_elf
TESTS       += $(B)/tests/test_cli_elf
.SECONDARY: $(B)/obj/cli/tests/test_cli_elf.o
