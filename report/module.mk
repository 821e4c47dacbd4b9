# report/module.mk — gpuphase-report, the offline analyser, and its tests.
REPORT_CORE_SRCS := report/map.c report/stats.c report/analysis.c report/rep.c report/verdict.c
REPORT_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_CORE_SRCS))

$(B)/lib/libgpreport.a: $(REPORT_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

REPORT_LIBS = -lstdc++ -lm

$(B)/tests/test_report_core: $(B)/obj/report/test_report_core.o $(B)/lib/libgpreport.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion $(REPORT_LIBS)

ALL_TARGETS += $(B)/lib/libgpreport.a $(B)/tests/test_report_core
TESTS       += $(B)/tests/test_report_core
