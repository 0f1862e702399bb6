# Unit test link lists for the commands' own modules (option parsing, agent configuration).
TEST_cli_OBJS       := $(BUILD)/cmd/cli/cli.o $(BUILD)/base/esc.o $(BUILD)/base/utf8.o
TEST_opts_OBJS      := $(BUILD)/cmd/cli/opts.o
TEST_agentconf_OBJS := $(BUILD)/cmd/agent/agentconf.o $(BUILD)/cmd/net/serve.o $(BUILD)/cmd/net/httpreq.o $(BUILD)/capture/callgraph.o \
                       $(BUILD)/session/relabel.o $(BUILD)/base/regex.o $(BUILD)/base/md5.o \
                       $(BUILD)/base/safeopen.o $(BUILD)/base/trustdir.o $(BUILD)/cmd/net/push.o \
                       $(BUILD)/output/profdir.o $(BUILD)/base/wfile.o
# These run the command only: testutil is all they link.
TEST_cmd_cache_OBJS     := $(BUILD)/tests/testutil.o
TEST_cmd_symbolize_OBJS := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_cmd_cache $(BUILD)/tests/test_cmd_symbolize: | buildtrace
TEST_cmd_report_OBJS    := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_cmd_report: | buildtrace
TEST_launch_OBJS := $(BUILD)/cmd/live/launch.o
TEST_httpreq_OBJS := $(BUILD)/cmd/net/httpreq.o

# The command `buildtrace -- COMMAND` tests start (tests/priv/test_launch.c): built like the capture
# tests' programs (frame pointers, build-id), see tests/capture.mk.
$(BUILD)/tests/progs/exitwith: tests/progs/exitwith.c
	@mkdir -p $(@D)
	$(CC) $(PROGS_CFLAGS) -o $@ $< -pthread
fixtures:: $(BUILD)/tests/progs/exitwith
# The session's command line checks formats and call graph modes with their own parsers.
TEST_recordopts_OBJS = $(LIB_OBJS) $(PROTO_OBJ)
# The live view's table and keys read a session: they link the modules a session is made of.
TEST_topview_OBJS = $(LIB_OBJS) $(PROTO_OBJ)
TEST_liveview_OBJS = $(LIB_OBJS) $(PROTO_OBJ)
