# Unit test link lists for the base modules that need another.
TEST_esc_OBJS = $(BUILD)/base/esc.o $(BUILD)/base/utf8.o
