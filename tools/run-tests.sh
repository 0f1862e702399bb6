#!/bin/sh
# Runs each cmocka test binary given as an argument and prints one closing line:
# "check: N passed, M failed, K skipped". Exits non-zero if any test failed or a binary crashed;
# under CI=true a skipped test counts as a failure, as a privileged test that did not run.
passed=0; failed=0; skipped=0; crashed=""
for t in "$@"; do
	log=$(mktemp)
	echo "== $t"
	"$t" >"$log" 2>&1; rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
	passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
	if [ -z "$p$f" ] || { [ "$rc" -ne 0 ] && [ -z "$f" ]; }; then
		crashed="$crashed $t(rc=$rc)"; failed=$((failed + 1))
	fi
	rm -f "$log"
done
[ -n "$crashed" ] && echo "check: binaries that crashed or printed no result:$crashed"
# Parts of make check that are not test binaries (the second kernel, fuzzing, the sanitizer build)
# and failed: each counts as one failure.
for part in ${CHECK_ALSO_FAILED:-}; do
	echo "check: $part failed (its output is above)"
	failed=$((failed + 1))
done
if [ "${CI:-}" = true ] && [ "$skipped" -gt 0 ]; then
	echo "check: $skipped skipped under CI=true count as failures"
	failed=$((failed + skipped)); skipped=0
fi
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
