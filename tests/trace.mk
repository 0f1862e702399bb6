# Programs the tracing tests (tests/priv/test_trace.c) place probes in: built like the capture
# tests' programs (frame pointers, a build-id), and once without a build-id.
$(BUILD)/tests/progs/tracee: tests/progs/tracee.c
	@mkdir -p $(@D)
	$(CC) $(PROGS_CFLAGS) -o $@ $<
$(BUILD)/tests/progs/tracee-nobid: tests/progs/tracee.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fno-omit-frame-pointer -Wl,--build-id=none -o $@ $<

fixtures:: $(BUILD)/tests/progs/tracee $(BUILD)/tests/progs/tracee-nobid
# SDT notes and argument specs; the markers of Debian's python3 are compared with readelf's.
TEST_sdt_OBJS = $(BUILD)/elf/sdt.o $(ELF_CORE_OBJS)
# Probe specs and their resolution: the session layer's probes and all it stands on.
TEST_probes_OBJS = $(BUILD)/session/probes.o $(BUILD)/elf/probeaddr.o $(BUILD)/elf/sdt.o \
                   $(BUILD)/capture/procmaps.o $(SYMSRC_OBJS)
$(BUILD)/tests/test_probes: | $(BUILD)/tests/progs/tracee $(BUILD)/tests/progs/tracee-nobid
$(BUILD)/tests/test_sdt: | build/fixtures/fx-sha1

# The probe cache tests (tests/priv/test_probe.c): a library in two builds under one name, and a
# host that finds it through an rpath in the tests' directory, where they put one build or the
# other.
TRACE_PROGS := $(BUILD)/tests/progs/trace
$(TRACE_PROGS)/v1/libtrlib.so $(TRACE_PROGS)/v2/libtrlib.so: $(TRACE_PROGS)/v%/libtrlib.so: tests/progs/trlib.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fPIC -shared -DVER=$* -Wl,--build-id=sha1 -Wl,-soname,libtrlib.so -o $@ $<
$(TRACE_PROGS)/trhost: tests/progs/trhost.c $(TRACE_PROGS)/v1/libtrlib.so
	$(CC) -O1 -g -Wl,--build-id=sha1 -o $@ $< -L$(TRACE_PROGS)/v1 -ltrlib \
		-Wl,-rpath,$(abspath $(BUILD))/tests/tmp-probe/lib

fixtures:: $(TRACE_PROGS)/trhost $(TRACE_PROGS)/v2/libtrlib.so
# The probe cache: its lines, and entries added, listed and removed in a cache of the test's own.
TEST_probecache_OBJS = $(BUILD)/symsrc/probecache.o $(BUILD)/symsrc/bidcache.o $(BUILD)/base/pathfmt.o \
                       $(BUILD)/base/wfile.o $(BUILD)/base/beneath.o $(BUILD)/base/ustar.o $(BUILD)/base/esc.o \
                       $(BUILD)/base/utf8.o $(ELF_CORE_OBJS)
$(BUILD)/tests/test_probecache: | build/fixtures/fx-sha1
