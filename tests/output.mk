# Unit test link lists for the writers and readers of profiles, and the browser test's runner.
TEST_folded_OBJS     = $(BUILD)/output/folded.o $(BUILD)/session/profile.o $(BUILD)/base/htab.o $(BUILD)/base/strtab.o \
                       $(BUILD)/base/esc.o $(BUILD)/base/utf8.o
TEST_flamegraph_OBJS = $(BUILD)/output/flamegraph.o $(BUILD)/output/folded.o $(BUILD)/session/profile.o $(BUILD)/base/htab.o \
                       $(BUILD)/base/strtab.o $(BUILD)/base/utf8.o $(BUILD)/base/esc.o
# The pprof and JSON tests build a session by hand (outputs_session.h): every layer up to output,
# and of the capture layer only the record check the session makes.
OUTPUT_SESSION_OBJS  = $(OBJS_base) $(OBJS_elf) $(OBJS_symsrc) $(OBJS_kernel) $(BUILD)/capture/records.o $(BUILD)/capture/procmaps.o \
                       $(OBJS_session) $(OBJS_output)
TEST_pprof_OBJS      = $(OUTPUT_SESSION_OBJS)
TEST_jsonout_OBJS    = $(OUTPUT_SESSION_OBJS)
TEST_perfscript_OBJS = $(OUTPUT_SESSION_OBJS)
# The browser test drives ./buildtrace and a browser: testutil is all it links.
TEST_browser_OBJS    = $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_pprof.o: $(PROTO_DIR)/profile.pb-c.h

# They read fixture programs and run ./buildtrace report.
$(BUILD)/tests/test_pprof $(BUILD)/tests/test_jsonout $(BUILD)/tests/test_perfscript: | build/fixtures/fx-sha1 build/fixtures/libfx.so buildtrace
$(BUILD)/tests/test_browser: | buildtrace
TEST_profdir_OBJS    = $(BUILD)/output/profdir.o $(BUILD)/base/wfile.o
