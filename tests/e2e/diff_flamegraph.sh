# SPDX-License-Identifier: GPL-2.0-only
# The differential flame graph: `offcpu diff BASE NEW --flamegraph OUT.svg` on
# two folded fixtures (tests/data/flamegraph/diff-base, diff-new: the lock
# wait tripled, accept is unchanged, read_config halved, cron is gone). The
# SVG's texts are checked as written, then diff_flamegraph.js drives it in
# headless Chromium: hover, colours, zoom, Ctrl-F.
#
# Needs chromium (Debian: chromium) and node (Debian: nodejs) for the browser part.
. "$(dirname "$0")/lib.sh"

BASE="$DATA/flamegraph/diff-base"
NEW="$DATA/flamegraph/diff-new"
SVG="$SCRATCH/diff.svg"
ARTEFACTS="${OFFCPU_ARTEFACTS:-/tmp/offcpu-artefacts}"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
trap 'rm -rf "$SCRATCH"' EXIT

# title SVG NAME: the tooltip of the frame NAME, its two lines joined by '|'.
title() {
	awk -v name="$2" '{
		t = $0
		if (sub(/^<g data-v="[0-9]+"><title>/, "", t) && t == name) {
			getline info; sub(/<\/title>.*/, "", info); print t "|" info; exit
		}
	}' "$1"
}

"$OFFCPU_BIN" diff "$BASE" "$NEW" --flamegraph "$SVG" >"$SCRATCH/out" 2>"$SCRATCH/err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$SVG" ]; then
	fail diff_flamegraph_cli_writes_svg "exit $rc: $(head -c 300 "$SCRATCH/err")"
	exit 1
elif command -v xmllint >/dev/null && ! xmllint --noout "$SVG" 2>"$SCRATCH/xmllint.err"; then
	fail diff_flamegraph_cli_writes_svg "not well-formed XML: $(head -c 300 "$SCRATCH/xmllint.err")"
	exit 1
elif ! grep -q '^Stacks' "$SCRATCH/out"; then
	fail diff_flamegraph_cli_writes_svg "the text diff is missing from standard output"
else
	ok diff_flamegraph_cli_writes_svg
fi

got=$(title "$SVG" pthread_mutex_lock)
want='pthread_mutex_lock|user, 1.20 s off-CPU, 64.86%, 1 interval; base 400 ms, new 1.20 s, delta +800 ms (+200.0%)'
if [ "$got" = "$want" ]; then
	ok diff_flamegraph_grown_frame_delta
else
	fail diff_flamegraph_grown_frame_delta "tooltip '$got', expected '$want'"
fi

if grep -q '>widths: new; colour: change from base, red grew, blue shrank; 1 frame only in base not drawn (-200 ms)</text>' "$SVG" &&
	! grep -q '<title>cron' "$SVG"; then
	ok diff_flamegraph_vanished_reported
else
	fail diff_flamegraph_vanished_reported "$(grep -o '<text id="diffkey"[^<]*' "$SVG")"
fi

# --normalize compares shares: 400 ms of 1.40 s, then 1.20 s of 1.85 s.
"$OFFCPU_BIN" diff --normalize "$BASE" "$NEW" --flamegraph "$SCRATCH/norm.svg" >/dev/null 2>&1
got=$(title "$SCRATCH/norm.svg" pthread_mutex_lock)
want='base 28.57% (400 ms), new 64.86% (1.20 s), delta +36.29 pp (+127.0%)'
if [[ $got == *"; $want" ]]; then
	ok diff_flamegraph_normalized_shares
else
	fail diff_flamegraph_normalized_shares "tooltip '$got', expected it to end in '$want'"
fi

# A gate still decides the exit status, and the SVG is written all the same.
rm -f "$SVG"
"$OFFCPU_BIN" diff "$BASE" "$NEW" --fail-on 'stack:futex>+20%' --flamegraph "$SVG" >/dev/null 2>&1
rc=$?
if [ $rc -eq 1 ] && [ -s "$SVG" ]; then
	ok diff_flamegraph_with_gate
else
	fail diff_flamegraph_with_gate "exit $rc (expected 1), SVG $([ -s "$SVG" ] && echo written || echo missing)"
fi

# A summary has only its top stacks: no flame graph from it.
"$OFFCPU_BIN" diff "$DATA/diff/base.summary.json" "$NEW" --flamegraph "$SCRATCH/s.svg" \
	>/dev/null 2>"$SCRATCH/err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'needs capture directories' "$SCRATCH/err" && [ ! -e "$SCRATCH/s.svg" ]; then
	ok diff_flamegraph_refuses_summary
else
	fail diff_flamegraph_refuses_summary "exit $rc: $(head -c 200 "$SCRATCH/err")"
fi

if [ -z "$CHROMIUM" ]; then
	skip diff_flamegraph_browser "chromium not installed (Debian: apt-get install chromium)"
	exit 0
fi
# Taken in the scratch directory (another run may be writing the artefacts), in sRGB so
# pixels are the SVG's colours; flamegraph_pixels.js checks what it shows.
PNG="$SCRATCH/diff_flamegraph.png"
rm -rf "$SCRATCH/profile"
timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
	--user-data-dir="$SCRATCH/profile" --window-size=1200,420 --force-color-profile=srgb \
	--screenshot="$PNG" "file://$SVG" >/dev/null 2>&1
[ -s "$PNG" ] && mkdir -p "$ARTEFACTS" && cp "$PNG" "$ARTEFACTS/" &&
	echo "# screenshot: $ARTEFACTS/${PNG##*/}"
if ! command -v node >/dev/null; then
	skip diff_flamegraph_browser "node not installed (Debian: nodejs)"
	exit 0
fi
node "$(dirname "$0")/flamegraph_pixels.js" diff_flamegraph_pixels "$PNG" "$SVG" || true
rm -rf "$SCRATCH/profile"
timeout 90 node "$(dirname "$0")/diff_flamegraph.js" "$CHROMIUM" "$SVG" "$NEW/offcpu.time.txt" \
	"$SCRATCH/profile" || true
