# Unit test link lists for the session core modules.
TEST_proctable_OBJS := $(BUILD)/proctable.o $(BUILD)/htab.o
TEST_profile_OBJS   := $(BUILD)/profile.o $(BUILD)/htab.o $(BUILD)/strtab.o
TEST_strtab_OBJS    := $(BUILD)/strtab.o $(BUILD)/htab.o
TEST_cli_OBJS       := $(BUILD)/cli.o
TEST_agentconf_OBJS := $(BUILD)/agentconf.o $(BUILD)/callgraph.o
