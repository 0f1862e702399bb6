TEST_flamegraph_OBJS := $(BUILD)/flamegraph.o $(BUILD)/profile.o $(BUILD)/htab.o $(BUILD)/strtab.o
