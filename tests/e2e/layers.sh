#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The layer check (scripts/check-layers.sh): the tree holds to it, and it
# names FILE:LINE of an include that runs against the flow, in a copy of src/.
. "$(dirname "$0")/lib.sh"
CHECK="$OFFCPU_ROOT/scripts/check-layers.sh"

if out=$("$CHECK" "$OFFCPU_ROOT/src" 2>&1); then
	ok layers_tree_holds
else
	fail layers_tree_holds "$(echo "$out" | head -n 3 | tr '\n' ' ')"
fi

# copy_src: a fresh copy of src/ in $SCRATCH/src.
copy_src() {
	rm -rf "$SCRATCH/src"
	cp -r "$OFFCPU_ROOT/src" "$SCRATCH/src"
}

# add_include NAME FILE INCLUDE: add the include after FILE's first include;
# the check must exit non-zero and name FILE:LINE.
add_include() {
	local name=$1 file=$2 inc=$3 line out
	copy_src
	line=$(grep -n '^#include' "$SCRATCH/src/$file" | head -n 1 | cut -d: -f1)
	sed -i "${line}a #include \"$inc\"" "$SCRATCH/src/$file"
	line=$((line + 1))
	if out=$("$CHECK" "$SCRATCH/src" 2>&1); then
		fail "$name" "the check passed with $file including $inc"
	elif ! grep -qF "$SCRATCH/src/$file:$line:" <<<"$out"; then
		fail "$name" "the check did not name $file:$line: $(echo "$out" | head -n 2 | tr '\n' ' ')"
	else
		ok "$name"
	fi
}

add_include layers_flag_model_including_parse model/profile.h parse/parse.h
add_include layers_flag_parse_including_output parse/folded.c output/folded.h
add_include layers_flag_collect_including_lane collect/proc.h lane/lane.h
add_include layers_flag_output_including_lane output/summary.h lane/lane.h
add_include layers_flag_analyze_including_output analyze/diff.c output/report.h
add_include layers_flag_bare_include_from_elsewhere parse/folded.c cmd.h

# An allowed edge stays allowed: output may include analyze.
copy_src
sed -i '0,/^#include/s//#include "analyze\/reasons.h"\n#include/' "$SCRATCH/src/output/folded.c"
if out=$("$CHECK" "$SCRATCH/src" 2>&1); then
	ok layers_allow_output_including_analyze
else
	fail layers_allow_output_including_analyze "$(echo "$out" | head -n 2 | tr '\n' ' ')"
fi

# A new folder must be placed in the table before it can be used.
copy_src
mkdir "$SCRATCH/src/unwind"
printf '#include "util/hash.h"\n' >"$SCRATCH/src/unwind/unwind.c"
if "$CHECK" "$SCRATCH/src" >/dev/null 2>&1; then
	fail layers_flag_unknown_folder "a folder missing from the table passed"
else
	ok layers_flag_unknown_folder
fi
rm -rf "$SCRATCH"
