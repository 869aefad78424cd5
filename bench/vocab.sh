#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Writes the frame vocabulary bench/genfolded draws from, into OUTDIR:
#   comm.txt    thread names seen in the fixtures
#   kernel.txt  real kernel paths (root first, ';'-separated) from the fixtures
#   user.txt    user frame names: the fixtures' own, plus the C library's exported
#               functions (nm -D), so that a big profile has a realistic number of
#               distinct user frames rather than the twenty a fixture holds
#
#   bench/vocab.sh [TESTDATA_DIR] OUTDIR
set -eu
if [ $# -eq 2 ]; then data=$1; out=$2; else data=$(dirname "$0")/../tests/data; out=$1; fi
mkdir -p "$out"
tmp=$out/.vocab.$$
trap 'rm -f "$tmp".*' EXIT

# Folded fixtures: comm;user...;kernel... VALUE. The kernel part starts at the first
# kernel entry frame (or after BCC's '-' delimiter).
cat "$data"/bcc/*.folded "$data"/folded/*.txt 2>/dev/null | tr -d '\r' | awk -v T="$tmp" '
	/^#/ || NF < 2 { next }
	{
		sub(/ [0-9]+$/, "")
		n = split($0, f, ";")
		if (n < 2)
			next
		print f[1] >> (T ".comm")
		k = 0
		for (i = 2; i <= n; i++) {
			if (f[i] == "-") { k = i + 1; break }
			if (f[i] ~ /^(entry_SYSCALL|asm_|ret_from_fork|irqentry_)/ || f[i] ~ /_\[k\]$/) {
				k = i; break
			}
			if (f[i] !~ /^(\[|0x|-$)/)
				print f[i] >> (T ".user")
		}
		if (k && k <= n) {
			p = f[k]
			for (i = k + 1; i <= n; i++)
				p = p ";" f[i]
			gsub(/_\[k\]/, "", p)
			print p >> (T ".kernel")
		}
	}'

# bpftrace map dumps: @m[ kstack (leaf first), ustack, comm, ...]: value
cat "$data"/bpftrace/*.txt | tr -d '\r' | awk -v T="$tmp" '
	function flush(   p, i) {
		if (nk) {
			p = ""
			for (i = nk; i >= 1; i--)
				p = p (p == "" ? "" : ";") ks[i]
			print p >> (T ".kernel")
		}
		nk = 0
	}
	/^@[A-Za-z_]*\[$/ { part = 1; nk = 0; next }
	/^    / && part {
		f = $0
		sub(/^ +/, "", f)
		sub(/\+[0-9]+$/, "", f)
		if (part == 1) {
			if (f !~ /^(__traceiter_|bpf_)/)
				ks[++nk] = f
		} else if (f !~ /^(0x|\[)/) {
			print f >> (T ".user")
		}
		next
	}
	/^, *$/ && part == 1 { part = 2; next }
	/^,/ && part {
		line = $0
		sub(/\]:.*/, "", line)
		n = split(line, a, ", *")
		for (i = 1; i <= n; i++)
			if (a[i] != "" && a[i] !~ /^[0-9]+$/) { print a[i] >> (T ".comm"); break }
		flush()
		part = 0
	}'

if command -v nm >/dev/null 2>&1; then
	for lib in /lib/x86_64-linux-gnu/libc.so.6 /lib/aarch64-linux-gnu/libc.so.6 /lib64/libc.so.6; do
		[ -r "$lib" ] || continue
		nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' >> "$tmp.user"
		break
	done
fi

for v in comm user kernel; do
	[ -s "$tmp.$v" ] || { echo "vocab.sh: no $v frames found under $data" >&2; exit 1; }
	LC_ALL=C sort -u "$tmp.$v" | grep -v '^$' > "$out/$v.txt"
done
echo "vocab: $(wc -l < "$out/comm.txt") comms, $(wc -l < "$out/user.txt") user frames," \
	"$(wc -l < "$out/kernel.txt") kernel paths in $out" >&2
