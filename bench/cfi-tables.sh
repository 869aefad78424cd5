#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Unwind tables: building them from the CFI of real binaries.
#
#   bench/cfi-tables.sh [BUILD] [FILE...]      (env BENCH_REPS=5; no root needed)
#
# build/bench/cfi-tables (bench/cfi_tables.c) builds the table of each file
# (collect/cfi.c: libdw reads .eh_frame, or .debug_frame, row by row) BENCH_REPS
# times in one process, the file in the page cache, and prints the median wall
# and CPU (thread CPU clock) time of one build, the rows after merging, their
# bytes (8 a row), the FDEs read, and the rows the BPF side cannot evaluate
# (a CFA from another register, a return address not at CFA - 8). Default
# files: glibc's libc, python3.11, postgres 15, redis-server. The machine is
# shared: the CPU time is the figure to compare.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ $# -gt 0 ] && shift
BIN=$BUILD/bench/cfi-tables
[ -x "$BIN" ] || { echo "bench: $BIN is missing; run 'make bench-build'" >&2; exit 1; }
[ $# -gt 0 ] || set -- /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11 \
	/usr/lib/postgresql/15/bin/postgres "$(command -v redis-server || echo /usr/bin/redis-server)"

echo "### Unwind tables: build time and size"
echo
echo "Command: \`bench/cfi-tables.sh $(basename "$BUILD")\` (BENCH_REPS=${BENCH_REPS:-5})." \
	"Median of ${BENCH_REPS:-5} builds of each file's table in one process, the file in the" \
	"page cache; CPU is the building thread's CPU time (the machine is shared, so wall" \
	"time includes waiting for a CPU). Bytes: 8 a row (struct offcpu_cfi_row)." \
	"Unsupported rows: a CFA from another register or a return address not at CFA - 8."
echo
for f in "$@"; do cat "$f" >/dev/null 2>&1; done
table=$("$BIN" -r "${BENCH_REPS:-5}" "$@") || exit 1
echo "$table"
echo
for f in "$@"; do
	[ -e "$f" ] || continue
	v=$({ dpkg -S "$f" || dpkg -S "$(readlink -f "$f")"; } 2>/dev/null | cut -d: -f1 | head -n 1)
	[ -n "$v" ] && v="$v $(dpkg-query -W -f '${Version}' "$v" 2>/dev/null)"
	echo "- \`$f\`: ${v:-not from a package}, $(stat -L -c %s "$f") bytes"
done
echo
echo "$table" | awk -F'|' '$2 ~ /^ libc\.so/ && $5 + 0 > 0 {
	printf "Target: libc'"'"'s table in under 10 ms: %s (%.1f ms CPU).\n", $5 + 0 < 10 ? "met" : "NOT met", $5 }'
