# tests/gpu/module.mk — the real-GPU validation kit (tests/gpu/run.sh,
# docs/gpu-validation.md): builds its extra CUDA programs (examples/gpu/) for
# the --sim run and lists the kit's two shell tests in TESTS:
#   test_gpukit_selftest.sh  every check of tests/gpu/gpukit.py can fail
#   test_gpu_kit_sim.sh      tests/gpu/run.sh --sim against simcuda
# On a GPU machine run.sh builds its own copies with -arch=native.
# --export-dynamic: simcuda finds kernels' host bodies (simcuda_kernel_*) by dlsym.
GPU_KIT_NVCCFLAGS = -O2 -g -Xcompiler -Wall,-Wextra,-Werror -Xlinker -rpath=$(CUDA_LIBDIR) -Xlinker --export-dynamic
GPU_KIT_PROGS = $(B)/examples/gpu/launch_storm $(B)/examples/gpu/launch_storm_static \
                $(B)/examples/gpu/gemm_cublas $(B)/examples/gpu/nvtx_ranges $(B)/examples/gpu/split_waits

$(B)/examples/gpu/launch_storm: examples/gpu/launch_storm.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $<

# The same program with cudart linked in: only CUDA_INJECTION64_PATH sees it.
$(B)/examples/gpu/launch_storm_static: examples/gpu/launch_storm.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart static -o $@ $<

$(B)/examples/gpu/gemm_cublas: examples/gpu/gemm_cublas.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $< -lcublas

$(B)/examples/gpu/nvtx_ranges: examples/gpu/nvtx_ranges.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $< -ldl

# The host waits the kit times against the report's sync (split/*).
$(B)/examples/gpu/split_waits: examples/gpu/split_waits.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $<

ALL_TARGETS += $(GPU_KIT_PROGS)
TESTS       += tests/gpu/test_gpukit_selftest.sh tests/gpu/test_gpu_kit_sim.sh
