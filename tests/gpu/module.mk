# tests/gpu/module.mk — the real-GPU validation kit (tests/gpu/run.sh,
# docs/gpu-validation.md): builds its extra CUDA programs (examples/gpu/) for
# the --sim run and lists the kit's shell tests in TESTS:
#   test_gpukit_selftest.sh  every check of tests/gpu/gpukit.py can fail
#   test_gpu_kit_sim.sh      tests/gpu/run.sh --sim against simcuda
#   test_gpu_counters_sim.sh tests/gpu/counters_kit.sh --sim (end of file)
# On a GPU machine run.sh builds its own copies with -arch=native.
# --export-dynamic: simcuda finds kernels' host bodies (simcuda_kernel_*) by dlsym.
GPU_KIT_NVCCFLAGS = -O2 -g -Xcompiler -Wall,-Wextra,-Werror -Xlinker -rpath=$(CUDA_LIBDIR) -Xlinker --export-dynamic
GPU_KIT_PROGS = $(B)/examples/gpu/launch_storm $(B)/examples/gpu/launch_storm_static \
                $(B)/examples/gpu/gemm_cublas $(B)/examples/gpu/nvtx_ranges $(B)/examples/gpu/split_waits \
                $(B)/examples/gpu/cuda_threads

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

# Threads before and after CUDA's initialisation (cuda/threads).
$(B)/examples/gpu/cuda_threads: examples/gpu/cuda_threads.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $<

ALL_TARGETS += $(GPU_KIT_PROGS)
TESTS       += tests/gpu/test_gpukit_selftest.sh tests/gpu/test_gpu_kit_sim.sh

# The hardware-counters check (tests/gpu/counters_kit.sh, on its own): a copy
# kernel of known bytes and an FMA loop of known FLOPs, rehearsed on simcuda.
$(B)/examples/gpu/counters_kernels: examples/gpu/counters_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GPU_KIT_NVCCFLAGS) -cudart shared -o $@ $<
ALL_TARGETS += $(B)/examples/gpu/counters_kernels
TESTS       += tests/gpu/test_gpu_counters_sim.sh
