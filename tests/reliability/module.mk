# tests/reliability/module.mk — the reliability and host-safety suite
# (docs/reliability.md): the fault-injection test of the collector writer, the
# host program the shell tests run under the preload, and the shell tests.
#
# Fault injection lives in test builds only: collector/writer.c is compiled a
# second time with -DGP_FAULT_INJECTION into this folder's objects and linked
# into test_rel_faults; libgpcollector.a and libgpuphase.so never contain it.

REL_DIR      := $(B)/obj/tests/reliability
REL_FI_OBJS  := $(filter-out $(B)/obj/collector/writer.o,$(GP_COLLECTOR_OBJS)) $(REL_DIR)/fi_writer.o
REL_PROG     := $(B)/tests/rel/rel_prog

$(REL_DIR)/fi_writer.o: collector/writer.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DGP_FAULT_INJECTION $(CFLAGS) -MMD -MP -c $< -o $@

# Under TSan, Criterion cannot start: the collector's stand-in runner
# (tests/common/tcrit.h, -DGP_TEST_MINI) runs the same tests.
ifeq ($(SAN),tsan)
$(REL_DIR)/test_rel_faults.o: CPPFLAGS += -DGP_TEST_MINI
REL_TEST_LIBS :=
else
REL_TEST_LIBS := -lcriterion
endif

$(B)/tests/test_rel_faults: $(REL_DIR)/test_rel_faults.o $(REL_FI_OBJS) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REL_TEST_LIBS) $(GP_COLLECTOR_LIBS)

# Uninstrumented like the examples (under SAN=asan the tests preload the
# sanitizer runtime before the instrumented libgpuphase.so).
$(REL_PROG): tests/reliability/rel_prog.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(CUDA_HOME)/include -pthread -o $@ $< \
	  -L$(CUDA_LIBDIR) -lcudart

REL_SH_TESTS := tests/reliability/test_rel_host.sh tests/reliability/test_rel_env.sh \
                tests/reliability/test_rel_path.sh tests/reliability/test_rel_crash.sh \
                tests/reliability/test_rel_procs.sh tests/reliability/test_rel_badinput.sh \
                tests/reliability/test_rel_load.sh tests/reliability/test_rel_descriptors.sh \
                tests/reliability/test_rel_startup.sh

# dlclose case: a plugin using cudart and a host with no CUDA dependency.
$(B)/tests/rel/librel_dl.so: tests/reliability/rel_dl.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -shared -fPIC -I$(CUDA_HOME)/include -o $@ $< \
	  -L$(CUDA_LIBDIR) -lcudart
$(B)/tests/rel/rel_dlmain: tests/reliability/rel_dlmain.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -ldl

ALL_TARGETS += $(B)/tests/test_rel_faults $(REL_PROG) $(B)/tests/rel/librel_dl.so $(B)/tests/rel/rel_dlmain
TESTS       += $(B)/tests/test_rel_faults $(wildcard $(REL_SH_TESTS))
# Under TSan also the shell tests where the library's threads race the
# program's (docs/reliability.md, Sanitizers): any TSan report fails them.
TSAN_TESTS  += $(B)/tests/test_rel_faults tests/reliability/test_rel_host.sh tests/reliability/test_rel_crash.sh \
               tests/reliability/test_rel_procs.sh tests/reliability/test_rel_load.sh tests/reliability/test_rel_startup.sh
.SECONDARY: $(REL_DIR)/test_rel_faults.o

# make check-faults: only this suite (after the parts it runs are built).
.PHONY: check-faults
check-faults: all
	@$(TEST_ENV) bash tests/run-tests.sh $(B)/tests/test_rel_faults $(wildcard $(REL_SH_TESTS))

# rel_prog with an absolute RUNPATH to simcuda, for the AT_SECURE test (a
# set-user-ID program ignores LD_LIBRARY_PATH).
$(REL_PROG)_rpath: tests/reliability/rel_prog.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(CUDA_HOME)/include -pthread -o $@ $< \
	  -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(abspath $(B))/simcuda
ALL_TARGETS += $(REL_PROG)_rpath

# make bench: the 50M-record long run (window + size cap, RSS flat after warm-up).
BENCHES += tests/reliability/bench_rel_long.sh
