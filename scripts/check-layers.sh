#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The layering of src/: data flows one way, collect -> model -> analyze ->
# output. Every `#include "DIR/..."` in src/ must follow an edge of the table
# below; a violation is printed as FILE:LINE and the exit status is 1.
#
#   scripts/check-layers.sh [SRC_DIR]     (default: src/ of this checkout)
#
# A folder may include itself and the folders listed after it. "cmd" is src/
# itself (main.c, cmd_*.c, cmd.h): it may include everything. An include
# without a folder ("offcpu_bt.h") must name a file of the same folder or one
# the build generates for that folder (the skeleton, the bpftrace script).
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}

declare -A allowed=(
	[util]=""
	[bpf]=""
	[model]="util"
	[parse]="model util"
	[symbolize]="model util"
	[collect]="bpf model parse symbolize util"
	[analyze]="model parse util"
	[output]="analyze model parse symbolize util"
	[push]="model output util"
	[lane]="analyze collect model output parse push symbolize util"
	[cmd]="*"
)
# Generated headers (in the build directory: the skeleton, the bpftrace script,
# the flame graph's style sheet and script and the reason rules from share/) and the
# folders that may use them.
declare -A generated=(
	[offcpu.skel.h]="collect"
	[offcpu_bt.h]="collect"
	[share/flamegraph.css.h]="output"
	[share/flamegraph.js.h]="output"
	[share/reasons.rules.h]="analyze"
)

bad=0
while IFS= read -r file; do
	rel=${file#"$src"/}
	case $rel in
	*/*) from=${rel%%/*} ;;
	*) from=cmd ;;
	esac
	if [ -z "${allowed[$from]+x}" ]; then
		echo "$file: folder src/$from/ is not in the layer table of $0"
		bad=1
		continue
	fi
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
		inc=${BASH_REMATCH[1]}
		[[ " ${generated[$inc]:-} " == *" $from "* ]] && continue
		if [[ $inc != */* ]]; then
			[ -e "$(dirname "$file")/$inc" ] && continue
			echo "$file:$n: $from includes \"$inc\", which is neither beside it nor generated for $from"
			bad=1
			continue
		fi
		to=${inc%%/*}
		[ "$to" = "$from" ] && continue
		[ "${allowed[$from]}" = "*" ] && continue
		[[ " ${allowed[$from]} " == *" $to "* ]] && continue
		echo "$file:$n: $from includes \"$inc\"; $from may include only: ${allowed[$from]:-nothing}"
		bad=1
	done <"$file"
done < <(find "$src" -name '*.[ch]' | sort)
exit $bad
