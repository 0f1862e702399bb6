# Unit test link lists for the session's tables.
TEST_proctable_OBJS = $(BUILD)/session/proctable.o $(BUILD)/base/htab.o
TEST_profile_OBJS   = $(BUILD)/session/profile.o $(BUILD)/output/folded.o $(BUILD)/base/htab.o $(BUILD)/base/strtab.o \
                      $(BUILD)/base/esc.o $(BUILD)/base/utf8.o
TEST_samplelog_OBJS = $(BUILD)/session/samplelog.o $(BUILD)/base/wfile.o
TEST_offstacks_OBJS = $(BUILD)/session/offstacks.o $(BUILD)/base/htab.o
# The file-version registry: symbol sources and the ELF layer beneath it, map_files for exact bytes.
TEST_dso_OBJS       = $(BUILD)/session/dso.o $(BUILD)/capture/procmaps.o $(OBJS_symsrc) $(OBJS_elf) $(OBJS_base)
# The record consumer: the whole session layer, and of the capture layer only the record check it
# makes and the /proc/PID/maps reader.
TEST_session_OBJS   = $(OBJS_session) $(BUILD)/output/folded.o $(BUILD)/capture/records.o $(BUILD)/capture/procmaps.o $(OBJS_kernel) $(OBJS_symsrc) $(OBJS_elf) \
                      $(OBJS_base)
# Both read fixture programs (nm and readelf are their oracles).
$(BUILD)/tests/test_dso $(BUILD)/tests/test_session: | $(ELF_FIXTURES)

# Programs for the live-session tests: a library built in two versions under one soname, and a host
# that links it through an rpath, all with frame pointers.
SESSION_DIR := $(BUILD)/tests/session
SESSION_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -Wl,--build-id=sha1

$(SESSION_DIR)/v1/libverlib.so $(SESSION_DIR)/v2/libverlib.so: $(SESSION_DIR)/v%/libverlib.so: tests/session/verlib.c
	@mkdir -p $(@D)
	$(CLANG) $(SESSION_CFLAGS) -fPIC -shared -DVER=$* -Wl,-soname,libverlib.so -o $@ $<

$(SESSION_DIR)/verhost: tests/session/verhost.c $(SESSION_DIR)/v1/libverlib.so
	$(CLANG) $(SESSION_CFLAGS) -o $@ $< -L$(SESSION_DIR)/v1 -lverlib -Wl,-rpath,$(abspath $(SESSION_DIR))/lib

$(SESSION_DIR)/spin: tests/session/spin.c
	@mkdir -p $(@D)
	$(CLANG) $(SESSION_CFLAGS) -o $@ $<

fixtures:: $(SESSION_DIR)/spin $(SESSION_DIR)/verhost $(SESSION_DIR)/v2/libverlib.so $(BUILD)/demo-workload

# A stripped program whose only symbols are in a separate debug file (served by debuginfod in tests).
$(SESSION_DIR)/dspin $(SESSION_DIR)/dspin.debug: tests/session/spin.c
	@mkdir -p $(SESSION_DIR)
	$(CLANG) $(SESSION_CFLAGS) -o $(SESSION_DIR)/dspin.full $<
	objcopy --only-keep-debug $(SESSION_DIR)/dspin.full $(SESSION_DIR)/dspin.debug
	objcopy --strip-all $(SESSION_DIR)/dspin.full $(SESSION_DIR)/dspin

fixtures:: $(SESSION_DIR)/dspin

# Built without frame pointers (as distributions build), but for one file with them: the
# call-frame-information unwinder is compared with perf --call-graph dwarf on it.
$(SESSION_DIR)/nofp: tests/session/nofp.c tests/session/nofp_fp.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -c -o $@.o tests/session/nofp.c
	$(CC) -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -c -o $@.fp.o tests/session/nofp_fp.c
	$(CC) -Wl,--build-id=sha1 -o $@ $@.o $@.fp.o
	rm -f $@.o $@.fp.o

fixtures:: $(SESSION_DIR)/nofp

# Short-lived and dlopen-churning, without frame pointers: stacks complete from a process's first
# sample and a library's first samples after each dlopen (tests/priv/test_churn.c, make bench).
$(SESSION_DIR)/churnkid: tests/session/churnkid.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wl,--build-id=sha1 -o $@ $< -ldl

$(SESSION_DIR)/libchurn.so: tests/session/churnlib.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -fPIC -shared -Wl,--build-id=sha1 -o $@ $<

fixtures:: $(SESSION_DIR)/churnkid $(SESSION_DIR)/libchurn.so
# Perf maps of processes, under a fake /proc: the parser and the opener of paths in a process's root.
TEST_jitmap_OBJS    = $(BUILD)/session/jitmap.o $(BUILD)/symsrc/perfmap.o $(BUILD)/symsrc/jitdump.o $(BUILD)/capture/procmaps.o \
                      $(OBJS_elf) $(OBJS_base)
# Interpreters and code objects: reads this process's own memory as a Python process's.
TEST_pyproc_OBJS    = $(BUILD)/session/pyproc.o $(BUILD)/session/dso.o $(BUILD)/capture/procmaps.o $(OBJS_symsrc) \
                      $(OBJS_elf) $(OBJS_base)

# A loop whose time goes to the vDSO (clock_gettime), for the tests of its names.
$(SESSION_DIR)/clockloop: tests/progs/clockloop.c
	@mkdir -p $(@D)
	$(CLANG) $(SESSION_CFLAGS) -o $@ $<

fixtures:: $(SESSION_DIR)/clockloop
# Relabeling rules: the regexes and MD5 of the base layer underneath.
TEST_relabel_OBJS   = $(BUILD)/session/relabel.o $(BUILD)/base/regex.o $(BUILD)/base/md5.o
# Targets: /proc read under a made-up root, cgroup paths parsed, the rules applied.
TEST_targets_OBJS   = $(BUILD)/session/targets.o $(TEST_relabel_OBJS) $(BUILD)/kernel/procmeta.o $(BUILD)/kernel/cgroup.o \
                      $(BUILD)/base/safeopen.o $(BUILD)/base/htab.o
