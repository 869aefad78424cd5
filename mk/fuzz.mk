# SPDX-License-Identifier: GPL-2.0-only
# Fuzzing and sanitizers (docs/fuzzing.md).
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ=NAME]   build the libFuzzer harnesses in
#                     tests/fuzz/ and run each for FUZZ_SECONDS; the last line is
#                     "N passed, N failed, N skipped"
#   make fuzz-build   only build them (into $(FUZZ_BUILD))
#   make check-asan   the unit tests under ASan+UBSan, built in build-asan/
#
# The harnesses link the project's sources compiled with the fuzzer's
# instrumentation, in their own build dir. Sources that need a BPF skeleton
# are left out: no harness reaches them.
# A harness whose sources have not landed yet says so in a "fuzz-needs:" line
# and is reported as skipped.

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -g -O1 $(FUZZ_SAN) -D_GNU_SOURCE -DOFFCPU_VERSION='"$(VERSION)"' \
                -DOFFCPU_DATADIR='"$(PREFIX)/share/offcpu"' -Isrc -I$(FUZZ_BUILD) \
                $(PKG_CFLAGS) -MMD -MP
# Small buffers and segments, so small inputs cross the boundaries where big
# inputs would (and each run allocates kilobytes, not megabytes).
FUZZ_SMALL   := -DSEG_SHIFT=3 -DARENA_BLOCK=512 -DLINES_CHUNK=256u

FUZZ_LIB_SRCS := $(filter-out src/collect/native.c $(shell grep -l -e '\.skel\.h"' \
                   $(LIB_SRCS) /dev/null),$(LIB_SRCS))
FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_ALL      := $(sort $(wildcard tests/fuzz/fuzz_*.c))
# A harness is buildable when every path on its "fuzz-needs:" line exists.
FUZZ_SRCS     := $(shell for f in $(FUZZ_ALL); do ok=1; \
                   for n in $$(sed -n 's/.*fuzz-needs: *//p' $$f); do \
                   [ -e $$n ] || ok=0; done; [ $$ok = 1 ] && echo $$f; done)
FUZZ_BINS     := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_MISSING  := $(filter-out $(FUZZ_SRCS),$(FUZZ_ALL))

.PHONY: fuzz fuzz-build fuzz-bins check-asan fuzz-runtime

# clang's sanitizer and libFuzzer runtimes are a package of their own
# (libclang-rt-N-dev for clang N, only recommended by clang): say so instead of a link error.
fuzz-runtime:
	$(Q)rt=$$($(FUZZ_CC) -print-runtime-dir)/libclang_rt.fuzzer-$$(uname -m).a; \
	[ -e "$$rt" ] || { echo "offcpu: $$rt is missing; install libclang-rt-$$($(FUZZ_CC) -dumpversion | cut -d. -f1)-dev" \
		"(scripts/install-deps.sh)" >&2; exit 1; }

$(FUZZ_BUILD)/src/%.o: src/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SMALL) -fsanitize=fuzzer-no-link -c $< -o $@

# The bpftrace lane's script (the collector table names its row) and the flame
# graph's style sheet and script, embedded as in the main build.
$(FUZZ_BUILD)/offcpu_bt.h: share/offcpu.bt
	$(embed_bt)

$(FUZZ_BUILD)/src/collect/bpftrace.o: $(FUZZ_BUILD)/offcpu_bt.h

$(FUZZ_BUILD)/share/%.h: share/%
	$(embed_asset)

$(FUZZ_BUILD)/src/output/flamegraph.o: $(FLAMEGRAPH_ASSETS:%=$(FUZZ_BUILD)/%)
$(FUZZ_BUILD)/src/analyze/reasons.o: $(FUZZ_BUILD)/share/reasons.rules.h

$(FUZZ_BUILD)/libfuzz.a: $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_BUILD)/libfuzz.a
	$(call msg,CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz -o $@ $< \
		$(FUZZ_BUILD)/libfuzz.a $(LDLIBS)

# The list of harnesses that could not be built, for the runner's skip lines.
$(FUZZ_BUILD)/skipped: FORCE_FUZZ
	$(Q)mkdir -p $(@D)
	$(Q)printf '%s\n' $(FUZZ_MISSING:tests/fuzz/%.c=%) > $@

.PHONY: FORCE_FUZZ
FORCE_FUZZ:

fuzz-build: fuzz-runtime
	$(Q)$(MAKE) --no-print-directory fuzz-bins

fuzz-bins: $(FUZZ_BINS) $(FUZZ_BUILD)/skipped
	@:

fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ)

# Every unit test under AddressSanitizer and UndefinedBehaviorSanitizer, any
# report fatal; a sub-make so the objects never mix with the normal build.
check-asan: fuzz-runtime
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan CC=$(FUZZ_CC) \
		CFLAGS='-O1 -g $(FUZZ_SAN)' build-asan/liboffcpu.a \
		$(TEST_SRCS:tests/unit/%.c=build-asan/tests/%)
	@# test_native checks user stacks walked through the test binary's frame
	@# pointers; ASan's instrumented frames are not those, so it runs in `make check`.
	$(Q)TESTS_EXCLUDE=test_native tests/run.sh --unit build-asan

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_BINS:=.d)
