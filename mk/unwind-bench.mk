# SPDX-License-Identifier: GPL-2.0-only
# bench/unwind.sh's workload: a pipe ping-pong built as distributions build, optimised
# and without frame pointers, so that only an unwinder reading .eh_frame walks it.
UNWIND_BENCH := $(BUILD)/bench/pipe_fpless

$(UNWIND_BENCH): bench/pipe_fpless.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread

bench-build: $(UNWIND_BENCH)
bench: $(UNWIND_BENCH)
