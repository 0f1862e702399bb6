#!/bin/sh
# run.sh [TEST.cjs] INPUT FOLDED OUTDIR - runs a browser test of tests/browser/ (flamegraph.cjs on a
# flame graph SVG by default; speedscope.cjs on perf-script output, heatmap.cjs on a heat map) in
# Debian's headless Chromium. A missing Chromium is installed (apt) only under CI=true or
# BT_BROWSER_TESTS=1, and puppeteer-core (npm, and speedscope for its test) into build/npm;
# otherwise the test is skipped: exit 77 with the reason. Under CI=true nothing is skipped: what
# cannot be installed fails.
set -u
test=tests/browser/flamegraph.cjs
case $1 in *.cjs) test=$1; shift ;; esac
input=$1 folded=$2 out=$3
pkgs=puppeteer-core
case $test in *speedscope.cjs) pkgs="$pkgs speedscope" ;; esac
ci=0; [ "${CI:-}" = true ] && ci=1
want=$ci; [ "${BT_BROWSER_TESTS:-}" = 1 ] && want=1
chromium=${BT_CHROMIUM:-/usr/bin/chromium}

cannot() {
	if [ $ci = 1 ]; then echo "browser test cannot run under CI: $1"; exit 1; fi
	echo "skipped: $1"; exit 77
}

if [ ! -x "$chromium" ]; then
	[ $want = 1 ] || cannot "no Chromium at $chromium (BT_BROWSER_TESTS=1 installs Debian's chromium and runs it)"
	[ "$(id -u)" = 0 ] || cannot "Chromium is missing and installing it needs root: apt-get install chromium"
	echo "installing Debian's chromium (once)"
	export DEBIAN_FRONTEND=noninteractive
	if ! log=$( { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } 2>&1 ); then
		cannot "apt-get install chromium failed: $(printf '%s' "$log" | tail -n 3)"
	fi
	[ -x "$chromium" ] || cannot "no Chromium at $chromium after installing it"
fi
command -v node >/dev/null 2>&1 || cannot "node is not installed"
if ! msg=$(tests/outputs/npm-setup.sh $pkgs); then
	cannot "$msg"
fi
mkdir -p "$out"
BT_CHROMIUM=$chromium NODE_PATH=build/npm/node_modules timeout 300 node "$test" "$input" "$folded" "$out"
