# SPDX-License-Identifier: GPL-2.0-only
# The flame graph in a real browser: `offcpu flamegraph` on a folded fixture,
# the SVG loaded by headless Chromium from a file:// URL. The search a URL
# fragment or query asks for ("#s=REGEX", "?s=REGEX") must show the share
# computed here from the fixture; a screenshot is kept as an artefact and
# flamegraph_pixels.js checks what it shows against the SVG (frame colours,
# background, text); then flamegraph_browser.js drives hover, zoom and Ctrl-F
# through DevTools.
#
# Needs chromium (Debian: chromium) and, for the pixels and the interactive
# part, node.
. "$(dirname "$0")/lib.sh"

FIXTURE="$DATA/flamegraph/lane"
FOLDED="$FIXTURE/offcpu.time.txt"
SVG="$SCRATCH/flamegraph.svg"
ARTEFACTS="${OFFCPU_ARTEFACTS:-/tmp/offcpu-artefacts}"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
trap 'rm -rf "$SCRATCH"' EXIT

chromium_run() { # URL FLAGS...: dump the DOM after load
	local url=$1
	shift
	rm -rf "$SCRATCH/profile"
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--hide-scrollbars --user-data-dir="$SCRATCH/profile" "$@" "$url" 2>"$SCRATCH/chromium.err"
}

# share REGEX: the share of the total whose stack has a frame matching REGEX (POSIX ERE, the
# comm and "all" included), as the SVG prints it: one decimal and "%".
share() {
	awk -v re="$1" '
		/^#/ || NF == 0 { next }
		{
			v = $NF; line = $0; sub(/ [0-9]+$/, "", line)
			n = split(line, f, ";"); total += v; hit = ("all" ~ re)
			for (i = 1; i <= n; i++) if (f[i] != "-" && f[i] ~ re) hit = 1
			if (hit) matched += v
		}
		END { printf "%.1f%%\n", 100 * matched / total }' "$FOLDED"
}

# matched DOM_FILE: the percentage shown after "Matched: ".
matched() {
	sed -n 's/.*<text id="matched"[^>]*>Matched: \([0-9.]*%\).*/\1/p' "$1"
}

if ! "$OFFCPU_BIN" flamegraph "$FIXTURE" -o "$SVG" 2>"$SCRATCH/cli.err"; then
	fail flamegraph_cli_writes_svg "offcpu flamegraph failed: $(head -c 300 "$SCRATCH/cli.err")"
	exit 1
fi
if [ ! -s "$SVG" ] || ! grep -q '<svg ' "$SVG"; then
	fail flamegraph_cli_writes_svg "no SVG written to $SVG"
	exit 1
elif command -v xmllint >/dev/null && ! xmllint --noout "$SVG" 2>"$SCRATCH/xmllint.err"; then
	fail flamegraph_cli_writes_svg "not well-formed XML: $(head -c 300 "$SCRATCH/xmllint.err")"
	exit 1
elif ! grep -q '<g data-v="6375000000"><title>all$' "$SVG"; then
	fail flamegraph_cli_writes_svg "the root is not the fixture's total (6.375 s)"
	exit 1
else
	ok flamegraph_cli_writes_svg
fi

if [ -z "$CHROMIUM" ]; then
	skip flamegraph_browser "chromium not installed (Debian: apt-get install chromium)"
	exit 0
fi

# name REGEX URL-ENCODED-REGEX URL-PART
search_case() {
	local name=$1 re=$2 enc=$3 how=$4 want got
	want=$(share "$re")
	chromium_run "file://$SVG$how$enc" --dump-dom >"$SCRATCH/$name.dom"
	got=$(matched "$SCRATCH/$name.dom")
	if [ "$got" = "$want" ]; then
		ok "$name"
	else
		fail "$name" "searching /$re/ shows '${got:-nothing}', the fixture says $want"
	fi
}

search_case flamegraph_url_search 'futex' 'futex' '#s='
search_case flamegraph_url_query_search '^sh$' '%5Esh%24' '?s='
# Stacks through worker_loop also hold do_futex and futex_wait_queue: counted once.
search_case flamegraph_search_nested_counted_once '^(worker_loop|do_futex|futex_wait_queue)$' \
	'%5E(worker_loop%7Cdo_futex%7Cfutex_wait_queue)%24' '#s='
search_case flamegraph_search_escaped_name 'std::vector<int>' 'std%3A%3Avector%3Cint%3E' '#s='

# Taken in the scratch directory (another run may be writing the artefacts), kept after.
PNG="$SCRATCH/flamegraph_browser.png"
# sRGB whatever the host's display says, so pixels are the SVG's colours.
chromium_run "file://$SVG#s=futex" --window-size=1200,420 --force-color-profile=srgb \
	--screenshot="$PNG" >/dev/null
# A PNG of the window's size: signature, then IHDR width and height.
if [ -s "$PNG" ] && [ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
	[ "$(od -An -tu1 -j16 -N8 "$PNG" | tr -s ' ')" = " 0 0 4 176 0 0 1 164" ]; then
	ok flamegraph_screenshot
	mkdir -p "$ARTEFACTS" && cp "$PNG" "$ARTEFACTS/" && echo "# screenshot: $ARTEFACTS/${PNG##*/}"
else
	fail flamegraph_screenshot "no 1200x420 PNG at $PNG: $(tail -n 2 "$SCRATCH/chromium.err")"
fi

if ! command -v node >/dev/null; then
	skip flamegraph_pixels "node not installed (Debian: nodejs)"
	skip flamegraph_interactive "node not installed (Debian: nodejs)"
	exit 0
fi
node "$(dirname "$0")/flamegraph_pixels.js" flamegraph_pixels "$PNG" "$SVG" futex || true
rm -rf "$SCRATCH/profile"
timeout 90 node "$(dirname "$0")/flamegraph_browser.js" "$CHROMIUM" "$SVG" "$FOLDED" \
	"$SCRATCH/profile" || true
