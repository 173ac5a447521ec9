#!/usr/bin/env bash
# Runs libFuzzer targets built by `make fuzz-build`, each for SECONDS from its
# seed corpus in fuzz/corpus/ (the graph-passes fuzzer also from the
# importer's), and prints each one's executions. New inputs go to
# BUILD/corpus/NAME/, inputs that crash to BUILD/findings/NAME/; any finding
# fails the run. With FUZZ_SEED set, each run starts from that random seed,
# so that a short run (make test's) tries the same inputs every time.
#   run_fuzzers.sh BUILD SECONDS NAME...
set -uo pipefail
build="$1"
seconds="$2"
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$build/findings"
failed=0
for name in "$@"; do
  seeds=("$root/fuzz/corpus/$name")
  [ "$name" = graph_passes ] && seeds+=("$root/fuzz/corpus/import")
  mkdir -p "$build/corpus/$name" "$build/findings/$name"
  log="$build/findings/$name.log"
  "$build/fuzz/${name}_fuzzer" -max_total_time="$seconds" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
    -rss_limit_mb=4096 -timeout=20 \
    -artifact_prefix="$build/findings/$name/" -print_final_stats=1 \
    "$build/corpus/$name" "${seeds[@]}" > "$log" 2>&1
  status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$build/findings/$name")" ]; then
    echo "fuzz ${name}: FAILED (exit $status) after ${runs:-?} executions; log: $log"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$log" | head -5
    failed=$((failed + 1))
  else
    echo "fuzz ${name}: ${runs} executions in ${seconds} s, no finding"
  fi
done
if [ "$failed" -gt 0 ]; then
  echo "findings:"
  find "$build/findings" -mindepth 2 -type f
  exit 1
fi
