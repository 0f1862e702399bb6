#!/bin/sh
# Writes the seed corpus of every fuzz target into OUT/TARGET/: the small committed text seeds of
# fuzz/seeds, the ELF fixtures (debug info dropped, to keep inputs small), compressed streams made
# here, and lines of this machine's /proc/self/maps and /proc/kallsyms.
# usage: fuzz/make-seeds.sh FIXTURE_DIR OUT
set -eu
fx=$1
out=$2
here=$(dirname "$0")
rm -rf "$out"
for t in buildid symtab minidebuginfo procmaps kallsyms folded decompress bidcache demangle httpreq cgroup perfmap jitdump probes ehtable gopclntab; do
	mkdir -p "$out/$t"
done

# ELF files of every flavour the fixtures cover: word sizes, byte orders, ET_REL, debug-only,
# debuglink, MiniDebugInfo.
for f in fx-sha1 fx-md5 fx-hexid fx-none fx-note8 fx-nopie fx-linked fx-sha1.debug libfx.so \
	 fx-mod.ko fx-i386 fx-mips fx-mips64 symsrc/libmini-mdi.so symsrc/inl.stripped; do
	[ -f "$fx/$f" ] || { echo "make-seeds: missing fixture $fx/$f (run make fixtures)" >&2; exit 1; }
	name=$(echo "$f" | tr / _)
	# Foreign machines are copied as they are when objcopy does not know them.
	objcopy --strip-debug "$fx/$f" "$out/symtab/$name" 2>/dev/null || cp "$fx/$f" "$out/symtab/$name"
	cp "$out/symtab/$name" "$out/buildid/$name"
	cp "$out/symtab/$name" "$out/ehtable/$name"
	# The cache harness reads "LINK-TARGET-TAIL\0ELF": the tail perf would write for this file.
	id=$(readelf -n "$fx/$f" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	if [ -n "$id" ]; then
		{ printf 'usr/lib/%s/%s\0' "$name" "$id"; cat "$out/symtab/$name"; } >"$out/bidcache/$name"
	fi
done
printf 'usr/lib/x\0' >"$out/bidcache/no-elf"
printf '0123456789abcdef0123456789abcdef01234567' >"$out/buildid/hex-sha1"

# Embedded MiniDebugInfo files: the real one of the fixture, and ordinary ELF files in its place.
objcopy --dump-section .gnu_debugdata="$out/minidebuginfo/mini.xz" "$fx/symsrc/libmini-mdi.so"
xz -dc "$out/minidebuginfo/mini.xz" >"$out/minidebuginfo/mini" && rm "$out/minidebuginfo/mini.xz"
for f in fx-sha1 fx-mod.ko fx-mips64 fx-i386 libfx.so; do
	cp "$out/symtab/$f" "$out/minidebuginfo/$f"
done

# Go programs: stripped ones whole (their function table is all the names they have), and their
# tables alone, as Go 1.19 writes them.
for f in go/goprog-stripped go/goprog-pie-stripped; do
	[ -f "$fx/$f" ] || { echo "make-seeds: missing fixture $fx/$f (run make fixtures)" >&2; exit 1; }
	name=$(echo "$f" | tr / _)
	cp "$fx/$f" "$out/symtab/$name"
	objcopy -O binary --only-section=.gopclntab "$fx/$f" "$out/gopclntab/$name" 2>/dev/null ||
		objcopy -O binary --only-section=.data.rel.ro.gopclntab "$fx/$f" "$out/gopclntab/$name"
done

# and small tables of each layout read (Go 1.16, 1.18, 1.20), with an inline tree
python3 "$here/gopclntab-seed.py" "$out/gopclntab"

# Compressed streams: a module in each format, and small edge cases.
for f in fx-mod.ko.xz fx-mod.ko.zst fx-mod.ko.gz; do
	cp "$fx/$f" "$out/decompress/$f"
done
printf 'buildtrace\n' | xz -c >"$out/decompress/small.xz"
printf 'buildtrace\n' | xz -c --check=sha256 >"$out/decompress/sha256.xz"
printf 'buildtrace\n' | zstd -q -c >"$out/decompress/small.zst"
printf 'buildtrace\n' | gzip -c >"$out/decompress/small.gz"
printf '' | xz -c >"$out/decompress/empty.xz"
printf '' | zstd -q -c >"$out/decompress/empty.zst"
{ printf 'one\n' | gzip -c; printf 'two\n' | gzip -c; } >"$out/decompress/two-members.gz"
{ printf 'one\n' | zstd -q -c; printf 'two\n' | zstd -q -c; } >"$out/decompress/two-frames.zst"
{ printf 'one\n' | xz -c; printf 'two\n' | xz -c; } >"$out/decompress/two-streams.xz"

# The probes target: mode byte 0 an ELF file (one with SDT notes when python3.11 is here: its notes
# in a small ELF of their own), 1 an argument spec, 2 a probe cache file.
{ printf '\000'; cat "$out/symtab/fx-sha1"; } >"$out/probes/elf-fx-sha1"
if [ -f /usr/bin/python3.11 ] && objcopy --only-section=.note.stapsdt --only-section=.stapsdt.base \
	/usr/bin/python3.11 "$out/probes/sdt.tmp" 2>/dev/null; then
	{ printf '\000'; cat "$out/probes/sdt.tmp"; } >"$out/probes/elf-python-sdt"
fi
rm -f "$out/probes/sdt.tmp"
printf '\0018@%%rbp 8@%%r12 -4@%%eax' >"$out/probes/args-python"
printf '\001-4@112(%%rsp) 8@-16(%%rbp) 2@(%%r15d) 8@$-5' >"$out/probes/args-mem"
printf '\002%%sdt_python:function__entry=function__entry\np:sdt_python/function__entry /usr/bin/python3.11:0xc779b(0x67dd40) arg1=%%bp:u64\n#PyList_New\np:probe_python3/PyList_New /usr/bin/python3.11:0xd06c0\n' \
	>"$out/probes/cache-perf"

# Text formats: the committed seeds, then real lines from this machine.
for t in procmaps kallsyms folded demangle httpreq cgroup perfmap jitdump; do
	cp "$here/seeds/$t/"* "$out/$t/"
done
# Symbol names of the C++ fixture.
i=0
for s in $(nm "$fx/fx-cxx" | awk '$3 ~ /^_Z/ { print $3 }' | head -n 30); do
	printf '%s' "$s" >"$out/demangle/fx-cxx-$i"
	i=$((i + 1))
done
i=0
while IFS= read -r line && [ $i -lt 24 ]; do
	printf '%s\n' "$line" >"$out/procmaps/self-$i"
	i=$((i + 1))
done </proc/self/maps
if [ -r /proc/kallsyms ]; then
	head -n 40 /proc/kallsyms >"$out/kallsyms/head" || true
	grep '\[' /proc/kallsyms | head -n 40 >"$out/kallsyms/modules" || true
fi
echo "make-seeds: $(find "$out" -type f | wc -l) seeds in $out"
