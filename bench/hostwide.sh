#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A host-wide capture's own cost on a host whose processes map large
# libraries they never block in: `offcpu record -a` (this build, and any other
# offcpu binaries given, e.g. an older build) against offcputime (libbpf-tools,
# host-wide), each for the same seconds, alternating.
#
#   bench/hostwide.sh [BUILD] [OTHER_OFFCPU...]   (root; env BENCH_REPS=5, BENCH_SECS=3,
#                                                  BENCH_MAPPERS=4)
#
# The host: BENCH_MAPPERS python3 processes that load the C++ toolchain's
# shared libraries (libLLVM, libclang and what they link: libz3, libxml2, ...)
# with ctypes, then sleep. Any machine that runs a JVM, a browser or a
# compiler service looks like this to a host-wide profiler: large binaries
# mapped, a few of them on stacks. Besides CPU-seconds and peak RSS, the
# script reads from offcpu's diagnostics how many unwind tables it built and
# their rows' bytes (kernel memory).
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
shift
OFFCPU=$BUILD/offcpu
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-3}
MAPPERS=${BENCH_MAPPERS:-4}
[ -x "$OFFCPU" ] || die "$OFFCPU is missing; run make first"
is_root || die "host-wide capture needs root"
TMP=$(mktemp -d)
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

libs=$(ls /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 /usr/lib/x86_64-linux-gnu/libclang-*.so.1 \
	2>/dev/null | sort -V | tail -n 2)
[ -n "$libs" ] || die "no libLLVM or libclang here (Debian's clang package installs them)"
for i in $(seq "$MAPPERS"); do
	# shellcheck disable=SC2086 # the libraries' paths, one word each
	python3 -c 'import ctypes, sys, time
for p in sys.argv[1:]:
    ctypes.CDLL(p)
print("mapped", flush=True)
time.sleep(3600)' $libs >"$TMP/mapper.$i" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
done
for _ in $(seq 100); do
	[ "$(cat "$TMP"/mapper.* | grep -c mapped)" -eq "$MAPPERS" ] && break
	sleep 0.1
done
[ "$(cat "$TMP"/mapper.* | grep -c mapped)" -eq "$MAPPERS" ] || die "the library mappers did not start"

# variants: name and command; offcpu ones get -a -d SECS -o DIR appended.
names=(offcpu)
cmds=("$OFFCPU")
i=1
for o in "$@"; do
	names+=("other$i")
	cmds+=("$o")
	i=$((i + 1))
done
if [ -x "$BCC" ]; then
	names+=(offcputime)
	cmds+=("$BCC")
fi

: >"$TMP/results"
for r in $(seq "$REPS"); do
	for k in "${!names[@]}"; do
		n=${names[$k]}
		say "rep $r: $n"
		rm -rf "$TMP/lane"
		if [ "$n" = offcputime ]; then
			/usr/bin/time -f '%U %S %M' -o "$TMP/time" "${cmds[$k]}" "$SECS" >/dev/null 2>&1
			tables=- rows=-
		else
			/usr/bin/time -f '%U %S %M' -o "$TMP/time" "${cmds[$k]}" record -q -a -d "$SECS" \
				-o "$TMP/lane" >/dev/null 2>&1
			line=$(grep 'unwind tables:' "$TMP/lane/offcpu.diagnostics.txt" 2>/dev/null)
			tables=$(echo "$line" | sed -n 's/.* \([0-9]*\) tables loaded.*/\1/p')
			rows=$(echo "$line" | sed -n 's/.*(\([0-9]*\) in rows).*/\1/p')
		fi
		read -r u s m < <(tail -n 1 "$TMP/time")
		echo "$n $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m ${tables:--} ${rows:--}" \
			>>"$TMP/results"
	done
done

cat <<EOF
### Unwind tables: a host-wide capture on a host that maps large libraries

Command: \`bench/hostwide.sh $(basename "$BUILD")$(for o in "$@"; do printf ' %s' "$o"; done)\` (BENCH_REPS=$REPS, BENCH_SECS=$SECS, BENCH_MAPPERS=$MAPPERS), as root.

Method. $MAPPERS python3 processes load $(echo "$libs" | xargs -n1 basename | paste -sd' ' -)
(and what they link) with ctypes and sleep; then, $REPS times in turn, each
recorder traces the whole host for $SECS s: \`offcpu record -q -a -d $SECS\`
and offcputime (libbpf-tools) \`$SECS\`. CPU-s is user + system time of the
recorder's process from start to exit (\`/usr/bin/time\`), peak RSS its maximum
resident set; tables and rows are from offcpu's diagnostics (unwind tables
built, and their rows' bytes: kernel memory). Medians of $REPS.

| recorder | CPU-s | peak RSS MB | unwind tables built | rows (MB) |
|---|---|---|---|---|
EOF
for k in "${!names[@]}"; do
	n=${names[$k]}
	cpu=$(awk -v n="$n" '$1 == n { print $2 }' "$TMP/results" | median)
	rss=$(awk -v n="$n" '$1 == n { print $3 / 1024 }' "$TMP/results" | median)
	tb=$(awk -v n="$n" '$1 == n && $4 != "-" { print $4 }' "$TMP/results" | median)
	rw=$(awk -v n="$n" '$1 == n && $5 != "-" { print $5 / 1e6 }' "$TMP/results" | median)
	label=$n
	[ "$n" = offcpu ] && label="offcpu ($BUILD)"
	[ "${n#other}" != "$n" ] && label="offcpu (${cmds[$k]})"
	echo "| $label | $(fmt "$cpu" 2) | $(fmt "$rss" 0) | $(fmt "$tb" 0) | $(fmt "$rw" 1) |"
done
