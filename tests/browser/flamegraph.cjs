// flamegraph.cjs - drives buildtrace's flame graph SVG in headless Chromium (puppeteer-core) and
// checks it against the folded stacks it was made from, laid out here independently: every box
// where it belongs and painted there, clicking a box zooms into it (its subtree fills the width,
// everything else but its ancestors is hidden), Reset Zoom undoes it, search and tooltips report
// the right share of samples. Prints "ok ..." per check; exits 1 at the first failure.
// Usage: node flamegraph.cjs SVG FOLDED OUTDIR   (screenshots go to OUTDIR; BT_CHROMIUM: browser)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [svgPath, foldedPath, outDir] = process.argv.slice(2);
function fail(msg) {
	console.log('FAIL ' + msg);
	process.exitCode = 1;
	throw new Error(msg);
}
const ok = (msg) => console.log('ok ' + msg);
const near = (a, b, tol) => Math.abs(a - b) <= tol;

// The layout from the folded lines: sorted frame by frame (';' below every other character), a box
// per distinct prefix, placed at the samples before it.
function layout(text) {
	const lines = text.split('\n').filter((l) => l.trim()).map((l) => {
		const sp = l.lastIndexOf(' ');
		return { frames: l.slice(0, sp).split(';'), count: Number(l.slice(sp + 1)) };
	});
	const key = (fr) => fr.join('\u0000');
	lines.sort((a, b) => (key(a.frames) < key(b.frames) ? -1 : key(a.frames) > key(b.frames) ? 1 : 0));
	const boxes = new Map();
	let x = 0;
	for (const l of lines) {
		for (let d = 0; d < l.frames.length; d++) {
			const p = key(l.frames.slice(0, d + 1));
			if (!boxes.has(p))
				boxes.set(p, { path: l.frames.slice(0, d + 1), name: l.frames[d], depth: d + 1, s: x, n: 0 });
			boxes.get(p).n += l.count;
		}
		x += l.count;
	}
	return { boxes: [...boxes.values()], lines, total: x };
}

async function main() {
	const want = layout(fs.readFileSync(foldedPath, 'utf8'));
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bt-chromium-'));
	const browser = await puppeteer.launch({
		executablePath: process.env.BT_CHROMIUM || '/usr/bin/chromium',
		headless: true,
		timeout: 60000,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--user-data-dir=' + profileDir],
	});
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
		await page.setViewport({ width: 1300, height: 900 });
		await page.goto('file://' + path.resolve(svgPath), { waitUntil: 'load' });
		// a frame for the onload handler to have run
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
		if (errors.length)
			fail('script errors: ' + errors.join('; '));
		ok('loaded without script errors');

		const info = () => page.evaluate(() => {
			const svg = document.documentElement;
			return {
				W: +svg.getAttribute('data-width'), total: +svg.getAttribute('data-total'),
				boxes: [...document.querySelectorAll('g.f')].map((g) => {
					const r = g.querySelector('rect').getBoundingClientRect();
					return { name: g.getAttribute('data-name'), depth: +g.getAttribute('data-d'),
						s: +g.getAttribute('data-s'), n: +g.getAttribute('data-n'),
						shown: getComputedStyle(g).display !== 'none', x: r.x, y: r.y, w: r.width, h: r.height,
						title: g.querySelector('title').textContent };
				}),
			};
		});
		const before = await info();
		if (before.total !== want.total)
			fail(`data-total ${before.total}, the folded stacks hold ${want.total}`);
		const tag = (b) => `${b.depth}|${b.s}|${b.n}|${b.name}`;
		const got = new Set(before.boxes.filter((b) => b.depth > 0).map(tag));
		const exp = new Set(want.boxes.map(tag));
		if (got.size !== exp.size || [...exp].some((t) => !got.has(t)))
			fail(`boxes differ from the folded layout: ${[...exp].filter((t) => !got.has(t)).slice(0, 3)}`);
		ok(`${exp.size} boxes where the folded stacks put them`);
		const scale = before.boxes.find((b) => b.depth === 0).w / before.W;
		for (const b of before.boxes) {
			const w = b.n / want.total * before.W * scale;
			if (!b.shown || !near(b.w, Math.max(w - 0.5 * scale, 0.1 * scale), 1.5))
				fail(`box ${b.name} is ${b.w}px wide, ${w}px expected`);
		}
		ok('every box as wide as its share of samples');

		// the box to zoom into: one with children below the comm, nearest to half the samples
		const kids = (p) => want.boxes.filter((b) => b.depth === p.depth + 1 && b.path.slice(0, p.depth).join(';') === p.path.join(';'));
		const target = want.boxes.filter((b) => b.depth >= 2 && kids(b).length)
			.sort((a, b) => Math.abs(a.n - want.total / 2) - Math.abs(b.n - want.total / 2))[0];
		if (!target)
			fail('the folded stacks offer no box to zoom into');
		const tb = before.boxes.find((b) => tag(b) === tag(target));
		const cx = tb.x + Math.min(tb.w / 2, 20), cy = tb.y + tb.h / 2;
		const hit = await page.evaluate((x, y) => {
			const e = document.elementFromPoint(x, y);
			const g = e && e.closest('g.f');
			return g ? g.getAttribute('data-name') + '|' + g.getAttribute('data-d') : null;
		}, cx, cy);
		if (hit !== `${target.name}|${target.depth}`)
			fail(`the browser paints ${hit} where ${target.name} belongs`);
		ok(`${target.name} is painted where it belongs`);

		// tooltip: hovering shows the box's samples and share
		await page.mouse.move(cx, cy);
		const details = await page.$eval('#details', (e) => e.textContent);
		const pct = (100 * target.n / want.total).toFixed(2);
		if (details !== `${target.name} (${target.n} samples, ${pct}%)`)
			fail(`hover shows '${details}'`);
		ok(`hover shows ${details}`);
		await page.screenshot({ path: path.join(outDir, 'flame-before.png') });

		await page.mouse.click(cx, cy);
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
		const zoomed = await info();
		const inSub = (b) => b.path.length >= target.path.length && b.path.slice(0, target.depth).join(';') === target.path.join(';');
		const isAnc = (b) => b.depth < target.depth && target.path.slice(0, b.depth).join(';') === b.path.join(';');
		const expShown = new Set(want.boxes.filter((b) => inSub(b) || isAnc(b)).map(tag));
		const shown = zoomed.boxes.filter((b) => b.shown && b.depth > 0);
		if (shown.length !== expShown.size || shown.some((b) => !expShown.has(tag(b))))
			fail(`after the click ${shown.length} boxes show, ${expShown.size} expected`);
		const full = zoomed.boxes.find((b) => tag(b) === tag(target));
		if (!near(full.w, (zoomed.W - 0.5) * scale, 1.5))
			fail(`the clicked box is ${full.w}px wide, not the full ${zoomed.W * scale}px`);
		for (const k of kids(target)) {
			const zb = zoomed.boxes.find((b) => tag(b) === tag(k));
			const w = k.n / target.n * zoomed.W * scale;
			if (!near(zb.w, Math.max(w - 0.5 * scale, 0.1 * scale), 1.5))
				fail(`child ${k.name} is ${zb.w}px wide after the zoom, ${w}px expected`);
		}
		const reset = await page.$eval('#reset', (e) => getComputedStyle(e).opacity);
		if (reset !== '1')
			fail('Reset Zoom is not shown after zooming');
		ok(`clicking ${target.name} zooms: it fills the width, its ${kids(target).length} children scale, ` +
			`${zoomed.boxes.length - 1 - shown.length} other boxes hide`);
		await page.screenshot({ path: path.join(outDir, 'flame-zoomed.png') });

		const rr = await page.$eval('#reset', (e) => { const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; });
		await page.mouse.click(rr[0], rr[1]);
		const after = await info();
		if (after.boxes.some((b) => !b.shown) ||
		    !near(after.boxes.find((b) => tag(b) === tag(target)).w, tb.w, 0.5))
			fail('Reset Zoom did not restore the full view');
		ok('Reset Zoom restores the full view');

		// search: every sample under a box of that name, counted once
		page.once('dialog', (d) => d.accept('^' + target.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$'));
		const sr = await page.$eval('#search', (e) => { const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; });
		await page.mouse.click(sr[0], sr[1]);
		await page.waitForFunction(() => document.getElementById('matched').textContent.trim() !== '', { timeout: 5000 });
		const matched = await page.$eval('#matched', (e) => e.textContent);
		const covered = want.lines.filter((l) => l.frames.includes(target.name)).reduce((a, l) => a + l.count, 0);
		const expMatched = 'Matched: ' + (100 * covered / want.total).toFixed(1) + '%';
		if (matched !== expMatched)
			fail(`search shows '${matched}', expected '${expMatched}'`);
		ok(`search for ${target.name}: ${matched}`);
		if (errors.length)
			fail('script errors: ' + errors.join('; '));
	} finally {
		await browser.close();
		fs.rmSync(profileDir, { recursive: true, force: true });
	}
}

main().catch((e) => {
	if (!process.exitCode)
		console.log('FAIL ' + (e && e.stack ? e.stack : e));
	process.exitCode = 1;
});
