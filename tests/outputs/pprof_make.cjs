// pprof_make.cjs - writes, with the pprof-format package's encoder, a gzip-compressed profile shaped
// like other profilers' output (the reader's test input): the counting type not first, a default
// sample type, inlined frames, unnamed frames in a file mapped at an offset, kernel frames, a frame
// without mapping, numeric labels and a zero-valued sample.
// Usage: node pprof_make.cjs OUT.pb.gz
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile, StringTable, ValueType, Sample, Label, Mapping, Location, Line, Function } =
	require('pprof-format');

const st = new StringTable();
const S = (x) => st.dedup(x);
const fn = (id, name) => new Function({ id, name: S(name), systemName: S(name) });
const funcs = [fn(1, 'main'), fn(2, 'handle'), fn(3, 'parse_inlined'), fn(4, 'sys_write')];
const maps = [
	new Mapping({ id: 1, memoryStart: 0x400000, memoryLimit: 0x800000, fileOffset: 0x1000,
		filename: S('/usr/bin/server'), buildId: S('0123456789abcdef0123456789abcdef01234567'),
		hasFunctions: true }),
	new Mapping({ id: 2, memoryStart: 0xffffffff81000000n, memoryLimit: 0xffffffff82000000n,
		filename: S('[kernel.kallsyms]'), buildId: S('') }),
];
const line = (functionId, ln) => new Line({ functionId, line: ln });
const locs = [
	new Location({ id: 1, mappingId: 1, address: 0x401000, line: [line(1, 10)] }),
	// parse_inlined was inlined into handle: the callee first, the caller last
	new Location({ id: 2, mappingId: 1, address: 0x402000, line: [line(3, 30), line(2, 20)] }),
	new Location({ id: 3, mappingId: 1, address: 0x403000, line: [] }),
	new Location({ id: 4, mappingId: 2, address: 0xffffffff81000100n, line: [line(4, 0)] }),
	new Location({ id: 5, mappingId: 0, address: 0x1234, line: [] }),
	new Location({ id: 6, mappingId: 2, address: 0xffffffff81000200n, line: [] }),
];
const thread = (t) => new Label({ key: S('thread'), str: S(t) });
const sample = (ids, cpu, n, labels) => new Sample({ locationId: ids, value: [cpu, n], label: labels });
const samples = [
	sample([2, 1], 5000000, 5, [thread('server')]),
	sample([3, 1], 2000000, 2, [thread('server')]),
	sample([4, 2, 1], 1000000, 1, [thread('server'), new Label({ key: S('pid'), num: 42, numUnit: S('') })]),
	sample([5], 3000000, 3, []),
	sample([6, 1], 0, 0, [thread('server')]),
	sample([2, 1], 7000000, 7, [thread('io')]),
	sample([6, 4, 1], 1000000, 1, [thread('server')]),
];
const cpu = S('cpu'), ns = S('nanoseconds');
const profile = new Profile({
	sampleType: [new ValueType({ type: cpu, unit: ns }), new ValueType({ type: S('samples'), unit: S('count') })],
	sample: samples,
	mapping: maps,
	location: locs,
	function: funcs,
	stringTable: st,
	periodType: new ValueType({ type: cpu, unit: ns }),
	period: 1000000,
	defaultSampleType: cpu,
	comment: [S('made by pprof_make.cjs')],
});
fs.writeFileSync(process.argv[2], zlib.gzipSync(profile.encode()));
