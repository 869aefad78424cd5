#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# How blockers.bt.txt was made (as root, on the kernel named in README): run
# blockers.c, trace it for 4 s with capture.bt, keep each thread's heaviest
# records (select.py). Re-run to refresh the fixtures for a newer kernel.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/blockers" "$here/blockers.c" -lpthread
"$tmp/blockers" "$tmp" &
pid=$!
sleep 1
bpftrace "$here/capture.bt" >"$tmp/dump.txt"
python3 "$here/select.py" "$tmp/dump.txt" >"$here/blockers.bt.txt"
python3 "$here/select.py" --folded "$tmp/dump.txt" >"$here/blockers.folded"
