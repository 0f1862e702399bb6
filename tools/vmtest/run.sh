#!/bin/sh
# run.sh - `make vmtest`: boots Debian's stock 6.1 kernel under qemu (TCG) from an initramfs holding
# busybox, buildtrace, the kident probe, a workload and a few of that kernel's modules; the guest runs
# tools/vmtest/checks.sh, and this script counts the PASS/FAIL lines it prints on the serial console.
#
# Environment: VMTEST_TIMEOUT (seconds for the whole guest run, default 600), VMTEST_KEEP=1 (keep
# the staging tree build/vmtest/initramfs for inspection), VMTEST_CHECKS (space-separated check
# names to run instead of all of them: boot kident user ustacks offcpu module kstacks modframes; and syscost,
# make bench's measurement, which runs only when named), VMTEST_BUILDTRACE (the
# buildtrace binary to test, default ./buildtrace), VMTEST_PRIV=1 (also run the privileged test
# binaries build/tests/test_* of tests/priv/ in the guest, from a copy of build/ at this repository's
# path, each test case counted; slow under emulation).
set -eu

cd "$(dirname "$0")/../.."
REPO=$(pwd)
VM=$REPO/build/vmtest
CACHE=$VM/cache
STAGE=$VM/initramfs
PROGS=$VM/progs
TIMEOUT=${VMTEST_TIMEOUT:-600}
BUILDTRACE=${VMTEST_BUILDTRACE:-./buildtrace}
# Small modules of the guest kernel without dependencies; the first is loaded while buildtrace
# watches, the second before it starts.
MODULES="crc7 nls_ascii brd"
# What this script needs beyond tools/deps.sh.
VMTEST_PKGS="qemu-system-x86 busybox-static"

say() { echo "vmtest: $*"; }
die() {
	echo "vmtest: $*" >&2
	echo "vmtest: 0 passed, 1 failed"
	exit 1
}

install_missing() {
	missing=""
	for p in $VMTEST_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing:$missing"
	[ "$(id -u)" = 0 ] || die "missing packages and not root; run: sudo apt-get install$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# The versioned kernel package the linux-image-amd64 metapackage currently points at.
kernel_package() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1
}

fetch_kernel() {
	mkdir -p "$CACHE"
	pkg=$(kernel_package)
	if [ -z "$pkg" ]; then
		apt-get update -qq || true
		pkg=$(kernel_package)
	fi
	if [ -n "$pkg" ]; then
		DEB=$(ls "$CACHE/${pkg}"_*.deb 2>/dev/null | tail -n1 || true)
		if [ -z "$DEB" ]; then
			say "downloading $pkg"
			if ! (cd "$CACHE" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null); then
				# stale package lists name a version the archive no longer has
				apt-get update -qq || true
				pkg=$(kernel_package)
				(cd "$CACHE" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null) ||
					die "apt-get download $pkg failed"
			fi
			DEB=$(ls "$CACHE/${pkg}"_*.deb | tail -n1)
		fi
	else
		# no package lists (offline): whatever was downloaded before
		DEB=$(ls "$CACHE"/linux-image-*.deb 2>/dev/null | tail -n1 || true)
		[ -n "$DEB" ] || die "cannot find the kernel package linux-image-amd64 depends on"
	fi
	KDIR=$CACHE/$(basename "$DEB" .deb)
	# older kernels' packages and trees are of no further use
	for old in "$CACHE"/linux-image-*; do
		case $old in "$DEB" | "$KDIR") ;; *) rm -rf "$old" ;; esac
	done
	if [ ! -f "$KDIR/.done" ]; then
		say "extracting $(basename "$DEB")"
		rm -rf "$KDIR"
		mkdir -p "$KDIR"
		pats="./boot/*"
		for m in $MODULES; do pats="$pats */$m.ko*"; done
		# shellcheck disable=SC2086
		dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$KDIR" --wildcards $pats
		extract_vmlinux_notes
		touch "$KDIR/.done"
	fi
	VMLINUZ=$(ls "$KDIR"/boot/vmlinuz-* | head -n1)
	KREL=${VMLINUZ##*/vmlinuz-}
}

# The expected kernel build-id comes from the kernel image itself: the ELF vmlinux is an xz, zstd or
# gzip stream inside the boot image. Only its .notes are kept (a tiny ELF with the same build-id).
extract_vmlinux_notes() {
	z=$(ls "$KDIR"/boot/vmlinuz-* | head -n1)
	raw=$KDIR/vmlinux.raw
	# (shell strings cannot hold the NUL that ends the xz magic; the first five bytes suffice)
	for fmt in "xz:$(printf '\3757zXZ')" "zstd:$(printf '\050\265\057\375')" "gzip:$(printf '\037\213\010')"; do
		name=${fmt%%:*}
		magic=${fmt#*:}
		for off in $(LC_ALL=C grep -obUaF "$magic" "$z" 2>/dev/null | cut -d: -f1 | head -n 5); do
			case $name in
			xz) tail -c +$((off + 1)) "$z" | xz -dcq --single-stream > "$raw" 2>/dev/null || true ;;
			zstd) tail -c +$((off + 1)) "$z" | zstd -dcq > "$raw" 2>/dev/null || true ;;
			gzip) tail -c +$((off + 1)) "$z" | gzip -dcq > "$raw" 2>/dev/null || true ;;
			esac
			if readelf -h "$raw" >/dev/null 2>&1; then
				objcopy --only-section=.notes "$raw" "$KDIR/vmlinux.notes" 2>/dev/null
				rm -f "$raw"
				return 0
			fi
		done
	done
	rm -f "$raw"
	die "could not find the ELF kernel inside $z"
}

build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -n1
}

# Copies an ELF file and the shared libraries it needs (real files at their real paths, the paths
# ldd names as symlinks to them, as on the host).
copy_with_libs() {
	src=$1 dst=$2
	mkdir -p "$STAGE$(dirname "$dst")"
	cp -L "$src" "$STAGE$dst"
	ldd "$src" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
		while read -r lib; do
			real=$(readlink -f "$lib")
			if [ ! -e "$STAGE$real" ]; then
				mkdir -p "$STAGE$(dirname "$real")"
				cp "$real" "$STAGE$real"
			fi
			if [ "$lib" != "$real" ] && [ ! -e "$STAGE$lib" ] && [ ! -L "$STAGE$lib" ]; then
				mkdir -p "$STAGE$(dirname "$lib")"
				ln -s "$real" "$STAGE$lib"
			fi
		done
}

# The privileged tests run from the repository root and use build/ and ./buildtrace by relative
# path (and some absolute rpaths into build/): mirror them at the same path in the guest, with the
# oracles they call.
stage_priv_tests() {
	mkdir -p "$STAGE$REPO"
	tar -C "$REPO" --exclude=build/vmtest --exclude='build/tests/test_*' --exclude='*.o' \
		--exclude='*.d' -cf - build |
		tar -C "$STAGE$REPO" -xf -
	[ -x "$BUILDTRACE" ] && copy_with_libs "$BUILDTRACE" "$REPO/buildtrace"
	for src in tests/priv/test_*.c; do
		[ -e "$src" ] || continue
		bin=build/tests/$(basename "$src" .c)
		[ -x "$bin" ] || continue
		copy_with_libs "$bin" "$REPO/$bin"
		echo "$bin" >> "$STAGE/bt/expect/priv"
	done
	for tool in nm perf; do
		t=$(command -v $tool) && copy_with_libs "$(readlink -f "$t")" "/bt/bin/$tool"
	done
}

build_initramfs() {
	rm -rf "$STAGE"
	mkdir -p "$STAGE/bt/bin" "$STAGE/bt/lib" "$STAGE/bt/expect" "$STAGE/usr"
	# merged /usr as on the host, so that library paths in the guest are the host's
	for d in bin sbin lib lib64; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$STAGE/$d"
			mkdir -p "$STAGE/$(readlink "/$d" | sed 's|^/||')"
		else
			mkdir -p "$STAGE/$d"
		fi
	done
	mkdir -p "$STAGE/proc" "$STAGE/sys" "$STAGE/dev" "$STAGE/tmp" "$STAGE/run" "$STAGE/etc"
	# an unprivileged user for the checks of what /proc hides
	printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$STAGE/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$STAGE/etc/group"
	copy_with_libs /bin/busybox /bin/busybox
	for a in $(/bin/busybox --list); do
		[ -e "$STAGE/bin/$a" ] || ln -s busybox "$STAGE/bin/$a"
	done
	cp tools/vmtest/init "$STAGE/init"
	cp tools/vmtest/checks.sh "$STAGE/bt/checks.sh"
	chmod +x "$STAGE/init" "$STAGE/bt/checks.sh"

	# programs
	if [ -x "$BUILDTRACE" ]; then
		copy_with_libs "$BUILDTRACE" /bt/bin/buildtrace
	else
		say "$BUILDTRACE is not built: its checks will fail"
	fi
	copy_with_libs "$PROGS/kident-probe" /bt/bin/kident-probe
	copy_with_libs "$PROGS/guestprog" /bt/bin/guestprog
	cp "$PROGS/libvmguest.so" "$PROGS/libvmlate.so" "$STAGE/bt/lib/"
	copy_with_libs "$(command -v readelf)" /bt/bin/readelf
	[ "${VMTEST_PRIV:-0}" = 1 ] && stage_priv_tests
	# make bench's syscall workloads (tools/bench/run.sh builds the second) and perf beside them
	case " ${VMTEST_CHECKS:-} " in *" syscost "*)
		[ -x build/bench/bench-syscalls ] || die "syscost: build/bench/bench-syscalls is not built (make bench builds it)"
		copy_with_libs build/bench/bench-syscalls /bt/bin/bench-syscalls
		t=$(command -v perf) && copy_with_libs "$(readlink -f "$t")" /bt/bin/perf
		;;
	esac

	# the guest kernel's modules, at their usual place
	: > "$STAGE/bt/expect/modules"
	for m in $MODULES; do
		ko=$(find "$KDIR/lib/modules" -name "$m.ko*" | head -n1)
		[ -n "$ko" ] || die "module $m is not in $(basename "$DEB")"
		rel=${ko#"$KDIR"}
		mkdir -p "$STAGE$(dirname "$rel")"
		cp "$ko" "$STAGE$rel"
		case $ko in
		*.xz) plain=$VM/tmp.ko; xz -dc "$ko" > "$plain" ;;
		*.zst) plain=$VM/tmp.ko; zstd -dcq "$ko" > "$plain" ;;
		*.gz) plain=$VM/tmp.ko; gzip -dc "$ko" > "$plain" ;;
		*) plain=$ko ;;
		esac
		deps=$(readelf -p .modinfo "$plain" 2>/dev/null | sed -n 's/.*depends=//p')
		[ -z "$deps" ] || die "module $m depends on $deps"
		bid=$(build_id "$plain")
		[ -n "$bid" ] || die "module $m has no build-id"
		echo "$m $bid $rel" >> "$STAGE/bt/expect/modules"
		# a compressed copy elsewhere: the same build-id must be found through decompression
		xz -c "$plain" > "$STAGE/bt/lib/$m.ko.xz"
		rm -f "$VM/tmp.ko"
	done
	# a vmlinux for the running kernel (notes only) where debug packages put it
	mkdir -p "$STAGE/usr/lib/debug/boot"
	cp "$KDIR/vmlinux.notes" "$STAGE/usr/lib/debug/boot/vmlinux-$KREL"
	cp "$VMLINUZ" "$STAGE/bt/lib/vmlinuz"

	kbid=$(build_id "$KDIR/vmlinux.notes")
	[ -n "$kbid" ] || die "the guest kernel has no build-id"
	{
		echo "KREL=$KREL"
		echo "KBID=$kbid"
		echo "CHECKS='${VMTEST_CHECKS:-}'"
		echo "REPO='$REPO'"
		echo "PRIV='${VMTEST_PRIV:-0}'"
	} > "$STAGE/bt/expect/env"
	# user-space files whose build-ids buildtrace must report: the workload and what it maps
	: > "$STAGE/bt/expect/user"
	for f in "$PROGS/guestprog" "$PROGS/libvmguest.so" "$PROGS/libvmlate.so"; do
		echo "$(build_id "$f") /bt/$(case $f in *.so) echo lib ;; *) echo bin ;; esac)/$(basename "$f")" \
			>> "$STAGE/bt/expect/user"
	done
	ldd "$PROGS/guestprog" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
		grep -v libvmguest | while read -r lib; do
			real=$(readlink -f "$lib")
			echo "$(build_id "$real") $real" >> "$STAGE/bt/expect/user"
		done

	(cd "$STAGE" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null) | gzip -1 > "$VM/initrd.gz"
	[ "${VMTEST_KEEP:-0}" = 1 ] || rm -rf "$STAGE"
}

boot() {
	say "booting $KREL under qemu (TCG, timeout ${TIMEOUT}s)"
	rc=0
	timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic \
		-no-reboot -kernel "$VMLINUZ" -initrd "$VM/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet" < /dev/null > "$VM/console.raw" 2>&1 || rc=$?
	tr -d '\r' < "$VM/console.raw" > "$VM/console.log"
	rm -f "$VM/console.raw"
	QEMU_RC=$rc
}

report() {
	grep -E '^VMTEST (PASS|FAIL) ' "$VM/console.log" || true
	passed=$(grep -c '^VMTEST PASS ' "$VM/console.log" || true)
	failed=$(grep -c '^VMTEST FAIL ' "$VM/console.log" || true)
	if ! grep -q '^VMTEST DONE' "$VM/console.log"; then
		if [ "$QEMU_RC" = 124 ] || [ "$QEMU_RC" = 137 ]; then
			echo "VMTEST FAIL guest did not finish within ${TIMEOUT}s"
		else
			echo "VMTEST FAIL guest stopped before the checks finished (qemu exit $QEMU_RC)"
		fi
		failed=$((failed + 1))
	fi
	if [ "$passed" = 0 ] && [ "$failed" = 0 ]; then
		echo "VMTEST FAIL no check ran"
		failed=1
	fi
	if [ "$failed" != 0 ]; then
		echo "---- guest console (last 80 lines; all of it in build/vmtest/console.log) ----"
		tail -n 80 "$VM/console.log" | sed 's/^/guest| /'
		echo "----"
	fi
	echo "vmtest: $passed passed, $failed failed"
	[ "$failed" = 0 ]
}

install_missing
make -s vmtest-progs >/dev/null || die "building the guest programs failed"
fetch_kernel
build_initramfs
start=$(date +%s)
boot
say "guest ran $(($(date +%s) - start))s"
report
