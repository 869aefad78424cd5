# SPDX-License-Identifier: GPL-2.0-only
# A small SVG line plot, so that the suite draws its own figures without gnuplot.
#
#   awk -f bench/plot.awk -v title=T -v xlabel=X -v ylabel=Y [-v logx=1] [-v logy=1] \
#       DATA > plot.svg
#
# DATA: one point a line, "SERIES X Y" (SERIES without spaces; '_' shows as a space),
# points of a series in the order they are to be joined. Lines starting with '#' and
# points that are not numbers (a variant not measured) are skipped.

function tx(x) { return L + (T(x, logx) - x0) / (x1 - x0) * (W - L - R) }
function ty(y) { return H - B - (T(y, logy) - y0) / (y1 - y0) * (H - B - TOP) }
function T(v, lg) { return lg ? log(v) / log(10) : v }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
function num(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
# A round tick step (1, 2 or 5 times a power of ten) giving about five ticks.
function nice(span,   raw, mag) {
	raw = span / 5
	mag = 10 ^ int(log(raw) / log(10) - (raw < 1))
	return raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag
}
function label(v,   a) {
	a = v < 0 ? -v : v
	if (a >= 1e9) return sprintf("%gG", v / 1e9)
	if (a >= 1e6) return sprintf("%gM", v / 1e6)
	if (a >= 1e3) return sprintf("%gk", v / 1e3)
	return sprintf("%g", v)
}

/^#/ || NF < 3 { next }
!num($2) || !num($3) { next }
(logx && $2 <= 0) || (logy && $3 <= 0) { next }
{
	if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
	n = ++np[$1]
	px[$1, n] = $2
	py[$1, n] = $3
	if (!init || T($2, logx) < x0) x0 = T($2, logx)
	if (!init || T($2, logx) > x1) x1 = T($2, logx)
	if (!init || T($3, logy) < y0) y0 = T($3, logy)
	if (!init || T($3, logy) > y1) y1 = T($3, logy)
	init = 1
}

END {
	W = 640; H = 400; L = 70; R = 20; TOP = 40; B = 50
	split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #17becf #7f7f7f", col, " ")
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" ", W, H
	printf "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	printf "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
		W / 2, esc(title)
	if (!init) {
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n</svg>\n", W / 2, H / 2
		exit
	}
	# Axes start at 0 on a linear scale, at whole decades on a log scale.
	if (logx) { x0 = int(x0 - (x0 < 0)); x1 = (x1 == int(x1)) ? x1 : int(x1) + 1 }
	if (logy) { y0 = int(y0 - (y0 < 0)); y1 = (y1 == int(y1)) ? y1 : int(y1) + 1 }
	if (x1 == x0) x1 = x0 + 1
	if (y1 == y0) y1 = y0 + 1
	if (!logy) { if (y0 > 0) y0 = 0; ys = nice(y1 - y0); y1 = ys * int(y1 / ys + 0.999999) }
	if (!logx) { xs = nice(x1 - x0); x0 = xs * int(x0 / xs); x1 = xs * int(x1 / xs + 0.999999) }
	printf "<g stroke=\"#ccc\">\n"
	for (k = 0; k <= (logx ? x1 - x0 : (x1 - x0) / xs + 0.5); k++) {
		v = logx ? x0 + k : x0 + k * xs
		x = L + (v - x0) / (x1 - x0) * (W - L - R)
		printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, TOP, x, H - B
		xt[k] = x; xl[k] = label(logx ? 10 ^ v : v); nx = k
	}
	for (k = 0; k <= (logy ? y1 - y0 : (y1 - y0) / ys + 0.5); k++) {
		v = logy ? y0 + k : y0 + k * ys
		y = H - B - (v - y0) / (y1 - y0) * (H - B - TOP)
		printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", L, y, W - R, y
		yt[k] = y; yl[k] = label(logy ? 10 ^ v : v); ny = k
	}
	printf "</g>\n<g text-anchor=\"middle\">\n"
	for (k = 0; k <= nx; k++)
		printf "<text x=\"%.1f\" y=\"%d\">%s</text>\n", xt[k], H - B + 16, xl[k]
	printf "<text x=\"%d\" y=\"%d\">%s</text>\n</g>\n", (L + W - R) / 2, H - 12, esc(xlabel)
	printf "<g text-anchor=\"end\">\n"
	for (k = 0; k <= ny; k++)
		printf "<text x=\"%d\" y=\"%.1f\">%s</text>\n", L - 6, yt[k] + 4, yl[k]
	printf "</g>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
		(TOP + H - B) / 2, esc(ylabel)
	printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
		L, TOP, W - L - R, H - B - TOP
	for (s = 1; s <= ns; s++) {
		name = order[s]; c = col[(s - 1) % 8 + 1]
		printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c
		for (i = 1; i <= np[name]; i++)
			printf "%.1f,%.1f ", tx(px[name, i]), ty(py[name, i])
		printf "\"/>\n"
		for (i = 1; i <= np[name]; i++)
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				tx(px[name, i]), ty(py[name, i]), c
		shown = name; gsub(/_/, " ", shown)
		printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>", L + 10, TOP + 6 + 16 * s, c
		printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + 28, TOP + 12 + 16 * s, esc(shown)
	}
	printf "</svg>\n"
}
