#!/bin/sh
# make bench: prepares the machine (bcc and the kernel headers it compiles against, the workload) and
# runs tools/bench/bench.py, which writes bench/RESULTS.md and bench/raw/.
#   BENCH_QUICK=1      a smoke run of a few minutes (one repeat, smaller sizes, shorter workload)
#   BENCH_REPEATS=N    repeats per measurement (default 3), reported as median (min-max)
#   BENCH_PARTS=...    profile, syscalls, guest, long, agent, symbolize, python, churn, offcpu
#                      (default: all nine; guest boots Debian's 6.1 kernel under qemu as make vmtest does,
#                      BENCH_GUEST_TIMEOUT bounds it; churn loops the project's own build in a
#                      temporary copy of its source)
#   BENCH_CHURN_AGENT_SECONDS the churn part's agent session (default 600, 60 with BENCH_QUICK)
#   BENCH_AGENT_SECONDS the agent part's idle session (default 60, 15 with BENCH_QUICK)
#   BENCH_LONG_SECONDS the long part's session (default 60, 15 with BENCH_QUICK)
#   BENCH_KEEP=1       the parts not in BENCH_PARTS keep their rows from the previous run (RESULTS.md
#                      says which run each part comes from)
#   BENCH_INSTALL=0    do not install bcc (bpfcc-tools) and kernel headers when they are missing
# Other knobs (BENCH_RATES, BENCH_SIZES, BENCH_SEED, BENCH_COLD, BENCH_WORK_SECONDS,
# BENCH_SYM_BUDGET, BENCH_SYM_SLOW, BENCH_SYM_TIMEOUT) are read by bench.py.
set -eu
cd "$(dirname "$0")/../.."

if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root: the profilers load BPF programs and cold runs drop the page cache" >&2
	exit 1
fi
[ -x ./buildtrace ] || { echo "bench: build ./buildtrace first (make bench does)" >&2; exit 1; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# bcc is only for comparison, so a failed install leaves it out of the tables instead of failing;
# GNU time reports each command's peak RSS.
rel=$(uname -r)
want=""
installed bpfcc-tools || want="$want bpfcc-tools"
[ -x /usr/bin/time ] || want="$want time"
if [ ! -e "/lib/modules/$rel/build" ] && [ ! -e /sys/kernel/kheaders.tar.xz ] &&
   ! ls -d /usr/src/linux-headers-*-common >/dev/null 2>&1; then
	want="$want linux-headers-amd64"
fi
if [ -n "$want" ] && [ "${BENCH_INSTALL:-1}" != 0 ] && command -v apt-get >/dev/null; then
	echo "bench: installing:$want"
	{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $want >/dev/null ||
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $want >/dev/null; }; } ||
		echo "bench: could not install$want; what needs it will be left out" >&2
fi

# bcc compiles its program against the running kernel's headers. When this kernel ships none, give
# it Debian's packaged headers, with the common and the arch trees merged into one as bcc expects.
if [ -z "${BCC_KERNEL_SOURCE:-}" ] && [ ! -e "/lib/modules/$rel/build" ] &&
   [ ! -e /sys/kernel/kheaders.tar.xz ]; then
	arch_dir=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1 || true)
	common_dir=${arch_dir%-amd64}-common
	if [ -n "$arch_dir" ] && [ -d "$common_dir" ]; then
		ver=$(basename "$arch_dir" | sed 's/^linux-headers-//')
		merged="$PWD/build/bench/kheaders-$ver"
		if [ ! -e "$merged/.done" ]; then
			rm -rf "$merged"
			mkdir -p "$merged"
			cp -rs "$common_dir/." "$merged/"
			cp -rsf "$arch_dir/." "$merged/"
			touch "$merged/.done"
		fi
		export BCC_KERNEL_SOURCE="$merged"
		export BENCH_BCC_HEADERS="Debian's linux-headers-$ver (the running kernel is $rel)"
	fi
fi

mkdir -p build/bench
${CC:-cc} -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -pthread \
	-o build/bench/bench-work tools/bench/workload.c
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -o build/bench/bench-syscalls tools/bench/syscalls.c
# the churn part's dlopen loop: built without frame pointers, as tests/session.mk builds it
${CC:-cc} -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wl,--build-id=sha1 \
	-o build/bench/churnkid tests/session/churnkid.c -ldl
${CC:-cc} -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -fPIC -shared -Wl,--build-id=sha1 \
	-o build/bench/libchurn.so tests/session/churnlib.c
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -pthread -o build/bench/bench-pingpong tools/bench/pingpong.c

py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" -B tools/bench/bench.py
