# Symbol sources, build-id cache, DWARF and debuginfod: unit test link lists and fixtures.
# SYMSRC_OBJS: the symbol sources and all they stand on.
SYMSRC_OBJS           = $(BUILD)/symsrc/symsrc.o $(BUILD)/symsrc/bidcache.o $(BUILD)/base/pathfmt.o $(BUILD)/base/wfile.o $(BUILD)/base/beneath.o \
                        $(BUILD)/base/ustar.o $(BUILD)/elf/minidebuginfo.o $(BUILD)/elf/dwarfinfo.o \
                        $(BUILD)/elf/symtab.o $(BUILD)/elf/plt.o $(BUILD)/elf/goelf.o $(BUILD)/elf/gopclntab.o $(ELF_CORE_OBJS)
TEST_bidcache_OBJS    = $(BUILD)/symsrc/bidcache.o $(BUILD)/base/pathfmt.o $(BUILD)/base/wfile.o $(BUILD)/base/beneath.o $(BUILD)/base/ustar.o $(ELF_CORE_OBJS)
TEST_unwcache_OBJS    = $(BUILD)/symsrc/unwcache.o $(BUILD)/elf/ehtfile.o $(BUILD)/elf/ehtable.o $(BUILD)/base/htab.o $(TEST_bidcache_OBJS)
TEST_symsrc_OBJS      = $(SYMSRC_OBJS)
TEST_debuginfod_OBJS  = $(BUILD)/symsrc/debuginfod_client.o $(BUILD)/base/trustdir.o $(SYMSRC_OBJS)

# Fixtures: a program with inlined code (full, debug-only, stripped with a debuglink), and a
# library carrying MiniDebugInfo made by the usual recipe (static functions only in .gnu_debugdata).
SYMSRC_FIX    := $(BUILD)/fixtures/symsrc
SYMSRC_CFLAGS := -O2 -g -fno-omit-frame-pointer -Wl,--build-id=sha1

$(SYMSRC_FIX)/inl: tests/symsrc/inl.c tests/symsrc/inl.h
	@mkdir -p $(@D)
	$(CC) $(SYMSRC_CFLAGS) -o $@ tests/symsrc/inl.c

$(SYMSRC_FIX)/inl.debug: $(SYMSRC_FIX)/inl
	objcopy --only-keep-debug $< $@

$(SYMSRC_FIX)/inl.stripped: $(SYMSRC_FIX)/inl $(SYMSRC_FIX)/inl.debug
	strip --strip-all -o $@.tmp $<
	objcopy --add-gnu-debuglink=$(SYMSRC_FIX)/inl.debug $@.tmp
	mv $@.tmp $@

$(SYMSRC_FIX)/libmini.so: tests/symsrc/mini.c
	@mkdir -p $(@D)
	$(CC) $(SYMSRC_CFLAGS) -fPIC -shared -o $@ $<

$(SYMSRC_FIX)/libmini-mdi.so: $(SYMSRC_FIX)/libmini.so
	rm -rf $@.d && mkdir -p $@.d
	nm -D --format=posix --defined-only $< | awk '{ print $$1 }' | sort > $@.d/dynsyms
	nm --format=posix --defined-only $< | awk '$$2 == "T" || $$2 == "t" { print $$1 }' | sort > $@.d/funcsyms
	comm -13 $@.d/dynsyms $@.d/funcsyms > $@.d/keep
	objcopy --only-keep-debug $< $@.d/debug
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=$@.d/keep $@.d/debug $@.d/mini
	xz -f $@.d/mini
	strip --strip-all --remove-section .comment -o $@.d/stripped $<
	objcopy --add-section .gnu_debugdata=$@.d/mini.xz $@.d/stripped $@.tmp
	mv $@.tmp $@
	rm -rf $@.d

# Kernel-like: linked without libc at kernel addresses, with DWARF and a build-id.
$(SYMSRC_FIX)/vmlinux: tests/symsrc/vmlinux.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-pie -no-pie -nostdlib -ffreestanding -Wl,-e,fxk_irq -Wl,--build-id=sha1 \
		-Wl,-Ttext=0xffffffff81000000 -o $@ $<

fixtures:: $(SYMSRC_FIX)/vmlinux $(SYMSRC_FIX)/inl $(SYMSRC_FIX)/inl.debug $(SYMSRC_FIX)/inl.stripped \
	   $(SYMSRC_FIX)/libmini.so $(SYMSRC_FIX)/libmini-mdi.so

# These run ./buildtrace as well as their own code.
$(BUILD)/tests/test_debuginfod: | buildtrace
TEST_jitdump_OBJS     = $(BUILD)/symsrc/jitdump.o $(BUILD)/symsrc/perfmap.o $(BUILD)/base/htab.o $(BUILD)/base/membudget.o
# CPython's objects decoded: the location table and strings, on the offsets table.
TEST_pycode_OBJS      = $(BUILD)/symsrc/pycode.o $(BUILD)/symsrc/pyoffsets.o
TEST_pyruntime_OBJS   = $(BUILD)/symsrc/pyruntime.o $(BUILD)/symsrc/pyoffsets.o $(ELF_CORE_OBJS)
# The offsets tables against DWARF, and 3.13's own description read from its file.
TEST_pyoffsets_OBJS   = $(BUILD)/symsrc/pyoffsets.o $(BUILD)/symsrc/pyruntime.o $(ELF_CORE_OBJS)
TEST_perfmap_OBJS     = $(BUILD)/symsrc/perfmap.o $(BUILD)/base/membudget.o
