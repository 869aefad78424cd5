# SPDX-License-Identifier: GPL-2.0-only
# The unwind table builder's benchmark (bench/cfi-tables.sh): a driver linked
# against liboffcpu, built with the benchmark programs.

$(BUILD)/bench/cfi-tables: bench/cfi_tables.c $(BUILD)/liboffcpu.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/liboffcpu.a $(LDLIBS)

bench-build bench bench-tools: $(BUILD)/bench/cfi-tables
