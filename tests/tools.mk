# The tests of the tree's own tools run them; testutil is all they link.
TEST_check_layout_OBJS := $(BUILD)/tests/testutil.o
# The documentation check runs the binary's --help and reads the man pages and build/docs.json.
TEST_check_docs_OBJS := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_check_docs: | buildtrace docs
# The install test runs make install and uninstall into a temporary DESTDIR.
TEST_install_OBJS := $(BUILD)/tests/testutil.o
$(BUILD)/tests/test_install: | buildtrace docs
