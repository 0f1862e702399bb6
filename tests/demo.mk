# The demo workload: frame pointers kept, in leaf functions too (which gcc 12 ignores, hence clang),
# and no inlining, so its stacks are complete.
$(BUILD)/demo-workload: tools/demo/workload.c
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls -Wl,--build-id -o $@ $<

fixtures:: $(BUILD)/demo-workload
