# SPDX-License-Identifier: GPL-2.0-only
# Compare what offcpu measured with what a workload measured itself.
#
# Source it from an end-to-end test:
#
#   . "$OFFCPU_ROOT/tests/e2e/truth.sh"
#   if why=$(truth_compare summary.json truth.jsonl sleeper off_ns offcpu_ns 10 5000000); then
#           ok nanosleep_off
#   else
#           fail nanosleep_off "$why"
#   fi
#
# truth_compare SUMMARY TRUTH COMM FIELD_SUMMARY FIELD_TRUTH PCT ABS_NS
#   SUMMARY        offcpu's summary JSON
#   TRUTH          the workload's OFFCPU_TRUTH file (one JSON object per line)
#   COMM           thread name to look up in both
#   FIELD_SUMMARY  field of a summary thread object, a dotted path allowed
#                  (off_ns, blocked_ns, runq_ns, count, by_state.D.off_ns)
#   FIELD_TRUTH    field of a truth line (offcpu_ns, blocked_ns, runq_ns, waits, ...)
#   PCT ABS_NS     passes when |a - b| <= max(b * PCT / 100, ABS_NS), b the truth
# Every thread with that comm is added up, on both sides (a name the profiler split
# over two entries, or several threads of one name). Returns 0 and prints nothing
# when within; otherwise returns 1 and prints one line that says why.
#
# Run directly (tests/run.sh runs every tests/e2e/*.sh), it tests itself, and then
# the truth the workloads report (tests/workloads/check.sh) when they are built.

# Where a summary keeps its threads and their names: the one place to change if
# the summary schema moves.
TRUTH_JQ_THREADS='.threads[]?'
TRUTH_JQ_COMM='.comm'

# truth_summary_value SUMMARY COMM FIELD: the sum over the summary's threads named
# COMM, or "none" when there is no such thread, or "null" when one lacks FIELD.
truth_summary_value() {
	jq -r --arg comm "$2" --arg field "$3" "
		[$TRUTH_JQ_THREADS | select($TRUTH_JQ_COMM == \$comm)
		 | getpath(\$field | split(\".\"))]
		| if length == 0 then \"none\"
		  elif any(. == null) then \"null\"
		  else add end" "$1"
}

# truth_value TRUTH COMM FIELD: the same for the truth file.
truth_value() {
	jq -rs --arg comm "$2" --arg field "$3" '
		[.[] | select(.comm == $comm) | getpath($field | split("."))]
		| if length == 0 then "none"
		  elif any(. == null) then "null"
		  else add end' "$1"
}

truth_compare() {
	local summary=$1 truth=$2 comm=$3 fs=$4 ft=$5 pct=$6 abs=$7 a b
	if [ $# -ne 7 ]; then
		echo "truth_compare needs 7 arguments, got $#"
		return 2
	fi
	if ! a=$(truth_summary_value "$summary" "$comm" "$fs" 2>&1); then
		echo "cannot read summary $summary: $a"
		return 1
	fi
	if ! b=$(truth_value "$truth" "$comm" "$ft" 2>&1); then
		echo "cannot read truth $truth: $b"
		return 1
	fi
	case $a in
	none) echo "no thread '$comm' in summary $summary"; return 1 ;;
	null) echo "thread '$comm' in summary $summary has no field $fs"; return 1 ;;
	esac
	case $b in
	none) echo "no thread '$comm' in truth $truth"; return 1 ;;
	null) echo "thread '$comm' in truth $truth has no field $ft"; return 1 ;;
	esac
	awk -v a="$a" -v b="$b" -v p="$pct" -v m="$abs" -v c="$comm" -v fs="$fs" -v ft="$ft" '
	BEGIN {
		d = a - b; if (d < 0) d = -d
		t = b * p / 100; if (t < m) t = m
		if (d <= t) exit 0
		printf "%s: %s %.0f vs truth %s %.0f, off by %.0f (%.1f%%), allowed %.0f (%s%% or %s)\n",
			c, fs, a, ft, b, d, b ? 100 * d / b : 100, t, p, m
		exit 1
	}'
}

# Self-test on made-up files when run rather than sourced.
truth_selftest() {
	local dir s t why
	dir=$(mktemp -d "${TMPDIR:-/tmp}/truth.XXXXXX")
	s=$dir/summary.json t=$dir/truth.jsonl
	cat >"$s" <<-'EOF'
	{"threads":[
	 {"pid":10,"tid":11,"comm":"sleeper","off_ns":300000000,"blocked_ns":299000000,
	  "runq_ns":1000000,"count":10,"by_state":{"S":{"off_ns":300000000}}},
	 {"pid":10,"tid":12,"comm":"split","off_ns":100000000},
	 {"pid":10,"tid":13,"comm":"split","off_ns":150000000}]}
	EOF
	cat >"$t" <<-'EOF'
	{"workload":"w","comm":"sleeper","pid":10,"tid":11,"expect":"S","wall_ns":301000000,"oncpu_ns":600000,"runq_ns":90000,"offcpu_ns":310000000,"blocked_ns":309910000,"waits":10}
	{"workload":"w","comm":"split","pid":10,"tid":12,"expect":"S","offcpu_ns":250000000,"waits":1}
	EOF
	t_ok() { if why=$(truth_compare "$@"); then echo "ok truth_$name"; else echo "FAIL truth_$name: $why"; fi; }
	t_no() { # expect a failure whose reason contains $want
		if why=$(truth_compare "$@"); then
			echo "FAIL truth_$name: passed but should not have"
		elif [[ $why != *"$want"* ]]; then
			echo "FAIL truth_$name: reason '$why' does not say '$want'"
		else
			echo "ok truth_$name"
		fi
	}
	name=within_pct t_ok "$s" "$t" sleeper off_ns offcpu_ns 5 0
	name=outside_pct want="off by 10000000" t_no "$s" "$t" sleeper off_ns offcpu_ns 3 0
	name=abs_floor t_ok "$s" "$t" sleeper off_ns offcpu_ns 0 10000000
	name=nested_path t_ok "$s" "$t" sleeper by_state.S.off_ns offcpu_ns 5 0
	name=count_vs_waits t_ok "$s" "$t" sleeper count waits 0 0
	name=sums_same_comm t_ok "$s" "$t" split off_ns offcpu_ns 0 0
	name=no_thread_summary want="no thread 'gone' in summary" t_no "$s" "$t" gone off_ns offcpu_ns 5 0
	name=no_field want="has no field by_state.D.off_ns" \
		t_no "$s" "$t" sleeper by_state.D.off_ns offcpu_ns 5 0
	name=bad_json want="cannot read summary" t_no "$t.none" "$t" sleeper off_ns offcpu_ns 5 0
	rm -rf "$dir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	truth_selftest
	if [ -x "${OFFCPU_BUILD:-build}/tests/workloads/nanosleep" ]; then
		bash "$(dirname "$0")/../workloads/check.sh" "${OFFCPU_BUILD:-build}"
	else
		echo "skip truth_workloads: workloads not built (make tests-build)"
	fi
fi
