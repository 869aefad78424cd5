// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the flame graph screenshot shows, checked against the SVG it was taken
 * of: every frame's box, read from its <rect>, is filled with the frame's
 * colour (search magenta when its name matches the search the URL asked for,
 * which only the SVG's script can have done); the margins show the
 * background gradient; labels and the title have dark glyph pixels where the
 * SVG puts the text. A blank page, a missing script or style sheet, or wrong
 * colours fail. Prints "ok NAME_frames", "ok NAME_background" and
 * "ok NAME_text" (or "FAIL NAME_...: why").
 *
 *   node flamegraph_pixels.js NAME PNG SVG [SEARCH_REGEX]
 *
 * SEARCH_REGEX is the search in the URL the screenshot was taken of (none:
 * no frame is magenta).
 *
 * The PNG is decoded here (zlib is node's own): 8-bit RGB or RGBA, not
 * interlaced, which is what Chromium writes.
 */
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const [name, pngPath, svgPath, search] = process.argv.slice(2);
const MAGENTA = [0xe6, 0x00, 0xe6];
const BG_TOP = [0xf8, 0xf8, 0xf8], BG_BOTTOM = [0xdd, 0xe4, 0xee]; /* the SVG's #bg */
const CHAR_W = 0.59 * 12; /* the writer's mean glyph width for labels */
let failures = 0;

function ok(name) {
	console.log(`ok ${name}`);
}
function fail(name, why) {
	failures++;
	console.log(`FAIL ${name}: ${why}`);
}

function paeth(a, b, c) {
	const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* { width, height, at(x, y) -> [r, g, b] } */
function decodePng(buf) {
	if (buf.toString('hex', 0, 8) !== '89504e470d0a1a0a')
		throw new Error('not a PNG');
	let pos = 8, width, height, depth, type, interlace;
	const idat = [];
	while (pos < buf.length) {
		const len = buf.readUInt32BE(pos), kind = buf.toString('latin1', pos + 4, pos + 8);
		const data = buf.subarray(pos + 8, pos + 8 + len);
		if (kind === 'IHDR') {
			width = data.readUInt32BE(0);
			height = data.readUInt32BE(4);
			depth = data[8];
			type = data[9];
			interlace = data[12];
		} else if (kind === 'IDAT') {
			idat.push(data);
		}
		pos += 12 + len;
	}
	if (depth !== 8 || (type !== 2 && type !== 6) || interlace !== 0)
		throw new Error(`PNG of depth ${depth}, colour type ${type}, interlace ${interlace}`);
	const bpp = type === 6 ? 4 : 3, stride = width * bpp;
	const raw = zlib.inflateSync(Buffer.concat(idat)), px = Buffer.alloc(stride * height);
	for (let y = 0; y < height; y++) {
		const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1);
		for (let i = 0; i < stride; i++) {
			const a = i >= bpp ? px[y * stride + i - bpp] : 0;
			const b = y > 0 ? px[(y - 1) * stride + i] : 0;
			const c = i >= bpp && y > 0 ? px[(y - 1) * stride + i - bpp] : 0;
			const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter];
			px[y * stride + i] = (line[i] + pred) & 0xff;
		}
	}
	return {
		width, height,
		at: (x, y) => Array.from(px.subarray(y * stride + x * bpp, y * stride + x * bpp + 3)),
	};
}

function unescape(s) {
	return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
		.replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

function hex(rgb) {
	return '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
}

function near(a, b, tol) {
	return a.every((v, k) => Math.abs(v - b[k]) <= tol);
}

/* The frames as the SVG file draws them, before its script runs. */
function svgFrames(svg) {
	const re = /<g data-v="\d+"><title>([^\n]*)\n[^<]*<\/title><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="(\d+)" fill="#([0-9a-f]{6})"\/>(?:<text x="([\d.]+)" y="(\d+)">([^<]*)<\/text>)?<\/g>/g;
	const frames = [];
	for (const m of svg.matchAll(re)) {
		const fill = m[6].match(/../g).map((h) => parseInt(h, 16));
		frames.push({
			name: unescape(m[1]), x: +m[2], y: +m[3], w: +m[4], h: +m[5], fill,
			label: m[9] === undefined ? null : unescape(m[9]), tx: +m[7],
		});
	}
	return frames;
}

/* The most frequent colour in a box of whole pixels, and how often it occurs. */
function modeColour(img, x0, y0, x1, y1) {
	const seen = new Map();
	let best = null, n = 0;
	for (let y = y0; y <= y1; y++) {
		for (let x = x0; x <= x1; x++) {
			const c = img.at(x, y), key = c.join(','), k = (seen.get(key) || 0) + 1;
			seen.set(key, k);
			if (k > n) {
				n = k;
				best = c;
			}
		}
	}
	return { colour: best, share: n / ((x1 - x0 + 1) * (y1 - y0 + 1)) };
}

/* Pixels dark enough to be glyphs (the style sheet's text is #000 on light fills). */
function darkPixels(img, x0, y0, x1, y1) {
	let n = 0;
	for (let y = Math.max(0, y0); y <= Math.min(img.height - 1, y1); y++)
		for (let x = Math.max(0, x0); x <= Math.min(img.width - 1, x1); x++)
			n += img.at(x, y).reduce((s, v) => s + v, 0) < 300;
	return n;
}

function main() {
	let img;
	const svg = fs.readFileSync(svgPath, 'utf8');
	const size = svg.match(/<svg [^>]*width="(\d+)" height="(\d+)"/);
	const frames = svgFrames(svg), re = search ? new RegExp(search) : null;

	if (!size)
		throw new Error(`${svgPath}: no <svg> with a width and height`);
	const svgW = +size[1], svgH = +size[2];

	try {
		img = decodePng(fs.readFileSync(pngPath));
	} catch (err) {
		fail(name, `${pngPath}: ${err.message}`);
		return;
	}
	if (img.width < svgW || img.height < svgH) {
		fail(name, `screenshot ${img.width}x${img.height} smaller than the SVG ` +
		     `${svgW}x${svgH}`);
		return;
	}

	/*
	 * Each frame's box, inside its rounded corners and 2 px from the edges (a
	 * hover outline, antialiasing), is mostly its fill: labels cover less.
	 */
	let checked = 0, lit = 0, why = null;
	for (const f of frames) {
		const x0 = Math.ceil(f.x) + 2, x1 = Math.floor(f.x + f.w) - 3;
		const y0 = f.y + 2, y1 = f.y + f.h - 3;
		if (x1 - x0 < 4)
			continue;
		const want = re && re.test(f.name) ? MAGENTA : f.fill, got = modeColour(img, x0, y0, x1, y1);
		checked++;
		lit += want === MAGENTA;
		if (!why && (!near(got.colour, want, 2) || got.share < 0.5))
			why = `"${f.name}" at (${x0}..${x1}, ${y0}..${y1}) shows ${hex(got.colour)} ` +
			      `(${(got.share * 100).toFixed(0)}% of its box), its colour is ${hex(want)}`;
	}
	if (checked < 10 || (re && !lit))
		fail(`${name}_frames`, `only ${checked} frames wide enough, ${lit} searched`);
	else if (why)
		fail(`${name}_frames`, why);
	else
		ok(`${name}_frames`);

	/* The margins left and right of the frames: the vertical gradient, top to bottom. */
	why = null;
	for (let y = 0; y < svgH && !why; y++) {
		const t = (y + 0.5) / svgH, want = BG_TOP.map((v, k) => v + t * (BG_BOTTOM[k] - v));
		for (const x of [1, 5, 8, svgW - 6, svgW - 2]) {
			const got = img.at(x, y);
			if (!near(got, want, 3)) {
				why = `(${x}, ${y}) shows ${hex(got)}, the background there is ` +
				      hex(want.map(Math.round));
				break;
			}
		}
	}
	if (why)
		fail(`${name}_background`, why);
	else
		ok(`${name}_background`);

	/* Labels: glyph pixels in the box the writer fitted the label to; the title above. */
	why = null;
	checked = 0;
	for (const f of frames) {
		if (!f.label || f.label.length < 4)
			continue;
		const x0 = Math.floor(f.tx), x1 = Math.ceil(f.tx + f.label.length * CHAR_W);
		const dark = darkPixels(img, x0, f.y + 1, x1, f.y + f.h - 1);
		checked++;
		if (dark < 3 * f.label.length) {
			why = `label "${f.label}" of "${f.name}" has ${dark} dark pixels in ` +
			      `(${x0}..${x1}, ${f.y + 1}..${f.y + f.h - 1})`;
			break;
		}
	}
	const title = darkPixels(img, svgW / 2 - 120, 8, svgW / 2 + 120, 28);
	if (!why && checked < 5)
		why = `only ${checked} labels of 4 characters or more`;
	if (!why && title < 200)
		why = `the title has ${title} dark pixels`;
	if (why)
		fail(`${name}_text`, why);
	else
		ok(`${name}_text`);
}

try {
	main();
} catch (err) {
	fail(name, err.message);
}
process.exit(failures ? 1 : 0);
