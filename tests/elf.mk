# ELF core tests: link lists, and the fixture files they read from build/fixtures (the path the tests
# use, whatever BUILD is). Big-endian fixtures need clang and ld.lld, i386 only gcc -m32 (no libc).
# ELF_CORE_OBJS: reading an ELF file and its notes, what every layer above builds on.
ELF_CORE_OBJS     := $(BUILD)/elf/elffile.o $(BUILD)/elf/buildid.o $(BUILD)/base/decompress.o \
                     $(BUILD)/base/safeopen.o
TEST_buildid_OBJS := $(ELF_CORE_OBJS)
TEST_elffile_OBJS := $(ELF_CORE_OBJS)
TEST_symtab_OBJS  := $(BUILD)/elf/symtab.o $(BUILD)/elf/plt.o $(ELF_CORE_OBJS)
# The test finds its own mappings through /proc/self/maps.
TEST_dwarfinfo_OBJS := $(BUILD)/elf/dwarfinfo.o $(ELF_CORE_OBJS)
TEST_unwind_OBJS  := $(BUILD)/elf/unwind.o $(ELF_CORE_OBJS) $(BUILD)/capture/procmaps.o
TEST_ehtable_OBJS := $(BUILD)/elf/ehtable.o $(BUILD)/base/htab.o $(ELF_CORE_OBJS)
TEST_ehtfile_OBJS := $(BUILD)/elf/ehtfile.o $(BUILD)/elf/ehtable.o $(BUILD)/base/htab.o $(BUILD)/base/wfile.o $(ELF_CORE_OBJS)

FX     := build/fixtures
FX_SRC := tests/fixtures
FX_CC  := $(CC) -O1 -g -fno-omit-frame-pointer
LLD    ?= ld.lld

# One program, every build-id flavour; fx_syms.S brings the symbol-rule cases along.
FX_PROG_SRCS := $(FX_SRC)/fx_prog.c $(FX_SRC)/fx_syms.S
$(FX)/fx-sha1: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -Wl,--build-id=sha1 -o $@ $^
$(FX)/fx-md5: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -Wl,--build-id=md5 -o $@ $^
$(FX)/fx-hexid: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -Wl,--build-id=0x00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210 -o $@ $^
$(FX)/fx-none: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -Wl,--build-id=none -o $@ $^
$(FX)/fx-nopie: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -fno-pie -no-pie -Wl,--build-id=sha1 -o $@ $^
$(FX)/fx-note8: $(FX_PROG_SRCS) $(FX_SRC)/fx_note8.S
	@mkdir -p $(@D)
	$(FX_CC) -Wl,--build-id=none -o $@ $^
# A PLT built for IBT: the jumps in .plt.sec, .plt only pushes; __cxa_finalize in .plt.got.
$(FX)/fx-ibtplt: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -fcf-protection -Wl,-z,ibtplt -Wl,--build-id=sha1 -o $@ $^
$(FX)/fx-stripped: $(FX)/fx-sha1
	strip -o $@ $<
$(FX)/fx-sha1.debug: $(FX)/fx-sha1
	objcopy --only-keep-debug $< $@
# objcopy records the debug file's base name and CRC; it reads the file from the current directory.
$(FX)/fx-linked: $(FX)/fx-sha1 $(FX)/fx-sha1.debug
	strip -o $@ $<
	cd $(FX) && objcopy --add-gnu-debuglink=fx-sha1.debug fx-linked

# CFI in .debug_frame only (no .eh_frame): what the table compiler reads when .eh_frame is absent.
$(FX)/fx-dbgframe: $(FX_PROG_SRCS)
	@mkdir -p $(@D)
	$(FX_CC) -fno-asynchronous-unwind-tables -fno-unwind-tables -Wl,--build-id=sha1 -o $@ $^
	objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr $@

# One FDE of 80,000 rows, refused by the table compiler's bound on what it asks of libdw.
$(FX)/fx-longfde: $(FX_SRC)/fx_longfde.S
	@mkdir -p $(@D)
	$(CC) -shared -nostdlib -Wl,--build-id=sha1 -o $@ $<

$(FX)/libfx.so: $(FX_SRC)/fx_lib.c
	@mkdir -p $(@D)
	$(FX_CC) -fPIC -shared -Wl,--build-id=sha1 -o $@ $<
$(FX)/fx-cxx: $(FX_SRC)/fx_cxx.cc
	@mkdir -p $(@D)
	g++ -O1 -g -Wl,--build-id=sha1 -o $@ $<

# A relocatable object with a build-id, as kernel modules are linked, and its compressed copies.
$(FX)/fx-mod.ko: $(FX_SRC)/fx_prog.c
	@mkdir -p $(@D)
	$(CC) -O1 -c -o $@.o $<
	ld -r --build-id=sha1 -o $@ $@.o
	@rm -f $@.o
$(FX)/fx-mod.ko.xz: $(FX)/fx-mod.ko
	xz -c $< > $@
$(FX)/fx-mod.ko.zst: $(FX)/fx-mod.ko
	zstd -q -c $< > $@
$(FX)/fx-mod.ko.gz: $(FX)/fx-mod.ko
	gzip -c $< > $@
$(FX)/fx-sha1.xz: $(FX)/fx-sha1
	xz -c $< > $@

# Other word sizes and byte orders.
FX_FREE := -O1 -ffreestanding -fno-builtin -nostdlib -fno-pic
$(FX)/fx-i386: $(FX_SRC)/fx_free.c
	@mkdir -p $(@D)
	$(CC) -m32 $(FX_FREE) -no-pie -static -Wl,--build-id=sha1 -o $@ $<
$(FX)/fx-mips: $(FX_SRC)/fx_free.c
	@mkdir -p $(@D)
	$(CLANG) --target=mips-linux-gnu $(FX_FREE) -c -o $@.o $<
	$(LLD) -e _start --build-id=sha1 -o $@ $@.o
	@rm -f $@.o
$(FX)/fx-mips64: $(FX_SRC)/fx_free.c
	@mkdir -p $(@D)
	$(CLANG) --target=mips64-linux-gnuabi64 -O1 -ffreestanding -fno-builtin -nostdlib -c -o $@.o $<
	$(LLD) -e _start --build-id=md5 -o $@ $@.o
	@rm -f $@.o

ELF_FIXTURES := $(addprefix $(FX)/,fx-sha1 fx-md5 fx-hexid fx-none fx-nopie fx-note8 fx-stripped fx-ibtplt \
	fx-sha1.debug fx-linked libfx.so fx-cxx fx-mod.ko fx-mod.ko.xz fx-mod.ko.zst fx-mod.ko.gz \
	fx-sha1.xz fx-i386 fx-mips fx-mips64 fx-dbgframe fx-longfde)

fixtures:: $(ELF_FIXTURES)

# The tests read these at run time; building a test builds what it reads.
$(BUILD)/tests/test_buildid $(BUILD)/tests/test_elffile $(BUILD)/tests/test_symtab \
$(BUILD)/tests/test_demangle $(BUILD)/tests/test_ehtable: | $(ELF_FIXTURES)

# Go's function table (.gopclntab): the table, its ELF glue, the symbol table it merges into, and
# the DWARF reader its lines are compared with.
TEST_gopclntab_OBJS := $(BUILD)/elf/gopclntab.o $(BUILD)/elf/goelf.o $(BUILD)/elf/symtab.o $(BUILD)/elf/plt.o \
                       $(BUILD)/elf/dwarfinfo.o $(ELF_CORE_OBJS)
# One Go program (Debian's golang-go) built four ways: as go build makes it (.symtab and DWARF, the
# oracles), stripped of both (-s -w, how Go services ship), and both again position-independent.
GO_FX_SRCS := $(FX_SRC)/goprog/main.go $(FX_SRC)/goprog/go.mod
GO_BUILD    = cd $(FX_SRC)/goprog && GOFLAGS=-mod=mod GO111MODULE=on go build
$(FX)/go/goprog: $(GO_FX_SRCS)
	@mkdir -p $(@D)
	$(GO_BUILD) -o $(abspath $@) .
$(FX)/go/goprog-stripped: $(GO_FX_SRCS)
	@mkdir -p $(@D)
	$(GO_BUILD) -ldflags='-s -w' -o $(abspath $@) .
$(FX)/go/goprog-pie: $(GO_FX_SRCS)
	@mkdir -p $(@D)
	$(GO_BUILD) -buildmode=pie -o $(abspath $@) .
$(FX)/go/goprog-pie-stripped: $(GO_FX_SRCS)
	@mkdir -p $(@D)
	$(GO_BUILD) -buildmode=pie -ldflags='-s -w' -o $(abspath $@) .
GO_FIXTURES := $(addprefix $(FX)/go/,goprog goprog-stripped goprog-pie goprog-pie-stripped)
fixtures:: $(GO_FIXTURES)
$(BUILD)/tests/test_gopclntab: | $(GO_FIXTURES)
