// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drives the differential flame graph (`offcpu diff --flamegraph`) in headless
 * Chromium the way a user does: hover the frame that grew and read its
 * change in the status line, see it red beside a grey unchanged frame and a
 * blue one that shrank, click to zoom, Ctrl-F to search (the share is of
 * NEW). Prints one "ok NAME" / "FAIL NAME: why" line per check.
 *
 *   node diff_flamegraph.js CHROMIUM SVG NEW_FOLDED USER_DATA_DIR
 *
 * The expected texts follow from the fixtures tests/data/flamegraph/diff-base
 * and diff-new: the lock wait went from 400 ms to 1.20 s of NEW's 1.85 s.
 */
'use strict';
const { Browser, sleep, FRAMES, check, expectedShare, failed } = require('./flamegraph_browser.js');

const svgPath = process.argv[3];
const PLOT = 1200 - 20;

function rgb(fill) {
	return [1, 3, 5].map((i) => parseInt(fill.slice(i, i + 2), 16));
}

async function main() {
	const b = new Browser('file://' + svgPath);
	const timer = setTimeout(() => {
		console.log('FAIL diff_flamegraph_browser: timed out after 60 s');
		b.close().then(() => process.exit(1));
	}, 60000);
	try {
		await b.attach();
		await b.ready();
	} catch (err) {
		console.log(`FAIL diff_flamegraph_browser_load: ${err.message}`);
		clearTimeout(timer);
		await b.close();
		process.exit(1);
	}
	const before = await b.eval(FRAMES);
	const find = (frames, name) => frames.find((f) => f.name === name);

	await check('diff_flamegraph_hover_shows_delta', async () => {
		const f = find(before, 'pthread_mutex_lock');
		await b.mouse('mouseMoved', f.cx, f.cy);
		const details = await b.eval('document.getElementById("details").textContent');
		const want = 'pthread_mutex_lock (user, 1.20 s off-CPU, 64.86%, 1 interval; ' +
			     'base 400 ms, new 1.20 s, delta +800 ms (+200.0%))';
		await b.mouse('mouseMoved', 5, 5);
		return details === want ? null : `status line is "${details}", expected "${want}"`;
	});

	await check('diff_flamegraph_colours_by_change', async () => {
		const grew = rgb(find(before, 'futex_wait').fill), same = find(before, 'accept_loop').fill;
		const shrank = rgb(find(before, 'read_config').fill);
		if (!(grew[0] > grew[1] + 80 && grew[0] > grew[2] + 80))
			return `the grown futex_wait is not red: ${find(before, 'futex_wait').fill}`;
		if (same !== '#dedede')
			return `the unchanged accept_loop is not grey: ${same}`;
		if (!(shrank[2] > shrank[0] + 60 && shrank[2] > shrank[1] + 30))
			return `the shrunk read_config is not blue: ${find(before, 'read_config').fill}`;
		if (find(before, 'cron'))
			return 'cron, only in base, is drawn';
		return null;
	});

	await check('diff_flamegraph_click_zooms', async () => {
		const f = find(before, 'worker_loop');
		await b.click(f.cx, f.cy);
		const after = await b.eval(FRAMES);
		const z = find(after, 'worker_loop'), accept = find(after, 'accept_loop');
		const lock = find(after, 'pthread_mutex_lock');
		if (Math.abs(z.x - 10) > 0.01 || Math.abs(z.w - PLOT) > 0.01)
			return `zoomed frame at x=${z.x} w=${z.w}, not the full width`;
		if (accept.cls !== 'hid')
			return `accept_loop, outside the zoom, has class "${accept.cls}"`;
		/* 1.20 s of worker_loop's 1.35 s. */
		const want = PLOT * 1200 / 1350;
		if (Math.abs(lock.w - want) > 0.05)
			return `pthread_mutex_lock ${lock.w.toFixed(2)} px wide, expected ${want.toFixed(2)}`;
		if (lock.fill !== find(before, 'pthread_mutex_lock').fill)
			return 'zooming changed a colour';
		await b.key('Escape', 'Escape', 27);
		const reset = find(await b.eval(FRAMES), 'accept_loop');
		return reset.cls === '' ? null : `Escape left accept_loop with class "${reset.cls}"`;
	});

	await check('diff_flamegraph_ctrl_f_search', async () => {
		const answered = new Promise((resolve) => {
			b.listeners.push((msg) => {
				if (msg.method === 'Page.javascriptDialogOpening' && msg.params.type === 'prompt') {
					b.send('Page.handleJavaScriptDialog', { accept: true, promptText: 'futex' });
					resolve(true);
				}
			});
		});
		b.key('f', 'KeyF', 70, 2 /* Ctrl */);
		await Promise.race([answered, sleep(5000)]);
		await sleep(200);
		const text = await b.eval('document.getElementById("matched").textContent');
		const want = expectedShare(/futex/);
		if (!text.startsWith(`Matched: ${want} (1.20 s)`))
			return `"${text}", expected "Matched: ${want} (1.20 s)"`;
		await b.key('Escape', 'Escape', 27);
		const frames = await b.eval(FRAMES);
		const f = find(frames, 'futex_wait');
		return f.fill === find(before, 'futex_wait').fill ? null :
			`after Escape futex_wait is ${f.fill}, not its change colour`;
	});

	clearTimeout(timer);
	await b.close();
	process.exit(failed() ? 1 : 0);
}

main();
