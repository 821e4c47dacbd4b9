# libgpuphase/module.mk — the capture library $(B)/lib/libgpuphase.so
# (LD_PRELOAD and CUDA_INJECTION64_PATH), its tests and its benchmark.
#
# Exports: the hooks of hooks.def, InitializeInjection, InitializeInjectionNvtx2
# (default visibility, unversioned); everything else is hidden. No DT_NEEDED on
# libcudart or libcupti: both are found at run time (resolve.c, cupti.c).

GP_LIB_SRCS := libgpuphase/config.c libgpuphase/log.c libgpuphase/lib.c libgpuphase/hooks.c \
               libgpuphase/resolve.c libgpuphase/cupti.c libgpuphase/window.c libgpuphase/stacks.c \
               libgpuphase/nvtx.c
GP_LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(GP_LIB_SRCS))
GP_LIB_SO   := $(B)/lib/libgpuphase.so
GP_LIB_GEN  := $(B)/gen/libgpuphase

$(GP_LIB_OBJS): CFLAGS += -fvisibility=hidden
$(GP_LIB_OBJS): CPPFLAGS += -I$(GP_LIB_GEN)
$(B)/obj/libgpuphase/hooks.o: libgpuphase/hooks.def
$(B)/obj/libgpuphase/cupti.o: $(GP_LIB_GEN)/gp_cbids.h

$(GP_LIB_GEN)/gp_cbids.h: libgpuphase/gen-cbids.sh $(CUDA_HOME)/include/cupti_runtime_cbid.h \
                          $(CUDA_HOME)/include/cupti_driver_cbid.h
	@mkdir -p $(dir $@)
	bash libgpuphase/gen-cbids.sh $(CUDA_HOME)/include > $@.tmp && mv $@.tmp $@

$(GP_LIB_SO): $(GP_LIB_OBJS) $(GP_COLLECTOR_LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,--exclude-libs,ALL -Wl,-z,nodelete -Wl,-soname,libgpuphase.so \
	  -o $@ $(GP_LIB_OBJS) $(GP_COLLECTOR_LIB) -lunwind -ldl $(GP_COLLECTOR_LIBS)

ALL_TARGETS += $(GP_LIB_SO)
