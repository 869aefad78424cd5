#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Puts fresh benchmark sections into an existing BENCHMARKS.md without losing
# what is around them.
#
#   bench/splice.sh FILE RESULTS NAME...     (FILE is rewritten atomically)
#
# BENCHMARKS.md holds more than bench/run.sh writes: rounds, analyses and
# verdicts written by hand between the sections. Rebuilding the file from
# bench/BENCHMARKS.md.in would drop them, and on a fresh build directory every
# section not run this time too. So each NAME's section (RESULTS/NAME.md, whose
# first line is its "### " heading, and RESULTS/NAME.when) replaces only the
# block of FILE that starts at the same heading and ends at its "_Taken" line
# (included) or before the next "## " or "### " heading, whichever comes first.
# A section whose heading FILE does not have yet is appended at the end, and
# said so on stderr. Everything else, the Targets list included, is kept as it
# is. Exit status: 0, or 1 with a one-line message (nothing written).
set -u
die() { echo "splice: $*" >&2; exit 1; }
[ $# -ge 3 ] || die "usage: bench/splice.sh FILE RESULTS NAME..."
file=$1 results=$2
shift 2
[ -f "$file" ] || die "$file: no such file"
for n in "$@"; do
	[ -s "$results/$n.md" ] || die "$results/$n.md: no such section"
	head -n 1 "$results/$n.md" | grep -q '^### ' ||
		die "$results/$n.md:1: a section starts with a \"### \" heading"
done

tmp=$(mktemp "$file.XXXXXX") || die "cannot create a file beside $file"
trap 'rm -f "$tmp"' EXIT
awk -v R="$results" -v names="$*" '
	function section(n,   l, f) {
		f = R "/" n ".md"
		while ((getline l < f) > 0)
			print l
		close(f)
		f = R "/" n ".when"
		if ((getline l < f) > 0) {
			print ""
			print "_Taken " l "._"
		}
		close(f)
	}
	BEGIN {
		k = split(names, nm, " ")
		for (i = 1; i <= k; i++) {
			f = R "/" nm[i] ".md"
			getline h < f
			close(f)
			of[h] = nm[i]
		}
	}
	skipping && /^_Taken / { skipping = 0; next }
	skipping && /^###? / { skipping = 0 }
	skipping { next }
	($0 in of) && !(of[$0] in done) {
		section(of[$0])
		done[of[$0]] = 1
		skipping = 1
		next
	}
	{ print }
	END {
		for (i = 1; i <= k; i++)
			if (!(nm[i] in done)) {
				print ""
				section(nm[i])
				print "splice: " nm[i] ": its heading is not in the file yet: appended at the end" > "/dev/stderr"
			}
	}' "$file" >"$tmp" || die "awk failed on $file"
chmod --reference="$file" "$tmp" 2>/dev/null
mv "$tmp" "$file" || die "cannot replace $file"
trap - EXIT
