# Unit test link lists for the kernel's symbols, build-ids and modules.
TEST_kallsyms_OBJS = $(BUILD)/kernel/kallsyms.o $(BUILD)/base/htab.o $(BUILD)/base/safeopen.o
TEST_kident_OBJS   = $(BUILD)/kernel/kident.o $(ELF_CORE_OBJS)
# The session's module table: kident underneath, .ko files read through the ELF core.
TEST_kmods_OBJS    = $(BUILD)/kernel/kmods.o $(TEST_kident_OBJS)
$(BUILD)/tests/test_kmods: | $(ELF_FIXTURES)
# The naming rule over both tables: kallsyms parsed from a buffer, modules with the fx-mod.ko fixture.
TEST_kframe_OBJS   = $(BUILD)/kernel/kframe.o $(BUILD)/kernel/kdyn.o $(BUILD)/kernel/kallsyms.o $(BUILD)/base/htab.o $(TEST_kmods_OBJS)
$(BUILD)/tests/test_kframe: | $(ELF_FIXTURES)
# /proc/PID read for a process's names: the one opener of regular files underneath.
TEST_procmeta_OBJS = $(BUILD)/kernel/procmeta.o $(BUILD)/base/safeopen.o
