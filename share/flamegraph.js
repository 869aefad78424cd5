// SPDX-License-Identifier: GPL-2.0-only
"use strict";
var frames = [], box, details, rest, matched, unzoomBtn, searchBtn, term = "", zoomed = 0;

function fmt(v) {
	if (fg.count)
		return v + (v === 1 ? " interval" : " intervals");
	var units = ["ns", "us", "ms", "s"], i = 0;
	while (i < 3 && v >= 999.5) {
		v /= 1000;
		i++;
	}
	if (i === 0)
		return v + " ns";
	return v.toFixed(v < 9.995 ? 2 : v < 99.95 ? 1 : 0) + " " + units[i];
}

/* The longest start of s, at most max long, that does not end inside [brackets]. */
function cut(s, max) {
	var best = 0, depth = 0;
	for (var i = 0; i < s.length && i <= max; i++) {
		if (!depth)
			best = i;
		if (s[i] === "[")
			depth++;
		else if (s[i] === "]" && depth)
			depth--;
	}
	return i === s.length && i <= max && !depth ? i : best;
}

function label(f, x, w) {
	var n = Math.floor((w - 6) / fg.cw), s = "", k;
	if (f.name.length <= n)
		s = f.name;
	else if (n >= 3 && (k = cut(f.name, n - 2)))
		s = f.name.slice(0, k) + "..";
	if (!f.t) {
		if (!s)
			return;
		f.t = document.createElementNS("http://www.w3.org/2000/svg", "text");
		f.t.setAttribute("y", +f.r.getAttribute("y") + fg.fh - 5);
		f.g.appendChild(f.t);
	}
	f.t.setAttribute("x", (x + 3).toFixed(2));
	f.t.textContent = s;
}

function place(f, x, w, cls) {
	f.r.setAttribute("x", x.toFixed(2));
	f.r.setAttribute("width", w.toFixed(2));
	label(f, x, w);
	if (cls)
		f.g.setAttribute("class", cls);
	else
		f.g.removeAttribute("class");
}

/* Zoom to z: its ancestors span the width (dimmed), its subtree widens, the rest hides. */
function zoom(z) {
	var plot = fg.width - 2 * fg.pad, scale = z.v > 0 ? plot / z.v : 0;
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i];
		if (i <= z.i && z.i < f.end)
			place(f, fg.pad, plot, i < z.i ? "anc" : "");
		else if (i > z.i && i < z.end)
			place(f, fg.pad + (f.off - z.off) * scale, f.v * scale, "");
		else
			f.g.setAttribute("class", "hid");
	}
	zoomed = z.i;
	unzoomBtn.setAttribute("class", z.i ? "btn" : "btn hid");
	keep();
}

/* Matches nested inside a counted match are part of its width: count them once. */
function search(s) {
	var re = null, flags = "", sum = 0, end = -1;
	if (s) {
		var src = s;
		if (src.slice(0, 4) === "(?i)") {
			src = src.slice(4);
			flags = "i";
		}
		try {
			re = new RegExp(src, flags);
		} catch (err) {
			details.textContent = "Not a regular expression: " + s;
			return;
		}
	}
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i], m = re !== null && re.test(f.name);
		f.r.setAttribute("fill", m ? "#e600e6" : f.fill);
		if (m && i >= end) {
			sum += f.v;
			end = f.end;
		}
	}
	term = re ? s : "";
	searchBtn.textContent = re ? "Reset Search" : "Search";
	if (re) {
		var total = frames[0].v, pct = total > 0 ? 100 * sum / total : 0;
		matched.textContent = "Matched: " + pct.toFixed(1) + "% (" + fmt(sum) + ")";
	} else {
		matched.textContent = "";
	}
	keep();
}

function ask() {
	var s = prompt("Search frames (a regular expression; (?i) first ignores case):", term);
	if (s !== null)
		search(s);
}

/* Keep the view in the URL so that it can be reloaded or shared. */
function keep() {
	var h = [];
	if (term)
		h.push("s=" + encodeURIComponent(term));
	if (zoomed)
		h.push("z=" + zoomed);
	var url = h.length ? "#" + h.join("&") : location.pathname + location.search;
	try {
		history.replaceState(null, "", url);
	} catch (err) {
	}
}

function params() {
	var p = {}, parts = (location.search.slice(1) + "&" + location.hash.slice(1)).split("&");
	for (var i = 0; i < parts.length; i++) {
		var eq = parts[i].indexOf("=");
		if (eq > 0) {
			try {
				p[parts[i].slice(0, eq)] = decodeURIComponent(parts[i].slice(eq + 1));
			} catch (err) {
			}
		}
	}
	return p;
}

function hit(e) {
	var n = e.target;
	while (n && n.parentNode !== box)
		n = n.parentNode;
	return n ? frames[n.fgi] : null;
}

function init() {
	box = document.getElementById("frames");
	details = document.getElementById("details");
	matched = document.getElementById("matched");
	unzoomBtn = document.getElementById("unzoom");
	searchBtn = document.getElementById("search");
	rest = details.textContent;
	var gs = box.children, open = [];
	for (var i = 0; i < gs.length; i++) {
		var g = gs[i], r = g.querySelector("rect"), y = +r.getAttribute("y");
		var title = g.querySelector("title").textContent, nl = title.indexOf("\n");
		var f = { i: i, g: g, r: r, t: g.querySelector("text"), off: 0, next: 0, end: 0,
			  name: title.slice(0, nl), info: title.slice(nl + 1),
			  v: +g.getAttribute("data-v"), fill: r.getAttribute("fill"),
			  d: Math.round((fg.icicle ? y - fg.base : fg.base - y) / fg.fh) };
		while (open.length && open[open.length - 1].d >= f.d)
			open.pop().end = i;
		if (open.length) {
			var p = open[open.length - 1];
			f.off = p.next;
			p.next += f.v;
		}
		f.next = f.off;
		open.push(f);
		frames.push(f);
		g.fgi = i;
	}
	while (open.length)
		open.pop().end = frames.length;
	if (!frames.length)
		return;
	box.addEventListener("click", function (e) {
		var f = hit(e);
		if (f)
			zoom(f);
	});
	box.addEventListener("mouseover", function (e) {
		var f = hit(e);
		if (f)
			details.textContent = f.name + " (" + f.info + ")";
	});
	box.addEventListener("mouseout", function () {
		details.textContent = rest;
	});
	unzoomBtn.addEventListener("click", function () {
		zoom(frames[0]);
	});
	searchBtn.addEventListener("click", function () {
		if (term)
			search("");
		else
			ask();
	});
	window.addEventListener("keydown", function (e) {
		var find = (e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F");
		if (find || e.key === "F3") {
			e.preventDefault();
			ask();
		} else if (e.key === "Escape") {
			search("");
			zoom(frames[0]);
		}
	});
	var p = params();
	if (p.z && frames[+p.z])
		zoom(frames[+p.z]);
	if (p.s)
		search(p.s);
}
init();
