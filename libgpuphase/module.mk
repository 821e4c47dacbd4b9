# libgpuphase/module.mk — the capture library $(B)/lib/libgpuphase.so
# (LD_PRELOAD and CUDA_INJECTION64_PATH), its tests and its benchmark.
#
# Exports: the hooks of hooks.def, InitializeInjection, InitializeInjectionNvtx2,
# _exit and _Exit (exitpath.c) (default visibility, unversioned); everything
# else is hidden. No DT_NEEDED on
# libcudart or libcupti: both are found at run time (resolve.c, cupti.c).

GP_LIB_SRCS := libgpuphase/state.c libgpuphase/config.c libgpuphase/log.c libgpuphase/lib.c libgpuphase/hooks.c \
               libgpuphase/resolve.c libgpuphase/cupti.c libgpuphase/window.c libgpuphase/stacks.c \
               libgpuphase/nvtx.c libgpuphase/graphs.c libgpuphase/hostcb.c libgpuphase/hostload.c libgpuphase/pyframes.c \
               libgpuphase/attach_session.c libgpuphase/clocks.c libgpuphase/counters.c libgpuphase/calibrate.c \
               libgpuphase/exitpath.c
GP_LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(GP_LIB_SRCS))
# config.c is pure (gp_config.h): the gpuphase command links it too.
GP_LIB_CONFIG_OBJ := $(B)/obj/libgpuphase/config.o
GP_LIB_SO   := $(B)/lib/libgpuphase.so
GP_LIB_GEN  := $(B)/gen/libgpuphase

$(GP_LIB_OBJS): CFLAGS += -fvisibility=hidden
$(GP_LIB_OBJS): CPPFLAGS += -I$(GP_LIB_GEN)
$(B)/obj/libgpuphase/hooks.o: libgpuphase/hooks.def
$(B)/obj/libgpuphase/cupti.o: $(GP_LIB_GEN)/gp_cbids.h
# cupti_profiler_host.h includes the C++ <string>: simcuda/cshim's empty
# stand-in lets this C file include the real header.
$(B)/obj/libgpuphase/counters.o: CPPFLAGS += -Isimcuda/cshim

$(B)/obj/libgpuphase/calibrate.o: $(GP_LIB_GEN)/gp_calib_fatbin.h

# The calibration's empty kernel (calibrate.c), a fat binary embedded as
# bytes: SASS for the architectures below and PTX for the rest. Without a
# working nvcc the array is empty and the calibration measures no launch.
GP_CALIB_GENCODE := $(foreach a,75 80 86 89 90 100 120,-gencode arch=compute_$(a),code=sm_$(a)) \
                    -gencode arch=compute_75,code=compute_75
$(GP_LIB_GEN)/gp_calib_fatbin.h: libgpuphase/calibrate_kernel.cu
	@mkdir -p $(dir $@)
	{ echo "/* generated from libgpuphase/calibrate_kernel.cu by libgpuphase/module.mk */"; \
	  echo "static const unsigned char gp_calib_fatbin[] __attribute__((aligned(16))) = {"; \
	  if $(NVCC) -fatbin $(GP_CALIB_GENCODE) -o $@.fatbin $< >$@.log 2>&1; then \
	    od -An -v -tx1 $@.fatbin | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  else echo "0 /* nvcc failed: see $@.log */"; fi; \
	  echo "};"; \
	  if [ -s $@.fatbin ]; then echo "#define GP_CALIB_FATBIN_OK 1"; else echo "#define GP_CALIB_FATBIN_OK 0"; fi; \
	} > $@.tmp && mv $@.tmp $@; rm -f $@.fatbin; [ -s $@.log ] || rm -f $@.log

$(GP_LIB_GEN)/gp_cbids.h: libgpuphase/gen-cbids.sh $(CUDA_HOME)/include/cupti_runtime_cbid.h \
                          $(CUDA_HOME)/include/cupti_driver_cbid.h
	@mkdir -p $(dir $@)
	bash libgpuphase/gen-cbids.sh $(CUDA_HOME)/include > $@.tmp && mv $@.tmp $@

$(GP_LIB_SO): $(GP_LIB_OBJS) $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,--exclude-libs,ALL -Wl,-z,nodelete -Wl,-z,defs -Wl,-soname,libgpuphase.so \
	  -o $@ $(GP_LIB_OBJS) $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) -ldl $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(GP_LIB_SO)

# ---- tests ------------------------------------------------------------------
# Helper programs (uninstrumented, like the examples: under SAN=asan the tests
# put $GP_SAN_RUNTIME first in LD_PRELOAD).
GP_LIB_TPROGS := $(B)/tests/lib/lt_prog $(B)/tests/lib/liblt_local.so $(B)/tests/lib/lt_local_main

$(B)/tests/lib/lt_prog: libgpuphase/tests/lt_prog.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -Xlinker -E -o $@ $< -ldl
$(B)/tests/lib/liblt_local.so: libgpuphase/tests/lt_local_lib.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -shared -Xcompiler -fPIC,-Wall,-Wextra,-Werror -o $@ $<
$(B)/tests/lib/lt_local_main: libgpuphase/tests/lt_local_main.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $< -ldl

GP_LIB_TEST_LIBS := $(B)/lib/libsimtruth.a $(GP_TRACE_LIB)

$(B)/tests/test_lib_config: $(B)/obj/libgpuphase/tests/test_lib_config.o $(B)/obj/libgpuphase/config.o \
                            $(GP_LIB_TEST_LIBS) | $(GP_LIB_SO) $(EXAMPLE_BINS) $(SIMCUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcriterion $(GP_TRACE_LIBS)

$(B)/tests/test_lib_e2e: $(B)/obj/libgpuphase/tests/test_lib_e2e.o $(GP_LIB_TEST_LIBS) \
                         | $(GP_LIB_SO) $(GP_LIB_TPROGS) $(EXAMPLE_BINS) $(SIMCUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcriterion $(GP_TRACE_LIBS)

GP_LIB_TESTS := $(B)/tests/test_lib_config $(B)/tests/test_lib_e2e
ALL_TARGETS  += $(GP_LIB_TPROGS) $(GP_LIB_TESTS)
TESTS        += $(GP_LIB_TESTS)
.SECONDARY: $(B)/obj/libgpuphase/tests/test_lib_config.o $(B)/obj/libgpuphase/tests/test_lib_e2e.o

# ---- benchmark -------------------------------------------------------------
$(B)/bench/bench_hooks: libgpuphase/bench/bench_hooks.cu $(B)/obj/libgpuphase/bench/bench_floor.o \
                        $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) | $(GP_LIB_SO) $(SIMCUDA_LIBS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -o $@ $< \
	  $(B)/obj/libgpuphase/bench/bench_floor.o $(GP_COLLECTOR_LIB) $(GP_TRACE_LIB) -llz4 -lpthread -ldl
# nvcc links without the sanitizer runtime, and a sanitized bench measures
# nothing useful: the bench exists in the plain build only.
ifeq ($(SAN),)
BENCHES     += $(B)/bench/bench_hooks libgpuphase/bench/bench_pyframes.sh bench/duty_cycle_cost.sh
ALL_TARGETS += $(B)/bench/bench_hooks
endif
