#!/bin/sh
# make demo: profiles the bundled workload for a few seconds and writes folded stacks and a flame graph.
set -eu
cd "$(dirname "$0")/.."
make -s build/demo-workload
out=${DEMO_OUT:-demo}
mkdir -p "$out"
./build/demo-workload 8 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 0.5
echo "demo: profiling the demo workload (pid $pid) for 5 seconds..."
./buildtrace -p "$pid" -d 5 -o "$out/demo.folded"
./buildtrace report "$out/demo.folded" -f svg --title "buildtrace demo" -o "$out/demo.svg"
echo "demo: folded stacks in $out/demo.folded, flame graph in $out/demo.svg (open it in a browser)"
echo "demo: the hottest stacks:"
sort -t' ' -k2,2 -n -r "$out/demo.folded" | head -n 5
