#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo: profile the bundled demo workload (a small service: workers on a
# locked queue, a logger that fsyncs, a pipe, a timer) and show the report.
set -euo pipefail
build=${1:-build}
bin="$build/offcpu"
out=${DEMO_OUT:-demo-out}
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: the collector loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
rm -rf "$out"
"$bin" record --timeline -o "$out" -- "$build/tests/workloads/demo"
"$bin" flamegraph "$out" -o "$out/offcpu.svg"
"$bin" export --format pprof "$out" -o "$out/offcpu.pb.gz"
"$bin" export --format speedscope "$out" -o "$out/offcpu.speedscope.json"
"$bin" export --format chrome-trace "$out" -o "$out/offcpu.trace.json"
echo "demo: wrote $out/offcpu.svg (flame graph), $out/offcpu.pb.gz (pprof)," \
	"$out/offcpu.speedscope.json (speedscope), $out/offcpu.trace.json (timeline:" \
	"Perfetto, chrome://tracing, speedscope)"
echo
"$bin" report "$out"
