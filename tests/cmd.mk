# Unit test link lists for the commands' own modules (option parsing, agent configuration).
TEST_cli_OBJS       := $(BUILD)/cmd/cli.o
TEST_agentconf_OBJS := $(BUILD)/cmd/agentconf.o $(BUILD)/cmd/serve.o $(BUILD)/cmd/httpreq.o $(BUILD)/capture/callgraph.o
# These run the command only: testutil is all they link.
TEST_cmd_cache_OBJS     := $(BUILD)/tests/testutil.o
TEST_cmd_symbolize_OBJS := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_cmd_cache $(BUILD)/tests/test_cmd_symbolize: | buildtrace
TEST_cmd_report_OBJS    := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_cmd_report: | buildtrace
