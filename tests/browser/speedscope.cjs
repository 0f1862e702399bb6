// speedscope.cjs - loads buildtrace's perf-script output into speedscope (its npm package's page, in
// headless Chromium, as `speedscope FILE` opens it) and checks what speedscope made of it against
// the same session's folded stacks (written with --per-thread): the file's samples fold to exactly
// those lines, speedscope imports it as perf script output with a profile per thread, and each
// profile's samples are the file's samples of that thread in time order (consecutive equal stacks
// merged, as speedscope keeps them), weighted by their times. Prints "ok ..." per check; exits 1 at
// the first failure.
// Usage: node speedscope.cjs PERF_SCRIPT FOLDED OUTDIR   (BT_CHROMIUM: browser; NODE_PATH: npm packages)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [scriptPath, foldedPath, outDir] = process.argv.slice(2);
function fail(msg) {
	console.log('FAIL ' + msg);
	process.exitCode = 1;
	throw new Error(msg);
}
const ok = (msg) => console.log('ok ' + msg);

// The perf script text, read by its layout: a "# " header, then per sample an event line
// "comm pid/tid [cpu] sec.usec: period cpu-clock: " and "\tADDR NAME (FILE)" frame lines, innermost
// first, and an empty line.
function parsePerfScript(text) {
	const samples = [];
	const lines = text.split('\n');
	let i = 0;
	while (i < lines.length && lines[i].startsWith('#'))
		i++;
	if (i === 0)
		fail('no "# ========" header');
	for (; i < lines.length; i++) {
		if (lines[i] === '')
			continue;
		const m = /^(.+?) +(\d+)\/(\d+) +\[(\d{3,})\] +(\d+)\.(\d{6}): +(\d+) cpu-clock: $/.exec(lines[i]);
		if (!m)
			fail(`line ${i + 1} is no event line: ${JSON.stringify(lines[i])}`);
		const s = { comm: m[1], pid: +m[2], tid: +m[3], time: +`${m[5]}.${m[6]}`, frames: [] };
		for (i++; i < lines.length && lines[i] !== ''; i++) {
			const f = /^\t {0,15}([0-9a-f]{1,16}) (.+) \(([^()]*)\)$/.exec(lines[i]);
			if (!f || lines[i].length < 18)
				fail(`line ${i + 1} is no frame line: ${JSON.stringify(lines[i])}`);
			s.frames.push({ name: f[2].replace(/\+0x[\da-f]+$/, ''), file: f[3] });
		}
		s.frames.reverse();  // outermost first
		samples.push(s);
	}
	return samples;
}

// The kernel's frames are those of [kernel.kallsyms] and of modules ([name]); [vdso] and
// [vsyscall] are user space's, [unknown] no file's.
const isKernel = (file) => file.startsWith('[') && !['[unknown]', '[vdso]', '[vsyscall]'].includes(file);

async function exported(samplesPath) {
	const pkg = path.join(process.env.NODE_PATH || 'build/npm/node_modules', 'speedscope/dist/release/index.html');
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bt-speedscope-'));
	// what `speedscope FILE` does: a script that hands the file to the page, named in its URL
	const loader = path.join(tmp, 'load.js');
	fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(samplesPath))}, ` +
		`${JSON.stringify(fs.readFileSync(samplesPath).toString('base64'))})`);
	const browser = await puppeteer.launch({
		executablePath: process.env.BT_CHROMIUM || '/usr/bin/chromium',
		headless: true,
		timeout: 60000,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--allow-file-access-from-files', '--user-data-dir=' + path.join(tmp, 'profile')],
	});
	try {
		const page = await browser.newPage();
		const errors = [], logs = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		page.on('console', (m) => (m.type() === 'error' ? errors : logs).push(m.text()));
		// speedscope's Export hands a Blob to URL.createObjectURL: keep it
		await page.evaluateOnNewDocument(() => {
			const orig = URL.createObjectURL;
			URL.createObjectURL = (b) => { window.__btExport = b; return orig(b); };
		});
		await page.setViewport({ width: 1300, height: 900 });
		await page.goto('file://' + path.resolve(pkg) + '#localProfilePath=' + loader, { waitUntil: 'load' });
		await page.waitForFunction(() => [...document.querySelectorAll('div')].some((d) => d.textContent === '\u2934\uFE0FExport'),
			{ timeout: 60000 }).catch(() => fail('speedscope showed no profile: ' + errors.concat(logs).join('; ')));
		await page.screenshot({ path: path.join(outDir, 'speedscope.png') });
		const how = logs.find((l) => l.startsWith('Importing'));
		await page.evaluate(() => [...document.querySelectorAll('div')].find((d) => d.textContent === '\u2934\uFE0FExport').click());
		await page.waitForFunction(() => window.__btExport, { timeout: 10000 });
		const json = await page.evaluate(() => window.__btExport.text());
		if (errors.length)
			fail('speedscope reported errors: ' + errors.join('; '));
		fs.writeFileSync(path.join(outDir, 'speedscope-export.json'), json);
		return { how, data: JSON.parse(json) };
	} finally {
		await browser.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
}

async function main() {
	const samples = parsePerfScript(fs.readFileSync(scriptPath, 'utf8'));
	if (!samples.length)
		fail('no samples');
	// 1. the samples fold to the session's own folded stacks, line for line
	const fold = new Map();
	for (const s of samples) {
		const key = [`${s.comm}-${s.pid}/${s.tid}`].concat(s.frames.map((f) => f.name + (isKernel(f.file) ? '_[k]' : ''))).join(';');
		fold.set(key, (fold.get(key) || 0) + 1);
	}
	const mine = [...fold].map(([k, n]) => `${k} ${n}`).sort();
	const want = fs.readFileSync(foldedPath, 'utf8').split('\n').filter((l) => l).sort();
	if (mine.join('\n') !== want.join('\n')) {
		const miss = want.filter((l) => !mine.includes(l)).slice(0, 3), extra = mine.filter((l) => !want.includes(l)).slice(0, 3);
		fail(`the samples fold to other lines than the folded output: missing ${JSON.stringify(miss)}, extra ${JSON.stringify(extra)}`);
	}
	ok(`${samples.length} samples fold to the ${want.length} lines of the folded output`);

	// 2. speedscope's view: a profile per thread, its samples in time order
	const { how, data } = await exported(scriptPath);
	if (!/^Importing from linux perf/.test(how || ''))
		fail(`speedscope did not read it as perf script output: ${how}`);
	ok(`speedscope: ${how}, ${data.profiles.length} profiles`);
	const frames = data.shared.frames;
	const threads = new Map();
	for (const s of samples) {
		const name = `${s.comm} pid: ${s.pid} tid: ${s.tid}`;
		if (!threads.has(name))
			threads.set(name, []);
		threads.get(name).push(s);
	}
	if (data.profiles.length !== threads.size)
		fail(`speedscope has ${data.profiles.length} profiles, the file ${threads.size} threads`);
	let checked = 0;
	for (const p of data.profiles) {
		const mineT = threads.get(p.name);
		if (!mineT)
			fail(`speedscope's profile ${p.name} is no thread of the file`);
		for (let k = 1; k < mineT.length; k++)
			if (mineT[k].time < mineT[k - 1].time)
				fail(`${p.name}: samples out of time order at ${mineT[k].time}`);
		// speedscope keeps a timed profile as frames opened and closed: the stack between two
		// moments is a sample, consecutive equal ones merged; it starts halfway between the last
		// sample of the stack before and its own first
		const names = (s) => s.frames.map((f) => (f.name === '[unknown]' ? `??? (${f.file})` : f.name)).join(';');
		const runs = [];
		mineT.forEach((s, k) => {
			const n = names(s);
			if (!runs.length || runs[runs.length - 1].n !== n)
				runs.push({ n, at: k ? (s.time + mineT[k - 1].time) / 2 - mineT[0].time : 0 });
		});
		const theirs = [], open = [];
		const ev = p.events || fail(`${p.name}: speedscope made a ${p.type} profile, not a timed one`);
		for (let k = 0; k < ev.length;) {
			const at = ev[k].at;
			for (; k < ev.length && ev[k].at === at; k++) {
				if (ev[k].type === 'O')
					open.push(frames[ev[k].frame].name);
				else if (open.pop() !== frames[ev[k].frame].name)
					fail(`${p.name}: speedscope closes a frame it did not open last`);
			}
			theirs.push({ n: open.join(';'), at });
		}
		const mineRuns = runs.filter((r) => r.n), theirRuns = theirs.filter((r) => r.n);
		if (mineRuns.length !== theirRuns.length)
			fail(`${p.name}: speedscope shows ${theirRuns.length} stacks in turn, the file ${mineRuns.length}`);
		mineRuns.forEach((r, k) => {
			if (r.n !== theirRuns[k].n)
				fail(`${p.name}: speedscope's stack ${k} is ${JSON.stringify(theirRuns[k].n)}, the file's ${JSON.stringify(r.n)}`);
			if (Math.abs(r.at - theirRuns[k].at) > 1e-6)
				fail(`${p.name}: stack ${k} starts at ${theirRuns[k].at} s in speedscope, at ${r.at} s by the file`);
		});
		const span = mineT[mineT.length - 1].time - mineT[0].time;
		if (mineT.length > 1 && Math.abs(p.endValue - p.startValue - span) > 1e-6)
			fail(`${p.name}: speedscope spans ${p.endValue - p.startValue} s, the samples ${span} s`);
		checked += mineT.length;
	}
	ok(`every thread's ${checked} samples: speedscope shows their stacks in the same order, at the same times`);
}

main().catch((e) => {
	if (!process.exitCode)
		console.log('FAIL ' + (e && e.stack ? e.stack : e));
	process.exitCode = 1;
});
