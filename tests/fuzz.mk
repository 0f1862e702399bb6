# Fuzzing and sanitizer builds for the parsers of untrusted input (ELF files and notes, symbol
# tables, Go's function tables, decompression, /proc/PID/maps, kallsyms, folded profiles, build-id
# cache entries, HTTP request heads, cgroup paths).
#
#   make fuzz         build the libFuzzer targets in build-fuzz/ and run each for FUZZ_SECONDS
#                     (FUZZ_TARGETS picks some); crashes land in build-fuzz/artifacts/TARGET/
#   make fuzz-build   only build them
#   make check-asan   every unit test built with ASan and UBSan in build-asan/ and run; any
#                     sanitizer report fails it
#
# Inputs that once broke a parser are kept in fuzz/regress/TARGET/ and replayed by
# tests/unit/session/test_fuzz_regress.c, in the normal and in the sanitizer build.

FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= buildid symtab minidebuginfo procmaps kallsyms folded decompress bidcache demangle httpreq \
                cgroup perfmap jitdump probes ehtable gopclntab
FUZZ_CC      ?= $(CLANG)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The modules instrumented for coverage; libFuzzer's main comes in only when a target is linked.
FUZZ_CFLAGS   = -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -std=gnu11 -Wall -Wextra \
                -Wno-unused-parameter -Wno-missing-field-initializers -D_GNU_SOURCE -Isrc -Iinclude \
                -Ifuzz $(PKG_CFLAGS) -DBT_CHECK_ABORT
FUZZ_MODS    := symsrc/perfmap symsrc/jitdump elf/buildid elf/ehtable elf/ehtfile elf/elffile base/decompress base/safeopen elf/symtab elf/plt elf/minidebuginfo capture/procmaps \
                elf/gopclntab elf/goelf \
                kernel/kallsyms base/htab session/profile output/folded base/demangle base/strtab symsrc/bidcache \
                base/ustar base/pathfmt base/wfile base/beneath cmd/net/httpreq kernel/cgroup elf/sdt \
                symsrc/probecache base/esc base/utf8 base/membudget
FUZZ_OBJS    := $(FUZZ_MODS:%=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/checks.o
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

.PHONY: fuzz fuzz-build fuzz-seeds check-asan check-asan-build
# The instrumented objects outlive each build, so that the next one rebuilds only what changed.
.SECONDARY: $(FUZZ_OBJS)

$(FUZZ_BUILD)/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/checks.o: fuzz/checks.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/checks.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

# Seeds come partly from the ELF fixtures, which live in the normal build directory.
fuzz-seeds: fixtures
	fuzz/make-seeds.sh build/fixtures $(FUZZ_BUILD)/seeds

fuzz: fuzz-build fuzz-seeds
	fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

-include $(wildcard $(FUZZ_BUILD)/*/*.d)

# ---- sanitizer build of the unit tests -------------------------------------------------------
# A second build of every unit test in build-asan/ (the Makefile's BUILD), from the same rules.
# The fixtures and ./buildtrace, which some tests run, stay those of the normal build: they are
# made there first, and the inner make must not relink ./buildtrace from sanitizer objects (-o).
ASAN_BUILD := build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The browser test drives Chromium over the SVG's script; it has no C code of its own to check.
ASAN_BINS   = $(patsubst %.c,$(ASAN_BUILD)/tests/%,$(notdir $(filter-out %/test_browser.c,$(UNIT_SRCS))))
ASAN_ENV   := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 \
              UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

check-asan: check-asan-build
	$(ASAN_ENV) tools/run-tests.sh $(ASAN_BINS)

check-asan-build:
	$(MAKE) fixtures buildtrace
	$(MAKE) BUILD=$(ASAN_BUILD) EXTRA_CFLAGS="$(ASAN_FLAGS)" -o buildtrace $(ASAN_BINS)

# The regression test replays fuzz/regress/ through the same checks the fuzz targets make.
$(BUILD)/fuzz/checks.o: fuzz/checks.c fuzz/checks.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Ifuzz -MMD -MP -c -o $@ $<

$(BUILD)/tests/test_fuzz_regress.o: TEST_CFLAGS += -Ifuzz
TEST_fuzz_regress_OBJS := $(BUILD)/fuzz/checks.o $(FUZZ_MODS:%=$(BUILD)/%.o)
# Known-good inputs it also replays (the paths the test reads, whatever BUILD is).
$(BUILD)/tests/test_fuzz_regress: | build/fixtures/fx-sha1 build/fixtures/fx-mips64 \
	build/fixtures/fx-mod.ko build/fixtures/fx-mod.ko.xz build/fixtures/fx-mod.ko.zst \
	build/fixtures/fx-mod.ko.gz build/fixtures/fx-cxx build/fixtures/symsrc/libmini-mdi.so \
	build/fixtures/fx-dbgframe build/fixtures/go/goprog-stripped build/fixtures/go/goprog-pie-stripped

-include $(wildcard $(BUILD)/fuzz/*.d)

# make clean takes the fuzzing and sanitizer builds (and the grown corpora) along.
.PHONY: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_BUILD) $(ASAN_BUILD)
clean: fuzz-clean
