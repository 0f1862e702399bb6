#!/bin/sh
# checks.sh - the checks run inside the vmtest guest (busybox sh). Each prints one line
# "VMTEST PASS NAME" or "VMTEST FAIL NAME: why" for tools/vmtest/run.sh to count; indented lines are
# diagnostics for build/vmtest/console.log. Expected values were computed on the host (bt/expect/).
. /bt/expect/env
T=/tmp/vmtest
mkdir -p $T

pass() { echo "VMTEST PASS $1"; }
fail() { echo "VMTEST FAIL $1: $2"; }
info() { echo "    $*"; }
show() { [ -s "$1" ] && sed 's/^/    | /' "$1" | head -n "${2:-30}"; true; }
wanted() { [ -z "$CHECKS" ] && return 0; case " $CHECKS " in *" $1 "*) return 0 ;; esac; return 1; }

mod_field() { awk -v m="$1" -v f="$2" '$1 == m { print $f }' /bt/expect/modules; }
ko_path() { mod_field "$1" 3; }
ko_bid() { mod_field "$1" 2; }

# Under emulation loading BPF programs takes tens of seconds: wait until buildtrace holds a BPF link
# (its programs are attached), then a little more for the initial iterator snapshot.
wait_attached() {
	pid=$1 limit=$2 i=0
	while [ $i -lt "$limit" ]; do
		kill -0 "$pid" 2>/dev/null || return 1
		ls -l /proc/"$pid"/fd 2>/dev/null | grep -q 'bpf_link' && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}

have_buildtrace() {
	command -v buildtrace >/dev/null && return 0
	fail "$1" "buildtrace is not in the initramfs (./buildtrace was not built)"
	return 1
}

# ---- the guest itself -------------------------------------------------------------------------

check_boot() {
	rel=$(uname -r)
	if [ "$rel" != "$KREL" ]; then
		fail boot "running $rel, expected $KREL"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		fail boot "no /sys/kernel/btf/vmlinux"
	else
		pass boot
	fi
}

# ---- kident on a kernel with modules ----------------------------------------------------------

check_kident_kernel() {
	out=$(kident-probe kernel 2>&1)
	[ "$out" = "kernel $KBID" ] && pass kident-kernel-build-id ||
		fail kident-kernel-build-id "got '$out', vmlinux in the boot image has $KBID"

	out=$(kident-probe find-vmlinux 2>&1)
	[ "$out" = "found /usr/lib/debug/boot/vmlinux-$KREL" ] && pass kident-find-vmlinux ||
		fail kident-find-vmlinux "got '$out'"

	# a boot image is not ELF; another ELF file is stale
	a=$(kident-probe find-vmlinux /bt/lib/vmlinuz 2>&1)
	b=$(kident-probe find-vmlinux /bt/bin/readelf 2>&1)
	case "$a|$b" in
	"find-vmlinux error -8 "*"|find-vmlinux error -116 "*) pass kident-vmlinux-refused ;;
	*) fail kident-vmlinux-refused "vmlinuz: '$a'; readelf: '$b'" ;;
	esac
}

# Compares kident-probe's module list with /proc/modules read by the shell, and module NAME with the
# build-id readelf found in its .ko on the host.
modules_agree() {
	name=$1 probe=$2
	want_n=$(wc -l < /proc/modules)
	got_n=$(grep -c '^module ' "$probe")
	if [ "$want_n" != "$got_n" ]; then
		info "/proc/modules has $want_n lines, kident found $got_n"
		return 1
	fi
	line=$(awk -v m="$name" '$1 == "module" && $2 == m' "$probe")
	set -- $line
	base=$(awk -v m="$name" '$1 == m { print $6 }' /proc/modules)
	size=$(awk -v m="$name" '$1 == m { print $2 }' /proc/modules)
	if [ -z "$line" ]; then
		info "$name missing"
		return 1
	fi
	# printf normalises 0x0000ffff... and 0xffff... alike
	if [ "$(printf '%x' "$3")" != "$(printf '%x' "$base")" ] || [ "$4" != "$size" ]; then
		info "$name: kident base $3 size $4, /proc/modules $base $size"
		return 1
	fi
	if [ "$5" != "$(ko_bid "$name")" ] || [ "$7" != "$name" ]; then
		info "$name: build-id $5 (err $6), expected $(ko_bid "$name"); lookup in its range gave $7"
		return 1
	fi
	return 0
}

check_kident_modules() {
	kident-probe modules > $T/mods1 2>&1
	if modules_agree nls_ascii $T/mods1 && grep -qx 'hidden 0' $T/mods1; then
		pass kident-modules
	else
		fail kident-modules "module list differs from /proc/modules and the .ko"
		show $T/mods1
	fi

	# Without privileges /proc/modules shows 0 addresses; kident must say so exactly when it does.
	su -s /bin/sh nobody -c 'cat /proc/modules' > $T/mods-nobody 2>&1
	if awk '$6 !~ /^0x0+$/ { n++ } END { exit n ? 0 : 1 }' $T/mods-nobody; then want=0; else want=1; fi
	kident-probe modules --drop > $T/mods2 2>&1
	if grep -qx "hidden $want" $T/mods2 && grep -q '^module nls_ascii ' $T/mods2; then
		pass kident-modules-unprivileged
	else
		fail kident-modules-unprivileged "expected hidden $want"
		show $T/mods2
		info "/proc/modules as nobody:"; show $T/mods-nobody 5
	fi

	ko=$(ko_path nls_ascii)
	a=$(kident-probe match-ko "$ko" nls_ascii 2>&1)
	b=$(kident-probe match-ko /bt/lib/nls_ascii.ko.xz nls_ascii 2>&1)
	c=$(kident-probe match-ko "$(ko_path crc7)" nls_ascii 2>&1)
	d=$(kident-probe find-module nls_ascii 2>&1)
	if [ "$a|$b|$c|$d" = "match 0|match 0|match -116|found $ko" ]; then
		pass kident-module-files
	else
		fail kident-module-files "own .ko: '$a', .ko.xz: '$b', other .ko: '$c', search: '$d' (want $ko)"
	fi
}

# ---- buildtrace ---------------------------------------------------------------------------------

# Check 1: build-ids of a process's mappings, from the initial snapshot and from a dlopen() made
# after attach, equal readelf's on the host.
check_user_build_ids() {
	have_buildtrace buildtrace-user-build-ids || return 0
	rm -f $T/go
	guestprog 120 $T/go /bt/lib/libvmlate.so > $T/gp.out 2>&1 &
	gp=$!
	sleep 1
	buildtrace buildid-list -v -p $gp -d 15 --json > $T/bl.json 2> $T/bl.err &
	bl=$!
	t0=$(date +%s)
	wait_attached $bl 120 || info "buildtrace never held a BPF link"
	info "attached after $(($(date +%s) - t0))s"
	sleep 2
	touch $T/go
	wait $bl
	rc=$?
	kill $gp 2>/dev/null
	wait $gp 2>/dev/null
	# one "BUILDID PATH" line per JSON object
	sed -n 's/.*"build_id": *"\([0-9a-f]*\)".*"path": *"\([^"]*\)".*/\1 \2/p;
		s/.*"path": *"\([^"]*\)".*"build_id": *"\([0-9a-f]*\)".*/\2 \1/p' $T/bl.json > $T/got
	bad=0
	while read -r bid path; do
		base=${path##*/}
		# mapping paths may be partial (basename only): compare by basename
		n=$(awk -v b="$base" '{ p = $2; sub(/.*\//, "", p) } p == b' $T/got | wc -l)
		wrong=$(awk -v b="$base" -v id="$bid" '{ p = $2; sub(/.*\//, "", p) } p == b && $1 != id' $T/got)
		if [ "$n" = 0 ]; then
			info "$path: not reported (expected $bid)"
			bad=1
		elif [ -n "$wrong" ]; then
			info "$path: expected $bid, reported: $wrong"
			bad=1
		fi
	done < /bt/expect/user
	# only the watched process may appear
	others=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' $T/bl.json | grep -vx "$gp" | sort -u | tr '\n' ' ')
	if [ -n "$others" ]; then
		info "mappings of unwatched processes reported: pids $others"
		bad=1
	fi
	if [ $rc != 0 ]; then
		fail buildtrace-user-build-ids "buildid-list exited $rc"
	elif [ $bad = 0 ]; then
		pass buildtrace-user-build-ids
		info "$(wc -l < $T/got) mappings; dlopen()ed after attach: $(grep libvmlate $T/got | head -n1)"
	else
		fail buildtrace-user-build-ids "mismatch"
	fi
	if [ $rc != 0 ] || [ $bad != 0 ]; then
		info "workload:"; show $T/gp.out 5
		info "buildid-list --json:"; show $T/bl.json 40
		info "stderr:"; show $T/bl.err 40
	fi
	# this kernel allows BPF trampolines: new mappings come from the mmap path itself, and the
	# dlopen() above was seen through it (no system call hook)
	if grep -q "new mappings: a BPF program on the mmap path" $T/bl.err && grep -q libvmlate $T/got; then
		pass buildtrace-mapping-source-fexit
	else
		fail buildtrace-mapping-source-fexit "not chosen, or the dlopen() was not reported"
		show $T/bl.err 10
	fi
	# the kernel side should have read every one of them, without the /proc fallback
	if [ -s $T/bl.json ] && ! grep -v '"source": *"bpf"' $T/bl.json | grep -q .; then
		pass buildtrace-user-build-ids-from-bpf
	else
		fail buildtrace-user-build-ids-from-bpf "some mappings were not read by BPF"
		grep -v '"source": *"bpf"' $T/bl.json | sed 's/^/    | /' | head -n 10
	fi
}

# Check: user stacks of a running program in each call-graph mode, the DWARF one walked in BPF (the
# default; its verifier must accept the walk: no fallback to the copy), and with the default stack
# copy and the largest (whose program takes another path): each loads on this kernel;
# DWARF stacks go through main into the library's work function. (Under emulation the program
# spends most of its time in system calls from libc, which has no frame pointers: the
# frame-pointer walk skips main there, so it only has to give the program's stacks.)
check_user_stacks() {
	have_buildtrace buildtrace-user-stacks || return 0
	guestprog 300 $T/never /bt/lib/libvmlate.so > $T/us.out 2>&1 &
	gp=$!
	bad=""
	for cg in dwarf-bpf dwarf-copy dwarf-copy,65536 fp; do
		f=$T/us-$(echo $cg | tr , _).folded
		buildtrace -p $gp -d 5 --call-graph $cg -o $f 2> $f.err
		rc=$?
		want=';main;vmguest_work'
		[ $cg = fp ] && want='^guestprog;'
		n=$(grep -c "$want" $f 2>/dev/null)
		info "$cg: exit $rc, ${n:-0} stacks matching $want"
		if grep -q "stack walk could not be loaded" $f.err 2>/dev/null; then
			info "$cg: the verifier refused the BPF stack walk"
			n=0
		fi
		if [ $rc != 0 ] || [ "${n:-0}" = 0 ]; then
			bad="$bad $cg"
			show $f.err 10
			show $f 5
		fi
	done
	kill $gp 2>/dev/null
	wait $gp 2>/dev/null
	if [ -z "$bad" ]; then
		pass buildtrace-user-stacks
	else
		fail buildtrace-user-stacks "no whole stacks with:$bad"
	fi
}

# Off-CPU time on this kernel: the scheduler's hooks load and attach, and a shell loop that sleeps
# shows its sleeps as off-CPU time in the kernel's nanosleep, asleep, from whole user stacks.
check_offcpu() {
	have_buildtrace buildtrace-off-cpu || return 0
	f=$T/off.folded
	buildtrace --off-cpu -o $f -- sh -c 'i=0; while [ $i -lt 25 ]; do sleep 0.2; i=$((i + 1)); done' 2> $f.err
	rc=$?
	n=$(grep -c 'nanosleep_\[k\];.*off-CPU: sleeping (S) [0-9]*$' $f 2>/dev/null)
	us=$(grep 'nanosleep_\[k\];.*off-CPU: sleeping (S)' $f 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
	info "exit $rc, ${n:-0} sleeping stacks in nanosleep, $us us"
	# the loop sleeps 25 times 0.2 s: most of that time is in them
	if [ $rc = 0 ] && [ "${n:-0}" -gt 0 ] && [ "$us" -gt 2500000 ]; then
		pass buildtrace-off-cpu
		show $f.err 3
	else
		fail buildtrace-off-cpu "exit $rc, ${n:-0} sleeping stacks, $us us asleep in nanosleep"
		show $f.err 20
		show $f 10
	fi
}

# Check 2: a module loaded while buildtrace runs is reported with the build-id of its .ko; so are the
# kernel and a module loaded before.
check_module_load() {
	have_buildtrace buildtrace-module-load || return 0
	dmesg -c > /dev/null
	buildtrace buildid-list -a --kernel -d 15 > $T/km.out 2> $T/km.err &
	bl=$!
	if wait_attached $bl 120; then
		sleep 2
		insmod "$(ko_path crc7)" || info "insmod crc7 failed"
	else
		info "buildtrace never held a BPF link"
	fi
	wait $bl
	rc=$?
	ok=1
	grep -q "^$KBID \[kernel.kallsyms\]" $T/km.out || { info "no '$KBID [kernel.kallsyms]' line"; ok=0; }
	grep -q "^$(ko_bid nls_ascii) " $T/km.out || { info "nls_ascii (loaded before) missing"; ok=0; }
	loaded=1
	grep -q "^$(ko_bid crc7) " $T/km.out || { info "crc7 (loaded while running) missing"; loaded=0; }
	if [ $rc = 0 ] && [ $ok = 1 ]; then
		pass buildtrace-kernel-build-ids
	else
		fail buildtrace-kernel-build-ids "exit $rc"
	fi
	if [ $rc = 0 ] && [ $loaded = 1 ]; then
		pass buildtrace-module-load
		info "$(grep "^$(ko_bid crc7) " $T/km.out | head -n1)"
		show $T/km.err 5
	else
		fail buildtrace-module-load "crc7 $(ko_bid crc7) not reported"
	fi
	if [ $rc != 0 ] || [ $ok = 0 ] || [ $loaded = 0 ]; then
		info "output (kernel lines):"; grep -v '^[0-9a-f]* /' $T/km.out | sed 's/^/    | /' | head -n 20
		info "stderr:"; show $T/km.err 40
		info "dmesg:"; dmesg | tail -n 30 | sed 's/^/    | /'
	fi
}

# kident sees a module loaded after boot (crc7, loaded by the module check if it ran).
check_kident_later_module() {
	grep -q '^crc7 ' /proc/modules || insmod "$(ko_path crc7)" || info "insmod crc7 failed"
	kident-probe modules > $T/mods3 2>&1
	if modules_agree crc7 $T/mods3; then
		pass kident-module-loaded-later
	else
		fail kident-module-loaded-later "crc7 differs"
		show $T/mods3
	fi
}

# Check 3: kernel frames of a syscall-heavy loop are named after symbols in /proc/kallsyms.
check_kernel_stacks() {
	have_buildtrace buildtrace-kernel-stacks || return 0
	(while :; do dd if=/dev/zero of=/dev/null bs=64 count=20000 2>/dev/null; done) &
	loop=$!
	buildtrace -a -d 6 --kernel-only -o $T/k.folded 2> $T/k.err &
	bt=$!
	# BPF programs are in kallsyms only while loaded: take the names while buildtrace runs too
	wait_attached $bt 120 && sleep 1 && cp /proc/kallsyms $T/kallsyms.during
	wait $bt
	rc=$?
	kill $loop 2>/dev/null
	wait $loop 2>/dev/null
	# frames are ';'-separated before the count; kernel ones end in _[k]
	awk '{ $NF = ""; n = split($0, f, ";"); for (i = 1; i <= n; i++) { g = f[i]; sub(/ +$/, "", g);
		if (g ~ /_\[k\]$/) { sub(/_\[k\]$/, "", g); print g } } }' $T/k.folded | sort -u > $T/kframes
	cat /proc/kallsyms $T/kallsyms.during 2>/dev/null | awk '{ print $3 }' | sort -u > $T/ksyms
	nk=$(wc -l < $T/kframes)
	missing=$(awk 'NR == FNR { k[$0] = 1; next } { s = $0; sub(/\+0x[0-9a-f]+$/, "", s) } !(s in k)' $T/ksyms $T/kframes)
	if [ $rc = 0 ] && [ "$nk" -gt 0 ] && [ -z "$missing" ]; then
		pass buildtrace-kernel-stacks
		info "$nk distinct kernel frames, e.g. $(head -n 3 $T/kframes | tr '\n' ' ')"
		show $T/k.err 3
	else
		fail buildtrace-kernel-stacks "exit $rc, $nk distinct kernel frames, not in kallsyms: $(echo $missing | head -c 300)"
		info "bpf_jit_kallsyms=$(cat /proc/sys/net/core/bpf_jit_kallsyms), BPF program symbols while running: $(grep -c '\[bpf\]' $T/kallsyms.during)"
		info "stacks with unnamed kernel frames:"; grep -F '[kernel.kallsyms]' $T/k.folded | sed 's/^/    | /' | head -n 10
		info "profile:"; show $T/k.folded 15
		info "stderr:"; show $T/k.err 30
	fi
}

# Check 4: a module loaded during a session, then driven hard (brd, a RAM disk): its frames carry
# the module's name and the build-id of its .ko, and their names are brd's in kallsyms.
check_module_frames() {
	have_buildtrace buildtrace-module-frames || return 0
	buildtrace -a -d 14 --kernel-only -f json -o $T/mf.json 2> $T/mf.err &
	bt=$!
	if wait_attached $bt 120; then
		sleep 1
		insmod "$(ko_path brd)" rd_nr=1 rd_size=16384 || info "insmod brd failed"
		end=$(( $(date +%s) + 7 ))
		while [ "$(date +%s)" -lt $end ]; do
			dd if=/dev/zero of=/dev/ram0 bs=1M count=16 2>/dev/null
			dd if=/dev/ram0 of=/dev/null bs=1M 2>/dev/null
		done
	else
		info "buildtrace never held a BPF link"
	fi
	wait $bt
	rc=$?
	bid=$(ko_bid brd)
	grep '"file": "\[brd\]"' $T/mf.json > $T/mf.brd
	n=$(wc -l < $T/mf.brd)
	nbid=$(grep -c "\"build_id\": \"$bid\"" $T/mf.brd)
	# named frames: "name": "X" with X a brd symbol in kallsyms
	sed -n 's/^.*{"name": "\([^"]*\)".*"resolved": true.*$/\1/p' $T/mf.brd | sort -u > $T/mf.names
	awk '$4 == "[brd]" { print $3 }' /proc/kallsyms | sort -u > $T/brd.ksyms
	named=$(wc -l < $T/mf.names)
	bad=$(comm -23 $T/mf.names $T/brd.ksyms | tr '\n' ' ')
	if [ $rc = 0 ] && [ "$n" -gt 0 ] && [ "$nbid" = "$n" ] && [ "$named" -gt 0 ] && [ -z "$bad" ]; then
		pass buildtrace-module-frames
		info "$n [brd] frames, e.g. $(head -n 3 $T/mf.names | tr '\n' ' ')"
	else
		fail buildtrace-module-frames "exit $rc, $n [brd] frames, $nbid with brd's build-id $bid, $named named, not brd's: $bad"
		info "stderr:"; show $T/mf.err 20
		info "kernel frames:"; grep '"kind": "kernel"' $T/mf.json | sed 's/^/    | /' | head -n 20
	fi
}

# Optional: the privileged cmocka tests, each case one result line.
check_priv_tests() {
	cd "$REPO" || { fail priv "no $REPO"; return 0; }
	found=0
	for t in $(cat /bt/expect/priv 2>/dev/null); do
		found=1
		name=${t##*/}
		CI=true timeout 300 "$t" > $T/$name.out 2>&1
		awk -v t="$name" '
			/^\[ RUN      \]/ { cur = $NF; why = ""; next }
			cur == "" { next }
			/^\[  ERROR   \]/ { sub(/^\[  ERROR   \] (--- )?/, ""); why = why $0 " " ; next }
			/^\[       OK \]/ { print "VMTEST PASS priv/" t "/" cur; cur = ""; next }
			/^\[  SKIPPED \]/ { print "    skipped priv/" t "/" cur; cur = ""; next }
			/^\[  FAILED  \]/ { print "VMTEST FAIL priv/" t "/" cur ": " why; cur = ""; next }
			END { if (cur != "") print "VMTEST FAIL priv/" t "/" cur ": crashed or timed out" }' $T/$name.out
		grep -q '^\[ RUN' $T/$name.out || { fail "priv/$name" "no test ran"; show $T/$name.out 20; }
		grep -qE '^\[  (FAILED|ERROR)' $T/$name.out && show $T/$name.out 60
	done
	[ $found = 1 ] || fail priv "no privileged test binary in the initramfs"
	cd /
}

# ---- measurements for make bench (only when named: VMTEST_CHECKS=syscost) -----------------------

# Centiseconds since boot, from /proc/uptime (busybox date has no sub-second format).
now_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }

syscost_cmd() {
	case $1 in
	dd) echo "dd if=/dev/zero of=/dev/null bs=1 count=$2" ;;
	getppid) echo "bench-syscalls $2" ;;
	esac
}

# The two workloads, one after the other, under profiler $1 (none, buildtrace, buildtrace-fp, perf),
# started once for both (under emulation a start takes tens of seconds); per workload prints
# "VMBENCH syscost WORKLOAD TOOL REP WALL_CS WORK_SAMPLES HOOKED_SAMPLES MAPSRC".
syscost_run() {
	tool=$1 rep=$2
	rm -f $T/sc.folded $T/sc.err $T/sc.data
	p=""
	case $tool in
	buildtrace) buildtrace -a -F 99 -o $T/sc.folded --no-live -v 2> $T/sc.err & p=$! ;;
	buildtrace-fp) buildtrace -a -F 99 --call-graph fp -o $T/sc.folded --no-live -v 2> $T/sc.err & p=$! ;;
	perf) perf record -a -g -F 99 -o $T/sc.data > /dev/null 2> $T/sc.err & p=$! ;;
	esac
	if [ -n "$p" ]; then
		case $tool in
		perf) sleep 5 ;;
		*) wait_attached $p 180 || info "$tool never attached"; sleep 3 ;;
		esac
	fi
	for w in dd getppid; do
		eval "n=\$size_$w"
		t0=$(now_cs)
		$(syscost_cmd $w $n) > /dev/null 2>&1
		t1=$(now_cs)
		eval "wall_$w=$((t1 - t0))"
	done
	# the profiler's own CPU while the workloads ran, in clock ticks (utime + stime)
	ticks=0
	[ -n "$p" ] && ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/$p/stat 2>/dev/null)
	[ -n "$p" ] && kill -INT $p && wait $p
	info "syscost: $tool used ${ticks:-?} clock ticks of CPU by the end of the workloads"
	for w in dd getppid; do
		work=0 hooked=0 src=-
		case $tool in
		buildtrace*)
			comm=$w; [ $w = getppid ] && comm=bench-syscalls
			work=$(awk -v c=$comm '{ n = $NF; split($0, f, ";") } f[1] == c { s += n } END { print s + 0 }' $T/sc.folded)
			hooked=$(awk -v c=$comm '{ n = $NF; split($0, f, ";") } f[1] == c && /bpf_prog_[0-9a-f]+_(on_sys_enter|on_sys_exit|on_mmap|on_munmap)/ { s += n } END { print s + 0 }' $T/sc.folded)
			src=$(sed -n 's/.*new mappings: //p' $T/sc.err | head -n1 | tr ' ' '_')
			;;
		esac
		eval "wall=\$wall_$w"
		echo "VMBENCH syscost $w $tool $rep $wall $work $hooked ${src:--}"
	done
	[ "$tool" = none ] || show $T/sc.err 5
}

check_syscost() {
	have_buildtrace syscost || return 0
	# sizes that take about 4 s alone here
	for w in dd getppid; do
		n=20000
		while :; do
			t0=$(now_cs); $(syscost_cmd $w $n) > /dev/null 2>&1; t1=$(now_cs)
			[ $((t1 - t0)) -ge 50 ] && break
			n=$((n * 4))
		done
		eval "size_$w=$((n * 400 / (t1 - t0)))"
		eval "info \"syscost: $w size \$size_$w\""
	done
	tools="buildtrace buildtrace-fp perf"
	for rep in 1 2 3; do
		for tool in none $tools; do
			syscost_run $tool $rep
		done
		# the next repeat starts with another profiler
		tools="${tools#* } ${tools%% *}"
	done
	pass syscost
}

wanted boot && check_boot
wanted kident && check_kident_kernel
# nls_ascii is loaded before any buildtrace session, crc7 only during one
insmod "$(ko_path nls_ascii)" || info "insmod nls_ascii failed"
wanted kident && check_kident_modules
wanted user && check_user_build_ids
wanted ustacks && check_user_stacks
wanted offcpu && check_offcpu
wanted module && check_module_load
wanted kident && check_kident_later_module
wanted kstacks && check_kernel_stacks
wanted modframes && check_module_frames
[ "$PRIV" = 1 ] && wanted priv && check_priv_tests
case " $CHECKS " in *" syscost "*) check_syscost ;; esac
true
