#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Complete user stacks without frame pointers (issue #9): offcpu's native
# collector against perf's DWARF unwinding, on tests/workloads/fpless (built
# -O2 -fomit-frame-pointer: threads sleep, wait on a mutex and a condition
# variable, main joins, each through three functions of its own).
#
# The oracle: perf record -e sched:sched_switch --call-graph dwarf,16384 copies
# 16 KiB of stack at every switch and unwinds afterwards. perf runs under
# `offcpu record --`, so both see the very same switches: every blocked
# switch-out of the workload's threads must have the same user frames, root to
# leaf, on both sides (names compared across glibc's aliases, inlined frames only
# where offcpu shows them), each path as often, and offcpu must print no
# `[unwind: ...]` marker and no raw address. The same holds when offcpu attaches
# to the running workload by pid. Then `offcpu diff` of two runs of the workload
# must not see a stack as both gone and new.
. "$(dirname "$0")/lib.sh"
mount_tracefs
PY=/usr/bin/python3
STACKS="$OFFCPU_ROOT/tests/e2e/stacks.py"
FPLESS=$W/fpless
COMMS="fpless sleeper holder locker cvwaiter"

if ! need_root; then
	skip unwind "needs root to load BPF programs"
	exit 0
fi
if [ ! -x "$FPLESS" ]; then
	fail unwind "no $FPLESS; run make tests-build"
	exit 0
fi

# The workload's own functions never set up a frame pointer (mov %rsp,%rbp), so
# a frame-pointer walk cannot pass through them and only unwinding from CFI can.
t=unwind_fpless_has_no_frame_pointers
fp=$(objdump -d --no-show-raw-insn "$FPLESS" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
	fn ~ /^(main|sleeper|holder|locker|cvwaiter)$|_(leaf|mid|top)$/ && /mov +%rsp,%rbp/ { print fn }' |
	sort -u | tr '\n' ' ')
own=$(nm "$FPLESS" | grep -cE ' t (sleeper|holder|locker|cvwait|join)_(leaf|mid|top)$')
if [ -n "$fp" ]; then
	fail $t "functions with a frame pointer: $fp"
elif [ "$own" -ne 15 ]; then
	fail $t "expected 15 *_leaf/_mid/_top functions, nm finds $own (inlined or cloned?)"
else
	ok $t
fi

command -v perf >/dev/null || { skip unwind_perf "no perf (Debian: linux-perf)"; exit 0; }

d=$SCRATCH/fpless
pd=$SCRATCH/perf.data
"$OFFCPU_BIN" record -q -o "$d" -- perf record -q -e sched:sched_switch \
	--call-graph dwarf,16384 -o "$pd" -- "$FPLESS" >"$SCRATCH/record.out" 2>&1
prof=$d/offcpu.profile.txt
if [ ! -s "$prof" ] || [ ! -s "$pd" ]; then
	fail unwind_capture "no profile or perf.data: $(tail -3 "$SCRATCH/record.out")"
	exit 0
fi
ok unwind_capture

# offcpu's own verdict on the binary agrees.
t=unwind_summary_says_no_frame_pointers
v=$(json "$d/offcpu.summary.json" '[.binaries[]? | select(.path | endswith("/fpless")) | .frame_pointers][0]')
if [ "$v" = absent ]; then
	ok $t
else
	fail $t "frame_pointers of fpless in the summary: $v"
fi

F=comm,pid,tid,event,trace,ip,sym,dso
perf script -i "$pd" --no-inline -F $F >"$SCRATCH/perf.noinline" 2>/dev/null
perf script -i "$pd" -F $F >"$SCRATCH/perf.inline" 2>/dev/null
pid=$(awk '$1 == "thread" && $5 == "sleeper" { print $3; exit }' "$prof")
if [ -z "$pid" ]; then
	fail unwind_workload_threads "no thread sleeper in $prof"
	exit 0
fi
# shellcheck disable=SC2086 # COMMS is a list
"$PY" "$STACKS" compare unwind "$prof" "$SCRATCH/perf.noinline" "$SCRATCH/perf.inline" \
	"$pid" $COMMS

# Attached by pid to a running FP-less process: its tables are built at attach.
a=$SCRATCH/attach
"$FPLESS" --wait-start 2>"$a.wl" &
wpid=$!
for _ in $(seq 100); do grep -q "waiting for SIGUSR1" "$a.wl" 2>/dev/null && break; sleep 0.05; done
"$OFFCPU_BIN" record -o "$a" -p $wpid 2>"$a.err" &
rec=$!
for _ in $(seq 200); do grep -q "tracing" "$a.err" 2>/dev/null && break; sleep 0.05; done
# The unwind tables live in the kernel's arrays; the recorder maps them only to
# write rows or for a raw walk (the kernel maps every page at once, resident).
map_kb=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { w = $2 == "rw-s" && $6 == "anon_inode:bpf-map" }
	w && /^Rss:/ { s += $2 } END { print s + 0 }' /proc/$rec/smaps 2>/dev/null)
kill -USR1 $wpid
wait $wpid
kill -INT $rec
wait $rec
t=unwind_tables_not_resident_in_the_recorder
used=$(sed -n 's/.* \([0-9]*\) bytes of budget used.*/\1/p' "$a/offcpu.diagnostics.txt" 2>/dev/null)
if [ -z "$used" ] || [ "$used" -eq 0 ]; then
	fail $t "no unwind table loaded: $(grep 'unwind tables' "$a/offcpu.diagnostics.txt")"
elif [ $((map_kb * 1024)) -lt $((used / 2)) ]; then
	ok $t
else
	fail $t "${map_kb} KiB of writable BPF map mappings resident for $used bytes of tables"
fi
if [ -s "$a/offcpu.profile.txt" ]; then
	"$PY" "$STACKS" check unwind_attach "$a" "$wpid" | grep -v '^#'
else
	fail unwind_attach_capture "no profile: $(tail -n 2 "$a.err" | tr '\n' ' ')"
fi

# Two runs of the same program: the same stacks, whatever ASLR did. The
# first is also checked whole (under perf, perf's child before its exec is
# recorded too, with the stack of an image that is gone when it is named).
for r in 1 2; do
	"$OFFCPU_BIN" record -q -o "$SCRATCH/run$r" -- "$FPLESS" >/dev/null 2>&1
done
d=$SCRATCH/run1
"$OFFCPU_BIN" export -f pprof "$d" -o "$d/offcpu.pb.gz" 2>/dev/null
"$OFFCPU_BIN" export -f speedscope "$d" -o "$d/offcpu.speedscope.json" 2>/dev/null
"$PY" "$STACKS" check unwind_fpless "$d" | grep -v '^#'
if "$OFFCPU_BIN" diff --json --top 100000 "$SCRATCH/run1" "$SCRATCH/run2" >"$SCRATCH/diff.json" 2>"$SCRATCH/diff.err" ||
	[ -s "$SCRATCH/diff.json" ]; then
	"$PY" "$STACKS" diff unwind "$SCRATCH/diff.json"
else
	fail unwind_diff_no_stack_gone_and_new "offcpu diff: $(head -2 "$SCRATCH/diff.err")"
fi

# A library loaded after the capture began (tests/workloads/dlopened: libz,
# without frame pointers, calls back into the program, which sleeps): the
# recorder must read the mappings again and unwind through libz's own table.
# Time spent before that (at most one wait, 10 of its 200 ms) may end at a
# marker; the rest must name the whole path.
t=unwind_library_loaded_after_start
DLOPENED=$W/dlopened
if [ ! -x "$DLOPENED" ]; then
	fail $t "no $DLOPENED; run make tests-build"
else
	d=$SCRATCH/dlopened
	"$OFFCPU_BIN" record -q -o "$d" -- "$DLOPENED" >"$d.out" 2>&1
	whole=$(awk '/;main;through_zlib;inflateBack;lib_wait;/ { s += $NF } END { print s + 0 }' \
		"$d/offcpu.time.txt" 2>/dev/null)
	cut=$(awk '/;lib_wait;/ && !/;main;through_zlib;inflateBack;lib_wait;/ { s += $NF }
		END { print s + 0 }' "$d/offcpu.time.txt" 2>/dev/null)
	if [ "${whole:-0}" -lt 150000 ]; then
		fail $t "$whole us under main;through_zlib;inflateBack;lib_wait (expected about 200000): $(grep lib_wait "$d/offcpu.time.txt" | cut -c1-200 | head -3)"
	elif [ "$cut" -gt 30000 ]; then
		fail $t "$cut us of lib_wait without the whole path"
	else
		ok $t
	fi
fi

# Short-lived children of Debian's own binaries (/bin/sleep: no frame
# pointers), each blocking once soon after its exec and then exiting: its one
# stack must be unwound with the mappings read after the loader mapped libc,
# though the process asked for them within 10 ms of its exec (the BPF side
# holds such a request back) and is gone at the stop. 30 children: before
# the fix, about one in ten ended at "[unwind: maps not loaded]".
t=unwind_short_lived_children
d=$SCRATCH/children
"$OFFCPU_BIN" record -q -o "$d" -- "$PY" -c 'import subprocess
for i in range(30):
    subprocess.run(["/bin/sleep", "0.05"])' >"$d.out" 2>&1
v=$("$PY" - "$d/offcpu.profile.txt" "$OFFCPU_ROOT/tests/e2e" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[2])
from stacks import Profile, complete, norm
p = Profile(sys.argv[1])
n, bad = 0, []
for th, stack, st, count, off in p.rows:
    if p.threads[th][2] != "sleep" or st != "S" or off < 20000000:
        continue
    n += count
    m, names = p.user(stack)
    if m or not complete(names) or not any(norm(x).endswith("nanosleep") for x in names):
        bad.append(f"{m} {';'.join(names)}")
print(n, len(bad), bad[0] if bad else "")
PYEOF
)
read -r n nbad why <<<"$v"
if [ "${n:-0}" -lt 30 ]; then
	fail $t "${n:-0} sleeps of the children recorded, expected 30: $(tail -2 "$d.out")"
elif [ "$nbad" -ne 0 ]; then
	fail $t "$nbad of $n sleeps without their whole stack, e.g. $why"
else
	ok $t
fi

# A process's stacks from before an exec are named with the image it had
# then, not with the one it has at the stop (a wrapper: a shell's last
# command, a version manager's shim). execwait waits 200 ms for a child in
# await_child(), then execs itself (another base) and sleeps 100 ms in
# after_exec(): both stacks named, no raw address. Before the fix the first
# was "[unsymbolized 0x...]" throughout.
t=unwind_stacks_before_an_exec_keep_their_image
d=$SCRATCH/execwait
if ! "$OFFCPU_BIN" record -q -o "$d" -- "$W/execwait" >"$d.out" 2>&1; then
	fail $t "record failed: $(tail -2 "$d.out")"
else
	before=$(awk '/;main;await_child;wait4;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	after=$(awk '/;main;after_exec;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	raw=$(grep -c 'unsymbolized' "$d/offcpu.time.txt")
	if [ "$before" -lt 150000 ]; then
		fail $t "${before} us in await_child's wait (want about 200000): $(head -c 300 "$d/offcpu.time.txt")"
	elif [ "$after" -lt 80000 ]; then
		fail $t "${after} us in after_exec's sleep (want about 100000)"
	elif [ "$raw" -ne 0 ]; then
		fail $t "$raw rows with raw addresses: $(grep -m1 unsymbolized "$d/offcpu.time.txt" | head -c 200)"
	else
		ok $t
	fi
fi

# glibc's __vfork keeps its return address in rdi across the system call
# (its CFI says so): the parent's wait is unwound past it from the saved
# registers, by the BPF side at a switch-out and by user space for a thread
# asleep there when -p attaches (the snapshot's raw copy). Before, both
# stacks ended "[unwind: unsupported CFI in libc.so.6];__vfork".
t=unwind_vfork_parent_reaches_main
d=$SCRATCH/vforkwait
if ! "$OFFCPU_BIN" record -q -o "$d" -- "$W/vforkwait" 0.3 >"$d.out" 2>&1; then
	fail $t "record failed: $(tail -2 "$d.out")"
else
	us=$(awk '/;main;vfork_parent;__vfork;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	if [ "$us" -lt 250000 ]; then
		fail $t "${us} us under main;vfork_parent;__vfork (want about 300000): $(grep -m1 vfork "$d/offcpu.time.txt" | head -c 300)"
	else
		ok $t
	fi
fi
t=unwind_vfork_parent_attached_reaches_main
d=$SCRATCH/vforkwait-p
"$W/vforkwait" 3 &
vpid=$!
sleep 0.5
if ! "$OFFCPU_BIN" record -q -o "$d" -p "$vpid" -d 0.5 >"$d.out" 2>&1; then
	fail $t "record failed: $(tail -2 "$d.out")"
else
	us=$(awk '/;main;vfork_parent;__vfork;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	if [ "$us" -lt 400000 ]; then
		fail $t "${us} us under main;vfork_parent;__vfork (want about 500000): $(head -c 300 "$d/offcpu.time.txt")"
	else
		ok $t
	fi
fi
wait "$vpid"

# A forked child's wait before its exec ran in a copy of its parent's
# address space, and is named with the parent's mappings when the child's
# own were read only after the exec (or never: it was gone). spawn forks 20
# children that each wait 100 us in before_exec() and exec at once (what a
# shell or python's subprocess does): their waits named, no raw address.
# Before the fix most runs had 5-18 "[unsymbolized 0x...]" rows.
t=unwind_forked_child_before_exec_named_with_its_parents_mappings
d=$SCRATCH/spawn
if ! "$OFFCPU_BIN" record -q -o "$d" -- "$W/spawn" >"$d.out" 2>&1; then
	fail $t "record failed: $(tail -2 "$d.out")"
else
	before=$(awk '/;main;before_exec;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	raw=$(grep -c 'unsymbolized' "$d/offcpu.time.txt")
	if [ "$before" -lt 1000 ]; then
		fail $t "${before} us in before_exec (20 waits of at least 100 us): $(head -c 300 "$d/offcpu.time.txt")"
	elif [ "$raw" -ne 0 ]; then
		fail $t "$raw rows with raw addresses: $(grep -m1 unsymbolized "$d/offcpu.time.txt" | head -c 200)"
	else
		ok $t
	fi
fi

# The same with vfork (python's subprocess, posix_spawn): the children wait
# in the parent's own address space, unwound with the parent's mappings by
# the BPF side, or in user space from a raw copy when the parent's are not
# loaded yet either. Before, 2-3 of the 20 waits a run ended
# "[unwind: maps not loaded]" and 9-15 rows were "[unsymbolized 0x...]".
t=unwind_vfork_child_before_exec_unwound_with_its_parents_mappings
d=$SCRATCH/spawn-vfork
if ! "$OFFCPU_BIN" record -q -o "$d" -- "$W/spawn" --vfork >"$d.out" 2>&1; then
	fail $t "record failed: $(tail -2 "$d.out")"
else
	before=$(awk '/;main;before_exec;/ { s += $NF } END { print s + 0 }' "$d/offcpu.time.txt")
	raw=$(grep -c 'unsymbolized' "$d/offcpu.time.txt")
	cut=$(grep 'maps not loaded' "$d/offcpu.time.txt" | grep -c 'clock_nanosleep')
	if [ "$before" -lt 1000 ]; then
		fail $t "${before} us in before_exec (20 waits of at least 100 us): $(head -c 300 "$d/offcpu.time.txt")"
	elif [ "$cut" -ne 0 ]; then
		fail $t "$cut sleeps before the exec not unwound: $(grep -m1 'maps not loaded' "$d/offcpu.time.txt" | head -c 200)"
	elif [ "$raw" -ne 0 ]; then
		fail $t "$raw rows with raw addresses: $(grep -m1 unsymbolized "$d/offcpu.time.txt" | head -c 200)"
	else
		ok $t
	fi
fi
