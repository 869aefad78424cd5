#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# offcpu doctor tells the truth about this host: each verdict is compared with
# what the test finds out independently.
. "$(dirname "$0")/lib.sh"
mount_tracefs
out=$("$OFFCPU_BIN" doctor)
rc=$?
line() { echo "$out" | awk -v n="$1" '$2 == n { print $1 }'; }

t=doctor_native_verdict_matches_privilege
if need_root; then
	[ $rc -eq 0 ] && [ "$(line privilege)" = ok ] && ok $t || fail $t "rc=$rc: $out"
else
	[ $rc -eq 1 ] && [ "$(line privilege)" = FAIL ] && ok $t || fail $t "rc=$rc: $out"
fi

t=doctor_kprobes_verdict_matches_the_kernel
if [ -e /sys/bus/event_source/devices/kprobe ] || [ -e /sys/kernel/tracing/kprobe_events ]; then
	want=ok
else
	want=warn
fi
[ "$(line kprobes)" = $want ] && ok $t || fail $t "kprobes: '$(line kprobes)', expected $want"

t=doctor_bcc_verdict_matches_kernel_headers
if ! command -v offcputime-bpfcc >/dev/null; then
	want=warn
elif [ -d "/lib/modules/$(uname -r)/build" ] || [ -e /sys/kernel/kheaders.tar.xz ]; then
	want=ok
else
	want=warn
fi
got=$(line bcc)
if [ "$got" != $want ]; then
	fail $t "bcc: '$got', expected $want"
elif [ $want = warn ] && ! echo "$out" | grep -q '^warn bcc .*fix: '; then
	fail $t "a warning without a fix"
else
	ok $t
fi

t=doctor_attach_checks_agree_with_bpftrace
if ! need_root || ! command -v bpftrace >/dev/null; then
	skip $t "needs root and bpftrace"
elif timeout 30 bpftrace -e 'tracepoint:sched:sched_switch { exit(); }' >/dev/null 2>&1; then
	[ "$(line raw_tp)" = ok ] && [ "$(line bpftrace)" = ok ] && ok $t || fail $t "$out"
else
	[ "$(line bpftrace)" = warn ] && ok $t || fail $t "bpftrace fails here but doctor says $(line bpftrace)"
fi

t=doctor_unprivileged_says_why_and_fails
if ! need_root || ! id nobody >/dev/null 2>&1; then
	skip $t "needs root to switch to nobody"
else
	o2=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$OFFCPU_BIN" doctor)
	rc2=$?
	if [ $rc2 -eq 1 ] && echo "$o2" | grep -q '^FAIL privilege .*fix: run as root'; then
		ok $t
	else
		fail $t "rc=$rc2: $(echo "$o2" | head -2)"
	fi
fi
t=doctor_tells_frame_pointers_per_binary
# The workloads are built with -fno-omit-frame-pointer; a copy built without is not.
cc -O2 -fomit-frame-pointer -o "$SCRATCH/nofp" "$OFFCPU_ROOT/tests/workloads/nanosleep.c" -lpthread 2>/dev/null
with=$("$OFFCPU_BIN" doctor --binary "$W/nanosleep" | awk '$2 == "frame-ptr" { print $1 }')
without=$("$OFFCPU_BIN" doctor --binary "$SCRATCH/nofp" | awk '$2 == "frame-ptr" { print $1 }')
if [ "$with" = ok ] && [ "$without" = warn ]; then
	ok $t
else
	fail $t "with frame pointers: '$with' (want ok), without: '$without' (want warn)"
fi

# A host without the kernel's BTF, pointed at through OFFCPU_BTF_PATH: doctor
# says the native collector cannot run and why, and record says so too.
t=doctor_without_btf_says_why_native_cannot_run
o3=$(OFFCPU_BTF_PATH="$SCRATCH/no-btf" "$OFFCPU_BIN" doctor)
rc3=$?
if [ $rc3 -eq 1 ] &&
	echo "$o3" | grep -q "^FAIL btf  *$SCRATCH/no-btf: No such file.*fix: the native collector needs the kernel's BTF: .*CONFIG_DEBUG_INFO_BTF" &&
	echo "$o3" | grep -q '^native collector: cannot run here'; then
	ok $t
else
	fail $t "rc=$rc3: $(echo "$o3" | grep -e '^FAIL' -e '^native')"
fi

t=record_without_btf_says_why
if ! need_root; then
	skip $t "needs root"
else
	OFFCPU_BTF_PATH="$SCRATCH/no-btf" "$OFFCPU_BIN" record -o "$SCRATCH/nobtf" -- true \
		>/dev/null 2>&1
	if grep -q "native: the kernel has no BTF ($SCRATCH/no-btf): it needs CONFIG_DEBUG_INFO_BTF" \
		"$SCRATCH/nobtf/offcpu.diagnostics.txt" 2>/dev/null; then
		ok $t
	else
		fail $t "$(cat "$SCRATCH/nobtf/offcpu.diagnostics.txt" 2>&1 | head -3)"
	fi
fi
rm -rf "$SCRATCH"
