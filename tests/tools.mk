# The tests of the tree's own tools run them; testutil is all they link.
TEST_check_layout_OBJS := $(BUILD)/tests/testutil.o
