#!/usr/bin/env bash
# What a plan's runs spend beyond its partitions' typical in-context times,
# per model: `collage run --profile` splits it into the executor's time
# between kernels (measured on the untraced runs) and the kernels' run-to-run
# variation (the median run's kernel sum less the sum of each partition's
# typical time). Prints one markdown row per model and profile, with both
# per partition and the variation as a share of the partitions' time.
# Usage: bench/profile_split.sh MODEL.onnx...
#   env: STRATEGY (default single:onednn), THREADS (2), REPEAT (200),
#        PROFILES (2, profiles per model), COLLAGE (build/collage)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${COLLAGE:-$root/build/collage}"
strategy="${STRATEGY:-single:onednn}"
threads="${THREADS:-2}"
repeat="${REPEAT:-200}"
profiles="${PROFILES:-2}"
[ $# -gt 0 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
[ -x "$collage" ] || { echo "no collage binary at $collage (make build)" >&2; exit 2; }
for model in "$@"; do
  [ -f "$model" ] || { echo "no such model: $model" >&2; exit 2; }
done
trace="$(mktemp --suffix=.json)"
trap 'rm -f "$trace"' EXIT

echo "Strategy $strategy, $threads threads, $repeat untraced runs each followed by a traced one; $(date -u +%F), $(uname -n)."
echo
echo "| model | partitions | end to end ms | partitions ms | between kernels ms (per partition) | variation ms (per partition, share) |"
echo "|---|---:|---:|---:|---:|---:|"
for model in "$@"; do
  # A zoo model is <name>/model.onnx: name it by its folder.
  name="$(basename "$model" .onnx)"
  [ "$name" != model ] || name="$(basename "$(dirname "$model")")"
  for ((i = 0; i < profiles; i++)); do
    "$collage" run "$model" --strategy "$strategy" --threads "$threads" --repeat "$repeat" \
      --profile "$trace" | awk -v model="$name" '
      /^strategy:/ {
        match($0, /partitions: [^)]*/); n = 0
        split(substr($0, RSTART + 12, RLENGTH - 12), parts, ", ")
        for (k in parts) { split(parts[k], f, " "); n += f[2] }
      }
      /^profile over/ {
        match($0, /end to end [0-9.]+/); e2e = substr($0, RSTART + 11, RLENGTH - 11)
        for (k = 1; k <= NF; k++) if ($k == "context") ctx = $(k + 1)
      }
      /between kernels \(executor\)/ { between = $NF }
      /run-to-run variation/ { variation = $NF }
      END {
        printf "| %s | %d | %.3f | %.3f | %.3f (%.1f us) | %.3f (%.1f us, %.1f %%) |\n", model, n,
          e2e, ctx, between, 1000 * between / n, variation, 1000 * variation / n,
          100 * variation / ctx
      }'
  done
done
