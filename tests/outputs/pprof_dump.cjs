// pprof_dump.cjs - decodes a pprof file (gzip-compressed or not) with the pprof-format package, an
// implementation independent of buildtrace's, checks that every id it references exists and every
// address lies in its mapping, and prints the profile as tab-separated lines for the tests:
//   sample_type TYPE UNIT | period TYPE UNIT N | default_sample_type TYPE (when set) | time NS |
//   duration NS
//   mapping ID FILE BUILD_ID START LIMIT OFFSET HAS_FUNCTIONS HAS_FILENAMES HAS_LINES HAS_INLINES
//   location ID MAPPING_ID ADDRESS FILE_OFFSET NAMES (caller last, joined by '|', "-" for none)
//   srcline LOCATION_ID INDEX FUNCTION FILE LINE (a location's lines with a file or line number)
//   sample VALUES LABELS LOCATION_IDS (comma-separated; labels KEY=VALUE)
//   folded TEXT COUNT (docs/pprof-format.md's rules: thread label, outermost first)
//   total N (the folded count summed)
// Usage: node pprof_dump.cjs FILE. Exits 1 with a message when the profile is inconsistent.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

function fail(msg) {
	console.error('pprof_dump: ' + msg);
	process.exit(1);
}

let buf = fs.readFileSync(process.argv[2]);
if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b)
	buf = zlib.gunzipSync(buf);
const p = Profile.decode(buf);
const strs = p.stringTable.strings;
const s = (i) => {
	const n = Number(i);
	if (!Number.isInteger(n) || n < 0 || n >= strs.length)
		fail('string index out of range: ' + i);
	return strs[n];
};
const big = (v) => BigInt(v);
const hex = (v) => '0x' + big(v).toString(16);
if (strs[0] !== '')
	fail('string_table[0] is not empty');
const out = [];

for (const t of p.sampleType)
	out.push(['sample_type', s(t.type), s(t.unit)]);
if (p.periodType)
	out.push(['period', s(p.periodType.type), s(p.periodType.unit), String(p.period)]);
if (Number(p.defaultSampleType))
	out.push(['default_sample_type', s(p.defaultSampleType)]);
out.push(['time', String(p.timeNanos)]);
out.push(['duration', String(p.durationNanos)]);

const maps = new Map();
for (const m of p.mapping) {
	const id = String(m.id);
	if (id === '0' || maps.has(id))
		fail('bad mapping id ' + id);
	maps.set(id, m);
	out.push(['mapping', id, s(m.filename), s(m.buildId), hex(m.memoryStart), hex(m.memoryLimit),
		hex(m.fileOffset), String(!!m.hasFunctions), String(!!m.hasFilenames),
		String(!!m.hasLineNumbers), String(!!m.hasInlineFrames)]);
}
const funcs = new Map();
for (const f of p.function) {
	const id = String(f.id);
	if (id === '0' || funcs.has(id))
		fail('bad function id ' + id);
	funcs.set(id, f);
}
const locs = new Map();
for (const l of p.location) {
	const id = String(l.id);
	if (id === '0' || locs.has(id))
		fail('bad location id ' + id);
	locs.set(id, l);
	const mid = String(l.mappingId);
	let off = '-';
	if (mid !== '0') {
		const m = maps.get(mid);
		if (!m)
			fail('location ' + id + ' names missing mapping ' + mid);
		if (big(l.address) < big(m.memoryStart) || big(l.address) >= big(m.memoryLimit))
			fail('location ' + id + ' address ' + hex(l.address) + ' outside its mapping');
		off = hex(big(l.address) - big(m.memoryStart) + big(m.fileOffset));
	}
	const names = l.line.map((ln) => {
		const f = funcs.get(String(ln.functionId));
		if (!f)
			fail('location ' + id + ' names missing function ' + ln.functionId);
		return s(f.name);
	});
	out.push(['location', id, mid, hex(l.address), off, names.length ? names.join('|') : '-']);
	l.line.forEach((ln, k) => {
		const f = funcs.get(String(ln.functionId));
		if (s(f.filename) || Number(ln.line))
			out.push(['srcline', id, k, s(f.name), s(f.filename), String(ln.line)]);
	});
}

// The value folded stacks count: "samples" if present, else the default (or last) type.
let vi = p.sampleType.findIndex((t) => s(t.type) === 'samples');
if (vi < 0) {
	vi = p.sampleType.length - 1;
	p.sampleType.forEach((t, i) => { if (big(p.defaultSampleType) !== 0n && big(t.type) === big(p.defaultSampleType)) vi = i; });
}
const folded = new Map();
let total = 0n;
for (const sm of p.sample) {
	if (sm.value.length !== p.sampleType.length)
		fail('sample with ' + sm.value.length + ' values for ' + p.sampleType.length + ' types');
	const labels = sm.label.map((lb) => s(lb.key) + '=' + (big(lb.str) !== 0n ? s(lb.str) : String(lb.num)));
	out.push(['sample', sm.value.map(String).join(','), labels.join(','), sm.locationId.map(String).join(',')]);
	let thread = '';
	for (const lb of sm.label)
		if (s(lb.key) === 'thread' && big(lb.str) !== 0n)
			thread = s(lb.str);
	const frames = [];
	for (const lid of [...sm.locationId].reverse()) {
		const l = locs.get(String(lid));
		if (!l)
			fail('sample names missing location ' + lid);
		const m = String(l.mappingId) !== '0' ? maps.get(String(l.mappingId)) : null;
		const file = m ? s(m.filename) : '';
		// the kernel image, or a module: "[NAME]" in the kernel half of the address space
		const kernel = file.startsWith('[kernel.kallsyms]') ||
			(file.startsWith('[') && big(m.memoryStart) >= 0xffff800000000000n);
		if (!l.line.length) {
			if (!m)
				frames.push('[unknown]');
			else if (kernel)
				frames.push(file + '_[k]');
			else {
				const base = file.split('/').pop() || 'unknown';
				frames.push('[' + base + '+' + hex(big(l.address) - big(m.memoryStart) + big(m.fileOffset)) + ']');
			}
			continue;
		}
		for (const ln of [...l.line].reverse()) {
			const f = funcs.get(String(ln.functionId));
			let name = s(f.name) || s(f.systemName) || '[unknown]';
			frames.push(kernel ? name + '_[k]' : name);
		}
	}
	const v = big(sm.value[vi]);
	if (v === 0n)
		continue;
	const text = [thread || '[unknown]', ...frames].map((x) => x.replace(/[;\r\n]/g, ':')).join(';');
	folded.set(text, (folded.get(text) || 0n) + v);
	total += v;
}
for (const [text, n] of folded)
	out.push(['folded', text, String(n)]);
out.push(['total', String(total)]);
process.stdout.write(out.map((r) => r.join('\t')).join('\n') + '\n');
