# `make vmtest` pieces: a probe that runs kident on the guest
# kernel, and the in-guest workload (a program, a linked library and a dlopen()ed one).

VMTEST_DIR := $(BUILD)/vmtest/progs
VMTEST_CFLAGS := -O2 -g -fno-omit-frame-pointer -Wl,--build-id=sha1

$(VMTEST_DIR)/kident-probe: tools/vmtest/kident_probe.c $(TEST_kident_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(VMTEST_DIR)/libvmguest.so: tools/vmtest/guestlib.c
	@mkdir -p $(@D)
	$(CC) $(VMTEST_CFLAGS) -fPIC -shared -Wl,-soname,libvmguest.so -o $@ $<

$(VMTEST_DIR)/libvmlate.so: tools/vmtest/guestlib.c
	@mkdir -p $(@D)
	$(CC) $(VMTEST_CFLAGS) -fPIC -shared -DLATE -Wl,-soname,libvmlate.so -o $@ $<

# Inside the guest the libraries live in /bt/lib.
$(VMTEST_DIR)/guestprog: tools/vmtest/guestprog.c $(VMTEST_DIR)/libvmguest.so
	$(CC) $(VMTEST_CFLAGS) -o $@ $< -L$(VMTEST_DIR) -lvmguest -ldl -Wl,-rpath,/bt/lib

.PHONY: vmtest-progs
vmtest-progs: $(VMTEST_DIR)/kident-probe $(VMTEST_DIR)/guestprog $(VMTEST_DIR)/libvmlate.so

fixtures:: vmtest-progs
