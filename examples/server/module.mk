# examples/server/module.mk — the example inference server (nvcc -cudart
# shared, like the other examples) and its load client (plain C). Outputs
# $(B)/examples/server and $(B)/examples/server_client; the cost model stays
# in examples/server/server.simcuda. Not in EXAMPLES: the server needs a
# socket path and a client, so it is not a run-once example.

$(B)/examples/server: examples/server/server.cu examples/server/proto.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O2 -Xcompiler -Wall,-Wextra,-Werror -Iexamples/server -o $@ $<

$(B)/examples/server_client: $(B)/obj/examples/server/client.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

ALL_TARGETS += $(B)/examples/server $(B)/examples/server_client
