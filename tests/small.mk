# Unit test link lists for the capability, /proc/PID/maps and kallsyms modules.
TEST_kallsyms_OBJS := $(BUILD)/kallsyms.o $(BUILD)/htab.o
TEST_caps_OBJS     := $(BUILD)/caps.o
TEST_procmaps_OBJS := $(BUILD)/procmaps.o $(BUILD)/buildid.o $(BUILD)/elffile.o $(BUILD)/decompress.o
TEST_unwind_OBJS := $(BUILD)/unwind.o $(BUILD)/elffile.o $(BUILD)/buildid.o $(BUILD)/decompress.o \
	$(BUILD)/procmaps.o
