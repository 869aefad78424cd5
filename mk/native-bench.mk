# SPDX-License-Identifier: GPL-2.0-only
# Benchmark helpers for the native collector (include from the top Makefile or mk/).
# build/bench/native-attach runs the built-in collector on its own; bench/overhead.sh uses it.

$(BUILD)/bench/native-attach: bench/native_attach.c $(BUILD)/liboffcpu.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/liboffcpu.a $(LDLIBS)

# The floor of bench/overhead.sh: an empty program on sched_switch (libbpf only).
$(BUILD)/bench/empty-switch: bench/empty_switch.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -lbpf

bench-tools: $(BUILD)/bench/native-attach $(BUILD)/bench/empty-switch
.PHONY: bench-tools
