# Programs the kernel-side capture tests (tests/priv/test_capture.c) watch: frame pointers kept
# (at -O0, as GCC drops them in leaf functions otherwise), so their stacks are complete; GNU
# build-ids in every file.
PROGS_DIR    := $(BUILD)/tests/progs
PROGS_CFLAGS := -O0 -g -fno-omit-frame-pointer -Wl,--build-id=sha1
PROGS_BINS   := $(PROGS_DIR)/spin $(PROGS_DIR)/dlopener $(PROGS_DIR)/forker $(PROGS_DIR)/threads \
                $(PROGS_DIR)/mapper $(PROGS_DIR)/burst $(PROGS_DIR)/offcpu $(PROGS_DIR)/hostile

$(PROGS_DIR)/libbtdl.so: tests/progs/btdl.c
	@mkdir -p $(@D)
	$(CC) $(PROGS_CFLAGS) -fPIC -shared -o $@ $<

$(PROGS_BINS): $(PROGS_DIR)/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(CC) $(PROGS_CFLAGS) -o $@ $< -pthread -ldl

fixtures:: $(PROGS_BINS) $(PROGS_DIR)/libbtdl.so

# Unit test link list for the /proc/PID/maps reader.
TEST_procmaps_OBJS = $(BUILD)/capture/procmaps.o $(ELF_CORE_OBJS)
