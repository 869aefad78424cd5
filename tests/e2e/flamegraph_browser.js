// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drives the flame graph SVG in headless Chromium through the DevTools
 * protocol on a pipe (--remote-debugging-pipe: no port, no npm package) the
 * way a user does: hover, click to zoom, Reset Zoom, Ctrl-F and the search
 * prompt, Escape. Prints one "ok NAME" / "FAIL NAME: why" line per check.
 *
 *   node flamegraph_browser.js CHROMIUM SVG FOLDED_FIXTURE USER_DATA_DIR
 *
 * Expected shares come from the folded fixture itself: a stack is matched
 * when any frame on its path (comm and "all" included) matches, which is the
 * share without double counting nested matches.
 *
 * diff_flamegraph.js requires this file for Browser and the helpers (with
 * the same arguments); main() runs only when this file is the program.
 */
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');

const [chromium, svgPath, foldedPath, userDataDir] = process.argv.slice(2);
const WIDTH = 1200, HEIGHT = 420;
let failures = 0;

function ok(name) {
	console.log(`ok ${name}`);
}
function fail(name, why) {
	failures++;
	console.log(`FAIL ${name}: ${why}`);
}

function expectedShare(re) {
	let total = 0, matched = 0;
	for (const line of fs.readFileSync(foldedPath, 'utf8').split('\n')) {
		if (!line || line.startsWith('#'))
			continue;
		const sp = line.lastIndexOf(' ');
		const value = Number(line.slice(sp + 1));
		const frames = ['all', ...line.slice(0, sp).split(';').filter((f) => f !== '-')];
		total += value;
		if (frames.some((f) => re.test(f)))
			matched += value;
	}
	return (100 * matched / total).toFixed(1) + '%';
}

class Browser {
	constructor(url) {
		this.proc = spawn(chromium, [
			'--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--hide-scrollbars', `--window-size=${WIDTH},${HEIGHT}`,
			`--user-data-dir=${userDataDir}`, '--remote-debugging-pipe', url,
		], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
		this.out = this.proc.stdio[3];
		this.id = 0;
		this.pending = new Map();
		this.listeners = [];
		let buf = Buffer.alloc(0);
		this.proc.stdio[4].on('data', (chunk) => {
			buf = Buffer.concat([buf, chunk]);
			let end;
			while ((end = buf.indexOf(0)) >= 0) {
				this.dispatch(JSON.parse(buf.subarray(0, end).toString()));
				buf = buf.subarray(end + 1);
			}
		});
		this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
	}
	dispatch(msg) {
		if (msg.id !== undefined && this.pending.has(msg.id)) {
			const { resolve, reject } = this.pending.get(msg.id);
			this.pending.delete(msg.id);
			if (msg.error)
				reject(new Error(msg.error.message));
			else
				resolve(msg.result);
		} else if (msg.method) {
			for (const l of this.listeners)
				l(msg);
		}
	}
	send(method, params = {}, sessionId = this.session) {
		const id = ++this.id;
		const msg = { id, method, params };
		if (sessionId)
			msg.sessionId = sessionId;
		this.out.write(JSON.stringify(msg) + '\0');
		return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
	}
	async attach() {
		for (let i = 0; i < 100; i++) {
			const { targetInfos } = await this.send('Target.getTargets', {}, null);
			const page = targetInfos.find((t) => t.type === 'page');
			if (page) {
				const r = await this.send('Target.attachToTarget',
					{ targetId: page.targetId, flatten: true }, null);
				this.session = r.sessionId;
				await this.send('Page.enable');
				await this.send('Runtime.enable');
				return;
			}
			await sleep(100);
		}
		throw new Error('no page target');
	}
	async eval(expr) {
		const r = await this.send('Runtime.evaluate', { expression: expr, returnByValue: true });
		if (r.exceptionDetails)
			throw new Error(`${expr}: ${r.exceptionDetails.text}`);
		return r.result.value;
	}
	async ready() {
		for (let i = 0; i < 100; i++) {
			if (await this.eval('document.readyState === "complete" && ' +
					    'document.getElementById("frames") !== null'))
				return;
			await sleep(100);
		}
		throw new Error('the SVG did not load');
	}
	async mouse(type, x, y) {
		await this.send('Input.dispatchMouseEvent',
			{ type, x, y, button: 'left', clickCount: type === 'mouseMoved' ? 0 : 1 });
	}
	async click(x, y) {
		await this.mouse('mouseMoved', x, y);
		await this.mouse('mousePressed', x, y);
		await this.mouse('mouseReleased', x, y);
	}
	async key(key, code, vk, modifiers = 0) {
		await this.send('Input.dispatchKeyEvent',
			{ type: 'rawKeyDown', key, code, windowsVirtualKeyCode: vk, modifiers });
		await this.send('Input.dispatchKeyEvent',
			{ type: 'keyUp', key, code, windowsVirtualKeyCode: vk, modifiers });
	}
	close() {
		this.proc.kill('SIGKILL');
		return this.exited;
	}
}

function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/* The frames as the page shows them: name, on-screen box, class, label. */
const FRAMES = `Array.from(document.getElementById("frames").children).map((g) => {
	const r = g.querySelector("rect"), b = r.getBoundingClientRect(), t = g.querySelector("text");
	return { name: g.querySelector("title").textContent.split("\\n")[0], x: +r.getAttribute("x"),
		 w: +r.getAttribute("width"), y: +r.getAttribute("y"), cls: g.getAttribute("class") || "",
		 fill: r.getAttribute("fill"), label: t ? t.textContent : "",
		 cx: b.left + b.width / 2, cy: b.top + b.height / 2 };
})`;

async function check(name, fn) {
	try {
		const why = await fn();
		if (why)
			fail(name, why);
		else
			ok(name);
	} catch (err) {
		fail(name, err.message);
	}
}

async function main() {
	const b = new Browser('file://' + svgPath);
	const timer = setTimeout(() => {
		fail('flamegraph_browser', 'timed out after 60 s');
		b.close().then(() => process.exit(1));
	}, 60000);
	try {
		await b.attach();
		await b.ready();
	} catch (err) {
		fail('flamegraph_browser_load', err.message);
		clearTimeout(timer);
		await b.close();
		process.exit(1);
	}
	const plot = WIDTH - 20;
	const before = await b.eval(FRAMES);
	const find = (frames, name) => frames.find((f) => f.name === name);

	await check('flamegraph_hover_shows_details', async () => {
		const f = find(before, 'worker_loop');
		await b.mouse('mouseMoved', f.cx, f.cy);
		const details = await b.eval('document.getElementById("details").textContent');
		if (!/^worker_loop \(user, 2\.81 s off-CPU, 44\.08%, 5 intervals\)$/.test(details))
			return `status line is "${details}"`;
		await b.mouse('mouseMoved', 5, 5);
		const rest = await b.eval('document.getElementById("details").textContent');
		return rest === '' ? null : `status line not restored: "${rest}"`;
	});

	await check('flamegraph_click_zooms', async () => {
		const f = find(before, 'worker_loop');
		await b.click(f.cx, f.cy);
		const after = await b.eval(FRAMES);
		const z = find(after, 'worker_loop'), main = find(after, 'main');
		const server = find(after, 'server'), poller = find(after, 'poller');
		const lock = find(after, 'pthread_mutex_lock'), sh = find(after, 'sh');
		const lockBefore = find(before, 'pthread_mutex_lock');
		if (Math.abs(z.x - 10) > 0.01 || Math.abs(z.w - plot) > 0.01)
			return `zoomed frame at x=${z.x} w=${z.w}, not the full width`;
		if (main.cls !== 'anc' || server.cls !== 'anc' || Math.abs(main.w - plot) > 0.01)
			return `ancestors not shown dimmed at full width: ${main.cls} ${server.cls} ${main.w}`;
		if (poller.cls !== 'hid' || sh.cls !== 'hid')
			return `frames outside the zoomed one not hidden: ${poller.cls} ${sh.cls}`;
		const ratio = lock.w / lockBefore.w, want = plot / find(before, 'worker_loop').w;
		if (Math.abs(ratio - want) > 0.01 * want)
			return `child widened ${ratio.toFixed(3)}x, expected ${want.toFixed(3)}x`;
		if (!lock.label.startsWith('pthread_mutex_lock'))
			return `child label not refitted: "${lock.label}"`;
		const unzoom = await b.eval('document.getElementById("unzoom").getAttribute("class")');
		if (unzoom !== 'btn')
			return `Reset Zoom not shown (class "${unzoom}")`;
		const hash = await b.eval('location.hash');
		return /z=\d+/.test(hash) ? null : `zoom not kept in the URL: "${hash}"`;
	});

	await check('flamegraph_reset_zoom', async () => {
		const c = await b.eval(`(() => { const b = document.getElementById("unzoom")
			.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()`);
		await b.click(c[0], c[1]);
		const after = await b.eval(FRAMES);
		for (let i = 0; i < before.length; i++) {
			if (Math.abs(after[i].x - before[i].x) > 0.011 ||
			    Math.abs(after[i].w - before[i].w) > 0.011 || after[i].cls !== '')
				return `${after[i].name} at x=${after[i].x} w=${after[i].w} class "${after[i].cls}", ` +
				       `was x=${before[i].x} w=${before[i].w}`;
		}
		return null;
	});

	await check('flamegraph_ctrl_f_search', async () => {
		const answered = new Promise((resolve) => {
			b.listeners.push((msg) => {
				if (msg.method === 'Page.javascriptDialogOpening' && msg.params.type === 'prompt') {
					b.send('Page.handleJavaScriptDialog',
						{ accept: true, promptText: '^(worker_loop|do_futex|futex_wait_queue)$' });
					resolve(true);
				}
			});
		});
		b.key('f', 'KeyF', 70, 2 /* Ctrl */);
		await Promise.race([answered, sleep(5000)]);
		await sleep(200);
		const text = await b.eval('document.getElementById("matched").textContent');
		const want = expectedShare(/^(worker_loop|do_futex|futex_wait_queue)$/);
		if (!text.startsWith(`Matched: ${want} (`))
			return `"${text}", expected "Matched: ${want} (...)"`;
		const frames = await b.eval(FRAMES);
		const lit = frames.filter((f) => f.fill === '#e600e6').map((f) => f.name);
		if (!lit.includes('worker_loop') || !lit.includes('do_futex') || lit.includes('main'))
			return `highlighted: ${lit.join(',')}`;
		return null;
	});

	await check('flamegraph_escape_resets', async () => {
		await b.key('Escape', 'Escape', 27);
		const text = await b.eval('document.getElementById("matched").textContent');
		const frames = await b.eval(FRAMES);
		const lit = frames.filter((f) => f.fill === '#e600e6').length;
		return text === '' && lit === 0 ? null : `matched "${text}", ${lit} frames still lit`;
	});

	clearTimeout(timer);
	await b.close();
	process.exit(failures ? 1 : 0);
}

if (require.main === module)
	main();
module.exports = { Browser, sleep, FRAMES, check, expectedShare, failed: () => failures };
