// heatmap.cjs - drives buildtrace's heat map SVG in headless Chromium (puppeteer-core) and checks it
// against the perf script output of the same session (--per-thread): every sample counted in its
// cell (second and 20 ms step), the flame graph of the whole session laid out from those samples,
// and, after clicking a first and a last cell, the flame graph of the samples between them only.
// Prints "ok ..." per check; exits 1 at the first failure.
// Usage: node heatmap.cjs SVG PERF_SCRIPT OUTDIR   (screenshots go to OUTDIR; BT_CHROMIUM: browser)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [svgPath, scriptPath, outDir] = process.argv.slice(2);
function fail(msg) {
	console.log('FAIL ' + msg);
	process.exitCode = 1;
	throw new Error(msg);
}
const ok = (msg) => console.log('ok ' + msg);

// Samples of the perf script text: the folded line (comm-PID/TID first) and the time in ns, known to
// the microsecond: [t, t + 1000).
function samples(text) {
	const out = [];
	for (const block of text.split('\n\n')) {
		const lines = block.split('\n').filter((l) => l && !l.startsWith('#'));
		if (!lines.length)
			continue;
		const m = /^(.+?) +(\d+)\/(\d+) +\[\d+\] +(\d+)\.(\d{6}): /.exec(lines[0]);
		if (!m)
			fail('no event line: ' + lines[0]);
		const frames = lines.slice(1).map((l) => {
			const f = /^\t *[0-9a-f]+ (.+) \(([^()]*)\)$/.exec(l) || fail('no frame line: ' + l);
			const kernel = f[2].startsWith('[') && !['[unknown]', '[vdso]', '[vsyscall]'].includes(f[2]);  // [vdso]: user space's
			return f[1].replace(/\+0x[\da-f]+$/, '') + (kernel ? '_[k]' : '');
		}).reverse();
		out.push({ line: [`${m[1]}-${m[2]}/${m[3]}`].concat(frames).join(';'), t: BigInt(m[4]) * 1000000000n + BigInt(m[5]) * 1000n });
	}
	return out;
}

// The flame graph layout of folded lines: sorted frame by frame, a box per distinct prefix.
function layout(lines) {
	const key = (fr) => fr.join('\u0000');
	const sorted = [...lines.entries()].map(([l, n]) => ({ frames: l.split(';'), n }))
		.sort((a, b) => (key(a.frames) < key(b.frames) ? -1 : key(a.frames) > key(b.frames) ? 1 : 0));
	const boxes = new Map();
	let x = 0;
	for (const l of sorted) {
		for (let d = 0; d < l.frames.length; d++) {
			const p = key(l.frames.slice(0, d + 1));
			if (!boxes.has(p))
				boxes.set(p, { name: l.frames[d], depth: d + 1, s: x, n: 0 });
			boxes.get(p).n += l.n;
		}
		x += l.n;
	}
	return { tags: new Set([...boxes.values()].map((b) => `${b.depth}|${b.s}|${b.n}|${b.name}`)), total: x };
}

async function main() {
	const all = samples(fs.readFileSync(scriptPath, 'utf8'));
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
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
		if (errors.length)
			fail('script errors: ' + errors.join('; '));
		const root = await page.evaluate(() => {
			const s = document.documentElement;
			return { t0: s.getAttribute('data-start-ns'), bucket: s.getAttribute('data-bucket-ns'), rows: +s.getAttribute('data-rows'),
				total: +s.getAttribute('data-total'),
				cells: [...document.querySelectorAll('rect.c')].map((r) => [+r.getAttribute('data-c'), +r.getAttribute('data-r'), +r.getAttribute('data-n')]) };
		});
		const t0 = BigInt(root.t0), bucket = BigInt(root.bucket);
		if (root.total !== all.length)
			fail(`data-total ${root.total}, the perf script output holds ${all.length} samples`);
		// each sample in its cell: the cells its microsecond may lie in, one of them holding it
		const held = new Map(root.cells.map(([c, r, n]) => [c * root.rows + r, n]));
		const byCell = new Map();
		for (const s of all) {
			const lo = Number((s.t - t0) / bucket), hi = Number((s.t + 999n - t0) / bucket);
			s.cell = held.has(lo) ? lo : hi;
			byCell.set(s.cell, (byCell.get(s.cell) || 0) + 1);
		}
		for (const [cell, n] of held)
			if (byCell.get(cell) !== n)
				fail(`cell ${cell} holds ${n} samples, the perf script output ${byCell.get(cell) || 0} there`);
		ok(`${all.length} samples in ${held.size} cells, each where its time puts it`);

		const flame = () => page.evaluate(() => {
			const g = document.getElementById('flame');
			return { total: +g.getAttribute('data-total'),
				tags: [...g.querySelectorAll('g.f')].filter((f) => +f.getAttribute('data-d') > 0)
					.map((f) => `${f.getAttribute('data-d')}|${f.getAttribute('data-s')}|${f.getAttribute('data-n')}|${f.getAttribute('data-name')}`) };
		});
		const expect = (got, want, what) => {
			if (got.total !== want.total)
				fail(`${what}: the flame graph holds ${got.total} samples, ${want.total} expected`);
			if (got.tags.length !== want.tags.size || got.tags.some((t) => !want.tags.has(t)))
				fail(`${what}: boxes differ, e.g. ${got.tags.filter((t) => !want.tags.has(t)).slice(0, 2)} / ${[...want.tags].filter((t) => !got.tags.includes(t)).slice(0, 2)}`);
			ok(`${what}: ${want.tags.size} boxes, ${want.total} samples, laid out as the samples fold`);
		};
		const fold = (list) => {
			const m = new Map();
			for (const s of list)
				m.set(s.line, (m.get(s.line) || 0) + 1);
			return layout(m);
		};
		expect(await flame(), fold(all), 'the whole session');

		// a range: from the first cell with samples after the first second to the middle one of
		// those after it
		const cells = [...held.keys()].sort((a, b) => a - b).filter((c) => c >= root.rows);
		if (cells.length < 2)
			fail('too few cells with samples after the first second');
		const a = cells[0], b = cells[Math.floor(cells.length / 2)];
		const click = async (cell) => {
			const r = await page.$(`rect.c[data-c="${Math.floor(cell / root.rows)}"][data-r="${cell % root.rows}"]`);
			const box = await r.boundingBox();
			await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
		};
		await click(b);
		await click(a);
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
		const inRange = all.filter((s) => s.cell >= a && s.cell <= b);
		expect(await flame(), fold(inRange), `cells ${a} to ${b} (clicked last first)`);
		await page.screenshot({ path: path.join(outDir, 'heatmap-range.png') });
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
