#!/bin/sh
# Installs npm packages the output tests drive (default: pprof-format; the browser tests add
# puppeteer-core, and speedscope for the perf-script test; the Go tests esbuild's builds) into a
# test-local node_modules, build/npm, once. Prints why and exits 1 when it
# cannot (no npm, no registry).
set -u
dir=build/npm
[ $# -gt 0 ] || set -- pprof-format
missing=""
for p in "$@"; do
	[ -f "$dir/node_modules/$p/package.json" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
command -v npm >/dev/null 2>&1 || { echo "npm is not installed"; exit 1; }
mkdir -p "$dir" || exit 1
[ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
specs=""
for p in $missing; do
	case $p in
	pprof-format) specs="$specs pprof-format@^2" ;;
	puppeteer-core) specs="$specs puppeteer-core@^24" ;;
	speedscope) specs="$specs speedscope@^1.25" ;;
	# stripped Go programs of other Go releases than Debian's (esbuild's builds): Go 1.16, 1.17,
	# 1.19, 1.20, 1.23, for the tests of Go's function table
	esbuild-go116) specs="$specs esbuild-go116@npm:esbuild-linux-64@0.11.23" ;;
	esbuild-go117) specs="$specs esbuild-go117@npm:esbuild-linux-64@0.13.15" ;;
	esbuild-go119) specs="$specs esbuild-go119@npm:esbuild-linux-64@0.14.54" ;;
	esbuild-go120) specs="$specs esbuild-go120@npm:@esbuild/linux-x64@0.17.19" ;;
	esbuild-go123) specs="$specs esbuild-go123@npm:@esbuild/linux-x64@0.24.0" ;;
	*) specs="$specs $p" ;;
	esac
done
# puppeteer-core never downloads a browser: the tests use Debian's Chromium.
if ! log=$(timeout 600 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error $specs 2>&1); then
	echo "npm install$specs failed: $(printf '%s' "$log" | tail -n 3)"
	exit 1
fi
exit 0
