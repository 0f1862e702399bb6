#!/bin/sh
# Installs the Debian packages buildtrace needs to build and test, only those that are missing.
set -eu
PKGS="make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev libdebuginfod-dev libcap-dev libiberty-dev libcurl4-openssl-dev
      libcmocka-dev zlib1g-dev liblzma-dev libzstd-dev pkg-config elfutils binutils linux-perf
      xz-utils zstd gzip python3 debuginfod libc6-dbg g++ lld libclang-rt-14-dev
      protobuf-c-compiler libprotobuf-c-dev protobuf-compiler libxml2-utils systemd strace util-linux tmux
      golang-go python3-prometheus-client openssl curl python3.11-dbg libcap2-bin
      nodejs openjdk-17-jdk-headless
      debhelper dpkg-dev lintian mandoc man-db bash-completion"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages and not root; run: sudo apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
