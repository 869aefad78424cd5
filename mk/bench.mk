# SPDX-License-Identifier: GPL-2.0-only
# The benchmark suite (bench/, method in bench/README.md). Never part of `make check`.
#
#   make bench                      the whole suite; rewrites BENCHMARKS.md
#   make bench BENCH="postproc"     only some benchmarks (see bench/run.sh --help)
#
# bench/*.c are small single-file programs: the input generator and the workloads
# the collectors are measured on. Optimised (their speed is what is measured) and
# with frame pointers, so every collector can walk their user stacks.
# Listed, not globbed: other bench/*.c (the native collector's driver) link against
# liboffcpu and have their own rules.
BENCH_PROGS := genfolded futex_pingpong lock_contend beacon
BENCH_BINS := $(BENCH_PROGS:%=$(BUILD)/bench/%)

.PHONY: bench-build
bench-build: $(BENCH_BINS)

bench: $(BENCH_BINS)

$(BENCH_BINS): $(BUILD)/bench/%: bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -o $@ $< \
		-lpthread -lm
