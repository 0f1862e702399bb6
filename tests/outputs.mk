# Outputs for other tools: the pprof code generated from proto/profile.proto (protoc-c, at build
# time), the link lists of the pprof and JSON unit tests, and the browser test's runner.
PKGS += libprotobuf-c

PROTO_DIR := $(BUILD)/proto
PROTO_GEN := $(PROTO_DIR)/profile.pb-c.c $(PROTO_DIR)/profile.pb-c.h
PROTO_OBJ := $(PROTO_DIR)/profile.pb-c.o

# One protoc-c run makes both files; the header stands for the pair.
$(PROTO_DIR)/profile.pb-c.h: proto/profile.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(PROTO_DIR) --proto_path=proto $<
$(PROTO_DIR)/profile.pb-c.c: $(PROTO_DIR)/profile.pb-c.h

$(PROTO_OBJ): $(PROTO_DIR)/profile.pb-c.c $(PROTO_DIR)/profile.pb-c.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/pprof.o $(BUILD)/tests/test_pprof.o: $(PROTO_DIR)/profile.pb-c.h

# Everything that links pprof.o links the generated code too: the program and every privileged test
# (they link all modules).
buildtrace: $(PROTO_OBJ)
$(patsubst tests/priv/%.c,$(BUILD)/tests/%,$(wildcard tests/priv/test_*.c)): $(PROTO_OBJ)

OUTPUTS_SESSION_OBJS := $(filter-out $(BUILD)/main.o $(BUILD)/cmd_%.o $(BUILD)/capture.o,$(LIB_OBJS)) \
	$(PROTO_OBJ)
TEST_pprof_OBJS   := $(OUTPUTS_SESSION_OBJS)
TEST_jsonout_OBJS := $(OUTPUTS_SESSION_OBJS)
# The browser test drives ./buildtrace and a browser: testutil is all it links.
TEST_browser_OBJS := $(BUILD)/tests/testutil.o

# They read fixture programs and run ./buildtrace report.
$(BUILD)/tests/test_pprof $(BUILD)/tests/test_jsonout: | build/fixtures/fx-sha1 build/fixtures/libfx.so buildtrace
$(BUILD)/tests/test_browser: | buildtrace
