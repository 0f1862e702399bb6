# buildtrace: a live symbolizing profiler on eBPF, keyed by build-id.
#
#   make          build ./buildtrace
#   make check    install missing build dependencies, build, run every test
#   make demo     install missing dependencies, build, profile the bundled demo workload
#   make vmlinux  regenerate vmlinux/vmlinux.h from the running kernel's BTF

CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := x86

BUILD    := build
PKGS     := libbpf libelf libdw libdebuginfod libcap liblzma libzstd zlib libcurl
# Evaluated when used, so that `make deps` works before the packages exist.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
            -D_GNU_SOURCE -Isrc -Iinclude -I$(BUILD) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   += $(PKG_LIBS) -liberty $(EXTRA_LDLIBS)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude -Wall -Wno-unused-function

# src/ is grouped by layer, lowest first; the order (and what may include what) is in the README's
# layout section, which tools/check-layout.py reads. OBJS_<layer> lists one layer's objects.
LAYERS   := base elf symsrc kernel capture session output cmd
# cmd/ holds one folder per program (and what they share), see the README's layout section.
SRCS     := $(wildcard $(LAYERS:%=src/%/*.c) src/cmd/*/*.c)
OBJS     := $(SRCS:src/%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/cmd/main.o,$(OBJS))
$(foreach l,$(LAYERS),$(eval OBJS_$(l) := $(filter $(BUILD)/$(l)/%,$(OBJS))))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.bpf.o)
SKELS    := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)

.PHONY: all clean check check-unit check-priv deps demo vmlinux tests fixtures bench vmtest docs install uninstall deb

all: buildtrace

buildtrace: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.bpf.o: bpf/%.bpf.c include/bt_proto.h include/bt_trace.h $(wildcard bpf/*.h) vmlinux/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(BPFTOOL) gen object $@ $@.tmp.o
	@rm -f $@.tmp.o

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h.tmp
	mv vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h

# The pprof code generated from proto/profile.proto (protoc-c, at build time): one run makes both
# files, the header stands for the pair. Everything that links the pprof writer links it too.
PKGS += libprotobuf-c
PROTO_DIR := $(BUILD)/proto
PROTO_OBJ := $(PROTO_DIR)/profile.pb-c.o

$(PROTO_DIR)/profile.pb-c.h: proto/profile.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(PROTO_DIR) --proto_path=proto $<
$(PROTO_DIR)/profile.pb-c.c: $(PROTO_DIR)/profile.pb-c.h

$(PROTO_OBJ): $(PROTO_DIR)/profile.pb-c.c $(PROTO_DIR)/profile.pb-c.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/output/pprof_write.o $(BUILD)/output/pprof_read.o: $(PROTO_DIR)/profile.pb-c.h
OBJS_output += $(PROTO_OBJ)
buildtrace: $(PROTO_OBJ)

# ---- man pages and bash completion ----------------------------------------------------------
# Made by tools/gendoc.c from the commands' option tables (src/cmd/cmdtab.c, src/cmd/cli/opts.h),
# the man pages followed by the sections written by hand in docs/man/PAGE.in; `make docs` makes
# them, `make install` installs them.
GENDOC     := $(BUILD)/gendoc
SUBCMDS    := $(filter-out record,$(shell sed -n 's/^\t{ "\([a-z-]*\)", cmd_.*/\1/p' src/cmd/cmdtab.c))
MAN1       := buildtrace.1 $(SUBCMDS:%=buildtrace-%.1)
MAN5       := buildtrace-agent.conf.5
MAN_DATE   ?= $(shell date -u -d "@$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d)
COMPLETION := $(BUILD)/completion/buildtrace

$(BUILD)/tools/gendoc.o: tools/gendoc.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(GENDOC): $(BUILD)/tools/gendoc.o $(LIB_OBJS) $(PROTO_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/man/stamp: $(GENDOC) $(wildcard docs/man/*.in)
	@rm -rf $(BUILD)/man && mkdir -p $(BUILD)/man
	$(GENDOC) man $(BUILD)/man $(MAN_DATE) docs/man
	@touch $@

$(COMPLETION): $(GENDOC)
	@mkdir -p $(@D)
	$(GENDOC) bash $@

$(BUILD)/docs.json: $(GENDOC)
	$(GENDOC) json $@

docs: $(BUILD)/man/stamp $(COMPLETION) $(BUILD)/docs.json

# ---- install ----------------------------------------------------------------------------------
# The usual variables: `make install DESTDIR=/tmp/stage PREFIX=/usr` puts every file where Debian
# puts such files (/usr/bin, /usr/share/man, /etc, the unit where systemd.pc says), PREFIX
# /usr/local (the default) under /usr/local. An existing config file is kept, and uninstall
# removes it only when it is still the example.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
SYSCONFDIR  ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR     ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system),$(PREFIX)/lib/systemd/system)
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
INSTALL     ?= install
AGENT_CONF  := $(DESTDIR)$(SYSCONFDIR)/buildtrace/agent.conf

install: buildtrace docs
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/buildtrace $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 buildtrace $(DESTDIR)$(BINDIR)/buildtrace
	$(INSTALL) -m 0644 $(MAN1:%=$(BUILD)/man/%) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(MAN5:%=$(BUILD)/man/%) $(DESTDIR)$(MANDIR)/man5/
	sed -e 's|/usr/local/bin/buildtrace|$(BINDIR)/buildtrace|g' -e 's|/etc/buildtrace/|$(SYSCONFDIR)/buildtrace/|g' \
		tools/buildtrace-agent.service > $(BUILD)/buildtrace-agent.service
	$(INSTALL) -m 0644 $(BUILD)/buildtrace-agent.service $(DESTDIR)$(UNITDIR)/buildtrace-agent.service
	@if [ -e $(AGENT_CONF) ]; then echo "install: keeping $(AGENT_CONF)"; \
	else echo "$(INSTALL) -m 0644 tools/agent.conf.example $(AGENT_CONF)"; \
		$(INSTALL) -m 0644 tools/agent.conf.example $(AGENT_CONF); fi
	$(INSTALL) -m 0644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/buildtrace

# The Debian package, by dpkg-buildpackage from debian/, checked by lintian: build/deb/*.deb.
deb:
	tools/mkdeb.sh

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/buildtrace $(MAN1:%=$(DESTDIR)$(MANDIR)/man1/%) \
		$(MAN5:%=$(DESTDIR)$(MANDIR)/man5/%) $(DESTDIR)$(UNITDIR)/buildtrace-agent.service \
		$(DESTDIR)$(BASHCOMPDIR)/buildtrace
	@if [ -e $(AGENT_CONF) ] && ! cmp -s $(AGENT_CONF) tools/agent.conf.example; then \
		echo "uninstall: keeping $(AGENT_CONF), which was changed"; \
	else rm -f $(AGENT_CONF); rmdir $(DESTDIR)$(SYSCONFDIR)/buildtrace 2>/dev/null || true; fi

# ---- tests --------------------------------------------------------------------------------
# tests/unit/LAYER/test_NAME.c links build/LAYER/NAME.o unless tests/LAYER.mk sets TEST_NAME_OBJS;
# the binaries are build/tests/test_NAME. tests/priv/test_NAME.c are privileged tests and link
# every module.
# tests/unit/tools/ holds the tests of the tree's own tools (the layout check).
UNIT_DIRS  := $(LAYERS) tools
UNIT_SRCS  := $(wildcard $(UNIT_DIRS:%=tests/unit/%/test_*.c))
UNIT_BINS  := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(UNIT_SRCS)))
$(foreach s,$(UNIT_SRCS),$(eval LAYER_$(basename $(notdir $(s))) := $(word 3,$(subst /, ,$(s)))))
-include $(wildcard tests/*.mk)

PRIV_SRCS  := $(wildcard tests/priv/test_*.c)
PRIV_BINS  := $(PRIV_SRCS:tests/priv/%.c=$(BUILD)/tests/%)
TEST_CFLAGS = $(CFLAGS) -Itests $(shell pkg-config --cflags cmocka 2>/dev/null)
TEST_LIBS   = $(shell pkg-config --libs cmocka 2>/dev/null) $(LDLIBS)

define unit_compile
$(BUILD)/tests/%.o: tests/unit/$(1)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_CFLAGS) -Itests/unit/$(1) -MMD -MP -c -o $$@ $$<
endef
$(foreach l,$(UNIT_DIRS),$(eval $(call unit_compile,$(l))))

$(BUILD)/tests/%.o: tests/priv/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/testutil.o: tests/testutil.c tests/testutil.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -c -o $@ $<

.SECONDEXPANSION:
$(UNIT_BINS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/tests/testutil.o \
		$$(or $$(TEST_$$(subst test_,,$$*)_OBJS),$(BUILD)/$$(LAYER_$$*)/$$(subst test_,,$$*).o)
	$(CC) $(TEST_CFLAGS) -o $@ $^ $(TEST_LIBS)

$(PRIV_BINS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/tests/testutil.o $(LIB_OBJS) $(PROTO_OBJ)
	$(CC) $(TEST_CFLAGS) -o $@ $^ $(TEST_LIBS)

tests: buildtrace docs $(UNIT_BINS) $(PRIV_BINS) fixtures

# tests/*.mk fragments add their fixture files to this double-colon rule.
fixtures::

deps:
	@tools/deps.sh

# make check also boots the second kernel (make vmtest), runs the unit tests a second time built
# with ASan+UBSan (make check-asan) and every fuzz target for CHECK_FUZZ_SECONDS (make fuzz);
# VMTEST=0, ASAN=0 and FUZZ=0 leave those out locally, never under CI=true.
VMTEST ?= 1
ASAN ?= 1
FUZZ ?= 1
CHECK_FUZZ_SECONDS ?= 10
check: deps
	$(MAKE) tests
	@ci=$${CI:-}; extra=""; asan_bins=""; \
	if [ "$(ASAN)" = 1 ] || [ "$$ci" = true ]; then \
		if $(MAKE) --no-print-directory check-asan-build; then asan_bins="$(ASAN_BINS)"; \
		else extra="$$extra check-asan-build"; fi; fi; \
	if [ "$(FUZZ)" = 1 ] || [ "$$ci" = true ]; then \
		$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) || extra="$$extra fuzz"; fi; \
	if [ "$(VMTEST)" = 1 ] || [ "$$ci" = true ]; then tools/vmtest/run.sh || extra="$$extra vmtest"; fi; \
	tools/check-layout.py || extra="$$extra check-layout"; \
	CHECK_ALSO_FAILED="$$extra" $(ASAN_ENV) tools/run-tests.sh $(UNIT_BINS) $(PRIV_BINS) $$asan_bins

check-unit: $(UNIT_BINS) fixtures
	tools/run-tests.sh $(UNIT_BINS)

demo: deps
	$(MAKE) buildtrace
	tools/demo.sh

vmtest: deps
	$(MAKE) tests
	tools/vmtest/run.sh

bench: deps
	$(MAKE) buildtrace
	tools/bench/run.sh

clean:
	rm -rf $(BUILD) buildtrace

# Only the loader includes the generated skeletons.
$(BUILD)/capture/capture.o $(BUILD)/capture/uprobes.o: | $(SKELS)

-include $(OBJS:.o=.d) $(wildcard $(BUILD)/tests/*.d) $(wildcard $(BUILD)/tools/*.d)
