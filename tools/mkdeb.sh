#!/bin/sh
# mkdeb.sh - `make deb`: the Debian package, built by Debian's own tools (dpkg-buildpackage and
# debhelper, from debian/) in a copy of the source tree under build/deb/, where the .deb lands,
# then checked by lintian: an error fails, warnings are shown.
# usage: tools/mkdeb.sh    prints the path of the .deb last.
set -eu
cd "$(dirname "$0")/.."
# A clean start for the package build's own make, whatever make runs this.
unset MAKEFLAGS MFLAGS MAKELEVEL
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
out=build/deb
src=$out/buildtrace-$version
rm -rf "$out"
mkdir -p "$src"
# The sources: what git tracks (and new files it does not ignore), else the tree without its builds.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list=$out/files
	git ls-files -d >"$list.deleted"
	git ls-files -co --exclude-standard | grep -vxF -f "$list.deleted" >"$list" || true
	tar -cf - -T "$list" | tar -xf - -C "$src"
	rm -f "$list" "$list.deleted"
else
	tar --exclude=./build --exclude=./buildtrace --exclude=./build-asan --exclude=./build-fuzz -cf - . |
		tar -xf - -C "$src"
fi
(cd "$src" && dpkg-buildpackage -b -us -uc -J"$(nproc)")
deb=$out/buildtrace_${version}_$arch.deb
echo "lintian $deb"
lintian --fail-on error --display-info "$deb"
echo "$deb"
