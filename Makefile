# SPDX-License-Identifier: GPL-2.0-only
# The one build of offcpu. `make V=1` shows full commands.
#
# Sources are found by wildcard so that adding a module never needs an edit here:
# every src/*/*.c is part of liboffcpu.a, src/main.c and src/cmd_*.c make the binary,
# each tests/unit/test_*.c is one unit-test program linked against liboffcpu.a.

PREFIX    ?= /usr/local
DESTDIR   ?=
# The service's unit and config (share/offcpu.service, share/offcpu.conf).
# systemd reads units from /usr/local/lib/systemd/system as well as
# /usr/lib/systemd/system, so $(PREFIX)/lib/systemd/system suits both.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
BUILD     ?= build
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
PKGS      := libbpf libdw libelf json-c zlib libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl is opened when a push starts (src/push/pyroscope.c): not linked.
PKG_LIBS  := $(shell pkg-config --libs $(filter-out libcurl,$(PKGS)) 2>/dev/null || echo -lbpf -ldw -lelf -ljson-c -lz)

WARN      := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow \
             -Wstrict-prototypes -Wformat=2 -Wvla
CFLAGS    ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -DOFFCPU_VERSION='"$(VERSION)"' \
              -DOFFCPU_DATADIR='"$(PREFIX)/share/offcpu"' \
              -Isrc -I$(BUILD) $(PKG_CFLAGS) -MMD -MP
LDLIBS    := $(PKG_LIBS) -lpthread

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

LIB_SRCS  := $(filter-out %.bpf.c,$(sort $(wildcard src/*/*.c)))
CMD_SRCS  := src/main.c $(sort $(wildcard src/cmd_*.c))
BPF_SRCS  := $(sort $(wildcard src/bpf/*.bpf.c))
BPF_OBJS  := $(BPF_SRCS:src/bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
SKELS     := $(BPF_SRCS:src/bpf/%.bpf.c=$(BUILD)/%.skel.h)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
WORK_SRCS := $(sort $(wildcard tests/workloads/*.c) $(wildcard tests/fakes/*.c))
WORK_BINS := $(WORK_SRCS:tests/%.c=$(BUILD)/tests/%)
BIN       := $(BUILD)/offcpu

# Keep the BPF object between runs: the skeleton is generated from it.
.SECONDARY: $(BPF_OBJS)
# A recipe that fails leaves no half-written target for the next make to trust.
.DELETE_ON_ERROR:

.PHONY: all check unit e2e demo install uninstall clean format format-check deps bench \
	tests-build FORCE
all: $(BIN)

deps:
	$(Q)scripts/install-deps.sh

# The BPF side compiles from src/bpf/kernel_types.h, the few kernel types it
# reads (CO-RE relocates them at load): the build reads no BTF of its own host.
BPF_HDRS  := $(wildcard src/bpf/*.h)
BPF_CFLAGS := -g -O2 -target bpf -Isrc/bpf

$(BUILD)/bpf/%.bpf.o: src/bpf/%.bpf.c $(BPF_HDRS)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -D__TARGET_ARCH_$(ARCH) -c $< -o $@

# The kernel side must build for every architecture it names (compile only).
.PHONY: bpf-arm64
bpf-arm64: $(BPF_SRCS) $(BPF_HDRS)
	$(call msg,BPF,arm64)
	$(Q)mkdir -p $(BUILD)/bpf-arm64
	$(Q)for f in $(BPF_SRCS); do \
		$(CLANG) $(BPF_CFLAGS) -D__TARGET_ARCH_arm64 -c $$f \
			-o $(BUILD)/bpf-arm64/$$(basename $$f .c).o || exit 1; done

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# The bpftrace lane's script, share/offcpu.bt, is compiled into the binary so an
# installed offcpu never runs a script other than the one it was built with.
# (mawk's gsub takes "\\\\&" as a backslash and the match: one gsub escapes both.)
define embed_bt
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)awk 'BEGIN { print "static const char offcpu_bt_script[] =" } \
		{ gsub(/["\\]/, "\\\\&"); print "\t\"" $$0 "\\n\"" } \
		END { print ";" }' $< > $@.tmp && mv $@.tmp $@
endef
$(BUILD)/offcpu_bt.h: share/offcpu.bt
	$(embed_bt)

# Text assets the binary carries (the flame graph's style sheet and script):
# share/NAME.EXT becomes $(BUILD)/share/NAME.EXT.h defining the C string NAME_EXT.
# A first line holding the SPDX tag stays out, so the output carries only the asset.
# Each object that includes one names it, so no other object waits for it.
define embed_asset
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)awk -v name='$(subst -,_,$(subst .,_,$(notdir $<)))' \
		'BEGIN { print "static const char " name "[] =" } \
		NR == 1 && /SPDX-License-Identifier/ { next } \
		{ gsub(/["\\]/, "\\\\&"); print "\t\"" $$0 "\\n\"" } \
		END { print ";" }' $< > $@.tmp && mv $@.tmp $@
endef
FLAMEGRAPH_ASSETS := share/flamegraph.css.h share/flamegraph.js.h

$(BUILD)/share/%.h: share/%
	$(embed_asset)

$(BUILD)/src/output/flamegraph.o: $(FLAMEGRAPH_ASSETS:%=$(BUILD)/%)
# The shipped reason rules (docs/reasons.md), built in and installed for users to copy.
$(BUILD)/src/analyze/reasons.o: $(BUILD)/share/reasons.rules.h

$(BUILD)/src/%.o: src/%.c | $(BUILD)/offcpu_bt.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# Only the sources that include the skeleton wait for it (and clang, bpftool).
SKEL_USERS := $(shell grep -l '\.skel\.h"' $(LIB_SRCS) $(CMD_SRCS) /dev/null)
$(SKEL_USERS:%.c=$(BUILD)/%.o): | $(SKELS)

$(BUILD)/liboffcpu.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(CMD_OBJS) $(BUILD)/liboffcpu.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/liboffcpu.a $(LDLIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(BUILD)/liboffcpu.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/liboffcpu.a $(LDLIBS)

# Workloads are built without optimisation surprises and with frame pointers, so
# their user stacks are walkable and their blocking is where the source says.
$(BUILD)/tests/%: tests/%.c $(wildcard tests/workloads/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -Wall -D_GNU_SOURCE -o $@ $< -lpthread

# Except fpless, built as distributions build: optimised and without frame pointers,
# the ground truth for the .eh_frame unwinder (tests/e2e/unwind.sh).
$(BUILD)/tests/workloads/fpless: tests/workloads/fpless.c tests/workloads/workload.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -D_GNU_SOURCE -o $@ $< -lpthread

tests-build: $(BIN) $(TEST_BINS) $(WORK_BINS)

# Each unit program runs on its own into a log (in parallel under make -j);
# tests/run.sh counts the logs. TESTS=SUBSTRING picks programs, as for run.sh.
UNIT_PICK := $(if $(TESTS),$(foreach t,$(TEST_BINS),$(if $(findstring $(TESTS),$(notdir $(t))),$(t))),$(TEST_BINS))
UNIT_LOGS := $(UNIT_PICK:=.log)

$(BUILD)/tests/test_%.log: $(BUILD)/tests/test_% FORCE
	$(call msg,TEST,$<)
	$(Q)tests/run.sh --one $(BUILD) $< > $@

FORCE:

unit: $(UNIT_LOGS)
	$(Q)tests/run.sh --logs $(UNIT_LOGS)

e2e: $(BIN) $(WORK_BINS)
	$(Q)tests/run.sh --e2e $(BUILD)

# The whole suite; the last line is `N passed, N failed[, N skipped]`. The
# unit programs run first, in parallel; the end-to-end tests after, one by one.
check: tests-build $(UNIT_LOGS)
	$(Q)UNIT_LOGS="$(UNIT_LOGS)" tests/run.sh --all $(BUILD)

demo: $(BIN) $(WORK_BINS)
	$(Q)scripts/demo.sh $(BUILD)

bench: $(BIN) $(WORK_BINS)
	$(Q)bench/run.sh $(BUILD)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/offcpu \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/offcpu
	install -m 0644 share/*.bt $(DESTDIR)$(PREFIX)/share/offcpu/
	install -m 0644 share/reasons.rules $(DESTDIR)$(PREFIX)/share/offcpu/
	install -m 0644 docs/offcpu.1 $(DESTDIR)$(PREFIX)/share/man/man1/offcpu.1
	$(Q)$(MAKE) --no-print-directory install-service

# The unit names the installed binary and config; an existing config is the
# admin's and is never replaced (the shipped one goes beside it as .dist).
.PHONY: install-service
install-service:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/offcpu
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		share/offcpu.service > $(DESTDIR)$(SYSTEMDUNITDIR)/offcpu.service.tmp
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/offcpu.service.tmp
	mv $(DESTDIR)$(SYSTEMDUNITDIR)/offcpu.service.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/offcpu.service
	if [ -e $(DESTDIR)$(SYSCONFDIR)/offcpu/offcpu.conf ]; then \
		install -m 0644 share/offcpu.conf $(DESTDIR)$(SYSCONFDIR)/offcpu/offcpu.conf.dist; \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/offcpu/offcpu.conf; the shipped one is offcpu.conf.dist"; \
	else \
		install -m 0644 share/offcpu.conf $(DESTDIR)$(SYSCONFDIR)/offcpu/offcpu.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/offcpu $(DESTDIR)$(PREFIX)/share/man/man1/offcpu.1
	rm -rf $(DESTDIR)$(PREFIX)/share/offcpu
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/offcpu.service $(DESTDIR)$(SYSCONFDIR)/offcpu/offcpu.conf.dist

FORMAT_FILES := $(LIB_SRCS) $(CMD_SRCS) $(BPF_SRCS) $(wildcard src/*/*.h src/*.h) \
		$(TEST_SRCS) $(WORK_SRCS)

format:
	clang-format -i $(FORMAT_FILES)

# Changes nothing: fails, naming the lines, when a file is not as `make format` leaves it.
format-check:
	$(Q)clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(TEST_BINS:=.d)

# Fragments for optional targets (fuzzing, sanitizers, benchmarks) live in mk/.
-include $(sort $(wildcard mk/*.mk))
