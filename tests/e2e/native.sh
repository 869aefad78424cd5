#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The native collector against ground truth. Each workload in tests/workloads
# measures its own threads (schedstat and clocks) and writes the truth; offcpu
# must match it per thread within 5% or 5 ms: off-CPU, blocked and run-queue
# time, split by state where the workload knows the state.
. "$(dirname "$0")/lib.sh"
. "$OFFCPU_ROOT/tests/e2e/truth.sh"
mount_tracefs
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"
PCT=5
ABS=5000000

if ! need_root; then
	skip native_collector "needs root to load BPF programs"
	exit 0
fi

# record NAME [record options --] WORKLOAD ARGS: runs it, leaves $d and $truth.
record() {
	local name=$1
	shift
	d=$SCRATCH/$name
	truth=$SCRATCH/$name.truth
	rm -rf "$d" "$truth"
	OFFCPU_TRUTH=$truth "$OFFCPU_BIN" record -o "$d" -q "$@"
}

sane() { # NAME: the run gave a complete, schema-valid summary
	local s=$d/offcpu.summary.json out
	if [ "$(json "$s" .state)" != summary_written ]; then
		fail "$1" "state $(json "$s" .state): $(json "$s" .caveat.message)"
		return 1
	fi
	if [ "$(json "$s" .capture_integrity.status)" != complete ]; then
		fail "$1" "capture $(json "$s" .capture_integrity.status): $(json "$s" .capture_integrity.message)"
		return 1
	fi
	if ! out=$("$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$s"); then
		fail "$1" "schema: $(echo "$out" | head -1)"
		return 1
	fi
}

# compare TEST COMM SUMMARY_FIELD TRUTH_FIELD
compare() {
	local why
	if why=$(truth_compare "$d/offcpu.summary.json" "$truth" "$2" "$3" "$4" $PCT $ABS); then
		ok "$1"
	else
		fail "$1" "$why"
	fi
}

if record nanosleep -- "$W/nanosleep" && sane native_nanosleep_capture; then
	ok native_nanosleep_capture
	compare native_nanosleep_off sleeper off_ns offcpu_ns
	compare native_nanosleep_blocked sleeper blocked_ns blocked_ns
	compare native_nanosleep_state_S sleeper by_state.S.blocked_ns blocked_ns
	top=$(json "$d/offcpu.summary.json" '[first(.top_stacks[] | select(.top_thread.comm == "sleeper")) | .frames[] | .kind + ":" + .name] | join(";")')
	# Symbolized user frames, no raw addresses (glibc itself has no frame pointers,
	# so the frame right above its clock_nanosleep is not walkable).
	if [[ $top == *kernel:do_nanosleep* ]] && [[ $top == *user:clock_nanosleep* ]] &&
		[[ $top == *user:start_thread* ]] && [[ $top != *user:0x* ]]; then
		ok native_nanosleep_stack_kernel_and_user_symbolized
	else
		fail native_nanosleep_stack_kernel_and_user_symbolized "top stack: $top"
	fi
	if [[ $top == *bpf_prog_* ]] || [[ $top == *bpf_trace_run* ]] || [[ $top == *__bpf_trace_* ]]; then
		fail native_no_tracer_frames "tracer frames in the stack: $top"
	else
		ok native_no_tracer_frames
	fi
	fp=$(json "$d/offcpu.summary.json" "[.binaries[] | select(.path | endswith(\"/nanosleep\")) | .frame_pointers][0]")
	[ "$fp" = present ] && ok native_reports_frame_pointers || fail native_reports_frame_pointers "nanosleep binary: frame_pointers=$fp"
	# Each wakeup of the sleeper finds its CPU idle (on a machine otherwise
	# idle): the microseconds the CPU takes to wake are its wait in the rows
	# and its run by schedstat. The budget must take them out of on-CPU
	# (schedstat.idle_exit_ns), or the report shows an overcount (without:
	# 334 us over here, 10-25 us a wakeup).
	t=native_nanosleep_idle_exits_are_not_an_overcount
	ie=$(truth_summary_value "$d/offcpu.summary.json" sleeper schedstat.idle_exit_ns)
	"$OFFCPU_BIN" report "$d" >"$SCRATCH/nanosleep.report" 2>&1
	if ! grep -q "switch clock: the run queue's" "$d/offcpu.diagnostics.txt"; then
		skip $t "switches timed by bpf_ktime_get_ns() here: the CPU's wake-ups are not measured"
	elif [ "$ie" = none ] || [ "$ie" = null ]; then
		fail $t "sleeper's schedstat.idle_exit_ns: $ie"
	elif grep -q '^overcount:' "$SCRATCH/nanosleep.report"; then
		fail $t "$(grep -A1 '^overcount:' "$SCRATCH/nanosleep.report" | tr '\n' ' ')"
	else
		ok $t
	fi
fi

if record mutex -- "$W/mutex" && sane native_mutex_capture; then
	ok native_mutex_capture
	compare native_mutex_waiter_blocked waiter blocked_ns blocked_ns
	compare native_mutex_holder_off holder off_ns offcpu_ns
	w=$(json "$d/offcpu.summary.json" '[.top_stacks[] | select(.top_thread.comm == "waiter") | .frames[].name] | join(";")')
	[[ $w == *futex* ]] && ok native_mutex_waiter_on_futex || fail native_mutex_waiter_on_futex "waiter stacks: ${w:0:300}"
fi

if record condvar -- "$W/condvar" && sane native_condvar_capture; then
	ok native_condvar_capture
	compare native_condvar_waiter_off waiter off_ns offcpu_ns
	compare native_condvar_signaler_off signaler off_ns offcpu_ns
fi

if record pipe -- "$W/pipe" && sane native_pipe_capture; then
	ok native_pipe_capture
	compare native_pipe_reader_off reader off_ns offcpu_ns
	compare native_pipe_reader_runq reader runq_ns runq_ns
	r=$(json "$d/offcpu.summary.json" '[.top_stacks[] | select(.top_thread.comm == "reader") | .frames[].name] | join(";")')
	[[ $r == *pipe_read* ]] && ok native_pipe_reader_in_pipe_read || fail native_pipe_reader_in_pipe_read "reader stacks: ${r:0:300}"
fi

if record fsync -- "$W/fsync" && sane native_fsync_capture; then
	ok native_fsync_capture
	# The kernel's on-CPU figure for an I/O-heavy thread runs several ms above
	# what its context switches show (bpftrace agrees with offcpu to 0.05%), so
	# fsync is held to a looser bound than the other workloads.
	if why=$(truth_compare "$d/offcpu.summary.json" "$truth" syncer off_ns offcpu_ns 35 $ABS); then
		ok native_fsync_off
	else
		fail native_fsync_off "$why"
	fi
	dns=$(truth_summary_value "$d/offcpu.summary.json" syncer by_state.D.off_ns)
	if [ "$dns" != none ] && [ "$dns" != null ] && [ "$dns" -gt 1000000 ]; then
		ok native_fsync_is_uninterruptible
	else
		fail native_fsync_is_uninterruptible "D-state time of syncer: $dns"
	fi
fi

if record preempt -- "$W/preempt" && sane native_preempt_capture; then
	ok native_preempt_capture
	compare native_preempt_a_runq spin-a runq_ns runq_ns
	compare native_preempt_b_runq spin-b runq_ns runq_ns
	compare native_preempt_a_is_R spin-a by_state.R.off_ns runq_ns
	b=$(truth_summary_value "$d/offcpu.summary.json" spin-a blocked_ns)
	[ "$b" != none ] && [ "$b" -lt $ABS ] && ok native_preempt_not_blocked || fail native_preempt_not_blocked "spin-a blocked_ns=$b"
fi

if record forkexec -- "$W/forkexec" && sane native_forkexec_capture; then
	ok native_forkexec_capture
	compare native_forkexec_parent_off parent off_ns offcpu_ns
	compare native_forkexec_child_off child off_ns offcpu_ns
	compare native_forkexec_grandchild_off grandchild off_ns offcpu_ns
fi

if record earlyexit -- "$W/earlyexit" && sane native_earlyexit_capture; then
	ok native_earlyexit_capture
	for n in 1 2 3 4; do
		compare native_earlyexit_early_$n early-$n off_ns offcpu_ns
	done
	compare native_earlyexit_main early-main off_ns offcpu_ns
	# A thread's first run, like any switch-in out of idle, ends a wait the
	# kernel counts partly as its run (the CPU waking up): each thread's rows
	# stay within the clocks' disagreement of schedstat's off-CPU time (10 us
	# and 100 ppm, as the report's overcount note). Without the first run's
	# wake-up counted, a thread started on the idle CPU was 16-24 us over.
	t=native_earlyexit_rows_within_schedstat
	over=$(jq -r '[.threads[] | select(.schedstat)
		| select(.off_ns > .schedstat.offcpu_ns + 10000 + .schedstat.wall_ns / 10000)
		| "\(.comm) \(.off_ns - .schedstat.offcpu_ns) ns"] | join(", ")' "$d/offcpu.summary.json")
	[ -z "$over" ] && ok $t || fail $t "rows over schedstat: $over"
fi

# The raw_tp fallback measures the same.
if record rawtp --raw-tp -- "$W/nanosleep" && sane native_raw_tp_capture; then
	compare native_raw_tp_nanosleep_off sleeper off_ns offcpu_ns
fi

# Tiny maps: the capture says partial and counts what it lost.
t=native_tiny_maps_are_partial_with_counts
record tiny --agg-entries 1 -- "$W/pipe"
s=$d/offcpu.summary.json
st=$(json "$s" .capture_integrity.status)
lost=$(json "$s" .capture_integrity.lost_total)
if [ "$st" != partial ] || [ "${lost:-0}" -lt 1 ]; then
	fail $t "status=$st lost_total=$lost"
elif [ "$(json "$s" .caveat.kind)" != offcpu_capture_partial ]; then
	fail $t "caveat $(json "$s" .caveat.kind)"
else
	ok $t
fi

# A half-full aggregation map wakes offcpu to drain it: 2000 short-lived
# threads (about two new keys each, thousands a second) fit a 512-key map
# without a loss, where the 200 ms poll alone lets it fill.
t=native_half_full_agg_map_asks_for_a_drain
record churn --agg-entries 512 -- "$W/churn" 2000
s=$d/offcpu.summary.json
lost=$(json "$s" .capture_integrity.losses.map_full_agg.count)
asked=$(sed -n 's/.*(\([0-9]*\) asked for by a half-full aggregation map.*/\1/p' "$d/offcpu.diagnostics.txt")
rows=$(json "$s" .totals.rows)
if [ "${lost:-x}" != 0 ]; then
	fail $t "map_full_agg: ${lost:-none} keys lost"
elif [ "${asked:-0}" -lt 2 ]; then
	fail $t "${asked:-no} drains asked for (rows $rows)"
elif [ "${rows:-0}" -lt 2000 ]; then
	fail $t "$rows rows: fewer than one a thread"
else
	ok $t
fi

# Host-wide, the threads map holds four times the host's threads (8192 to
# 32768 entries of 1.1 KB, preallocated), unless set; a command's holds 8192.
# The aggregation maps and the stack ids: sixteen times (16384 to 65536).
t=native_host_wide_threads_map_sized_by_the_host
"$OFFCPU_BIN" record -q -a -d 0.2 -o "$SCRATCH/hostmap" >/dev/null 2>&1
"$OFFCPU_BIN" record -q -a -d 0.2 --thread-entries 1000 -o "$SCRATCH/hostmap1k" >/dev/null 2>&1
all=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
got=$(sed -n 's/.*map sizes: \([0-9]*\) threads.*/\1/p' "$SCRATCH/hostmap/offcpu.diagnostics.txt")
set1k=$(sed -n 's/.*map sizes: \([0-9]*\) threads.*/\1/p' "$SCRATCH/hostmap1k/offcpu.diagnostics.txt")
aggs=$(sed -n 's/.*map sizes: .*, \([0-9]*\) aggregation keys.*/\1/p' "$SCRATCH/hostmap/offcpu.diagnostics.txt")
stacks=$(sed -n 's/.*map sizes: .*, \([0-9]*\) stack ids.*/\1/p' "$SCRATCH/hostmap/offcpu.diagnostics.txt")
if [ -z "$got" ] || [ "$got" -lt 8192 ] || [ "$got" -gt 32768 ]; then
	fail $t "threads map of $got entries, not within 8192-32768"
elif [ "$got" -lt $((4 * all)) ] && [ "$got" -lt 32768 ]; then
	fail $t "threads map of $got entries for a host of $all threads"
elif [ "$got" -gt 8192 ] && [ $((got / 2)) -ge $((4 * all)) ]; then
	fail $t "threads map of $got entries, twice what $all threads need"
elif [ "$set1k" != 1000 ]; then
	fail $t "--thread-entries 1000 gave $set1k"
elif [ -z "$aggs" ] || [ "$aggs" -lt 16384 ] || [ "$aggs" -gt 65536 ] ||
	{ [ "$aggs" -lt $((16 * all)) ] && [ "$aggs" -lt 65536 ]; } ||
	{ [ "$aggs" -gt 16384 ] && [ $((aggs / 2)) -ge $((16 * all)) ]; }; then
	fail $t "aggregation maps of $aggs keys for a host of $all threads (16x, 16384-65536)"
elif [ "$stacks" != "$aggs" ]; then
	fail $t "stack ids $stacks, aggregation keys $aggs: both sized 16x the host's threads"
else
	ok $t
fi

# Attach to a running process by pid.
t=native_attach_to_pid
truth=$SCRATCH/attach.truth
OFFCPU_TRUTH=$truth "$W/nanosleep" --wait-start 2>"$SCRATCH/attach.wl" &
wpid=$!
# Ready: its handler is in place (a signal before it would kill it).
for _ in $(seq 100); do grep -q "waiting for SIGUSR1" "$SCRATCH/attach.wl" 2>/dev/null && break; sleep 0.05; done
"$OFFCPU_BIN" record -p $wpid -o "$SCRATCH/attach" 2>"$SCRATCH/attach.err" &
rec=$!
for _ in $(seq 100); do grep -q "tracing" "$SCRATCH/attach.err" 2>/dev/null && break; sleep 0.05; done
kill -USR1 $wpid
wait $wpid
kill -INT $rec
wait $rec
d=$SCRATCH/attach
if why=$(truth_compare "$d/offcpu.summary.json" "$truth" sleeper off_ns offcpu_ns $PCT $ABS); then
	ok $t
else
	fail $t "$why; $(head -2 "$SCRATCH/attach.err")"
fi


# The programs offcpu loads are those its mode needs: the process and switch
# tracepoints always, the wakeups only without sched_info, sched_waking and the
# interrupt tracepoints (softirq, irq handler, hrtimer expiry: named wakers) only
# for a timeline; the page-table probe where cache hits read user words
# through the page table; all of one flavour. Read from the BPF program fds
# the recording process holds.
t=native_loads_the_programs_its_mode_needs
progs_of() { # PID: names of the BPF programs it holds, sorted
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un); do
		bpftool prog show id "$id" 2>/dev/null |
			awk 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "name") print $(i + 1) }'
	done | sort | tr '\n' ' '
}
want_progs() { # DIAGNOSTICS TIMELINE(0/1): the names the attach note implies
	local fl=btf names="exec exit fork sw"
	grep -q 'attached raw_tp programs' "$1" && fl=raw
	grep -q 'attached .*(no sched_info)' "$1" && names="$names wk wkn"
	[ "$2" = 1 ] && names="$names wkg sie six hie hix hte htx"
	{
		for n in $names; do echo "${n}_$fl"; done
		# Kernel symbols from the kernel (5.16+), but a timeline reads kallsyms.
		[ "$2" = 0 ] && [ "$ksym_helper" = 1 ] && echo ksym
		# The page-table probe, when the note says it was asked (or could not answer).
		grep -qE 'user words of cache hits: (read through|.*(probe program|a word of ours))' \
			"$1" && echo upt_probe
	} | sort | tr '\n' ' '
}
ksym_helper=0
command -v bpftool >/dev/null &&
	bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "'BPF_FUNC_kallsyms_lookup_name'" && ksym_helper=1
why=
if ! command -v bpftool >/dev/null; then
	skip $t "needs bpftool"
else
	for tl in 0 1; do
		opt=
		[ $tl = 1 ] && opt=--timeline
		"$OFFCPU_BIN" record -o "$SCRATCH/progs$tl" -q $opt -- sleep 2 &
		rec=$!
		got=
		# Read once the workload runs: offcpu releases it only after every
		# program is loaded and attached (programs still loading are not the set).
		for _ in $(seq 100); do
			pgrep -P $rec -x sleep >/dev/null && got=$(progs_of $rec)
			[ -n "$got" ] && break
			sleep 0.05
		done
		wait $rec
		want=$(want_progs "$SCRATCH/progs$tl/offcpu.diagnostics.txt" $tl)
		[ "$got" = "$want" ] || why="$why${opt:-default}: loaded '$got', want '$want'; "
	done
	[ -z "$why" ] && ok $t || fail $t "$why"
fi
rm -rf "$SCRATCH"
