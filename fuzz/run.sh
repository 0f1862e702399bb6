#!/bin/sh
# Runs each named fuzz target for SECONDS, one after the other, in one process each (the machine is
# shared), growing its corpus in DIR/corpus/TARGET from the seeds in DIR/seeds/TARGET. Crashes go to
# DIR/artifacts/TARGET/, the full output to DIR/logs/TARGET.log. Prints one line per target and
# exits non-zero if any target found a crash, a leak, a timeout or a broken property.
# usage: fuzz/run.sh DIR SECONDS TARGET...
set -u
dir=$1
secs=$2
shift 2
failed=""
for t in "$@"; do
	bin="$dir/fuzz_$t"
	mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t" "$dir/logs"
	log="$dir/logs/$t.log"
	dict=""
	[ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
	start=$(date +%s)
	# -timeout: no single input may take seconds; -rss_limit_mb: nor grow without bound.
	nice -n 10 "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/$t/" $dict "$dir/corpus/$t" "$dir/seeds/$t" >"$log" 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
	ncorp=$(find "$dir/corpus/$t" -type f | wc -l)
	if [ "$rc" -eq 0 ]; then
		echo "fuzz: $t: ok, ${took}s, ${runs:-?} runs, cov ${cov:-?}, corpus $ncorp"
	else
		echo "fuzz: $t: FAILED (rc=$rc) after ${took}s; see $log and $dir/artifacts/$t/"
		grep -m3 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|runtime error' "$log" | sed 's/^/fuzz:   /'
		failed="$failed $t"
	fi
done
[ -z "$failed" ] || { echo "fuzz: failed:$failed"; exit 1; }
