# examples/module.mk — CUDA C example programs (examples/README.md), built
# with nvcc -cudart shared so they run on simcuda (simcuda/) or a GPU.
# -Xlinker -E exports the simcuda_kernel_* host twins to the simulator.
# Cost models stay in examples/<name>.simcuda.

EXAMPLE_NAMES := compute_bound launch_bound sync_bound graph_replay train_loop
EXAMPLE_BINS  := $(addprefix $(B)/examples/,$(EXAMPLE_NAMES))
EXAMPLE_NVCCFLAGS = -O2 -cudart shared -Xcompiler -Wall,-Wextra,-Werror -Xlinker -E

$(EXAMPLE_BINS): $(B)/examples/%: examples/%.cu examples/ex_common.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(EXAMPLE_NVCCFLAGS) -o $@ $<

EXAMPLES    += $(EXAMPLE_BINS)
ALL_TARGETS += $(EXAMPLE_BINS)
