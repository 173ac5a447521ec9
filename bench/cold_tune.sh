#!/usr/bin/env bash
# A cold tune with screening (`--screen`) against one that times every
# candidate in full (`--no-screen`, the default), model by model: each tune starts from an
# empty cache directory (no measurements, no Halide kernels), the two in
# turn (full, screened, full, screened, ...), with `collage tune`'s other
# defaults (refinement rounds, local moves, verification). Prints per tune
# the candidates timed in full, screened and ruled out, the search's and the
# whole tune's wall time; then each kept plan's latency (the model's plans
# side by side in one `collage run --plan A --plan B ...`, interleaved,
# PASSES such runs, medians of those medians) and the ratios screened/full.
#   bench/cold_tune.sh [MODEL.onnx ...]   (default: the zoo's models)
#   env: COLLAGE (default build/collage), ROUNDS (default 1), PASSES
#   (default 3), THREADS (default 2), OUT (a markdown file to append the
#   table to), KEEP (a directory to copy the plans and tune logs to)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage=$(realpath "${COLLAGE:-$root/build/collage}")
work=$(mktemp -d)
source "$root/bench/models.sh"
rounds=${ROUNDS:-1}
passes=${PASSES:-3}
threads=${THREADS:-2}
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for name in squeezenet1_1 resnet18 mobilenet_v2 dcgan_generator bert_encoder resnet50; do
    models+=("$zoo/$name/model.onnx")
  done
fi
keep() {
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    cp "$work"/*.json "$work"/*.log "$KEEP"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap keep EXIT
echo "load before: $(uptime)"

tune() {  # MODEL TAG MODE -> leaves $work/TAG.{json,log,seconds}
  local model=$1 tag=$2 mode=$3 flags=(--no-screen)
  [ "$mode" = screen ] && flags=(--screen)
  rm -rf "$work/xdg"
  local start end
  start=$(date +%s.%N)
  XDG_CACHE_HOME=$work/xdg "$collage" tune "$model" --threads "$threads" "${flags[@]}" -q \
    -o "$work/$tag.json" > "$work/$tag.log" 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc > "$work/$tag.seconds"
}

field() {  # PLAN FIELD
  /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['search'].get(sys.argv[2], 0))" "$1" "$2"
}

table="| model | candidates | full: timed, wall s | screened: screens, timed in full, ruled out, wall s | timed in full, screened/full | wall, screened/full | kept plan ms, full / screened | plan, screened/full |
|---|---|---|---|---|---|---|---|"
for model in "${models[@]}"; do
  name=$(basename "$(dirname "$model")")
  for ((round = 1; round <= rounds; round++)); do
    for mode in full screen; do
      tune "$model" "$name-$mode-$round" "$mode"
      plan="$work/$name-$mode-$round.json"
      echo "$name $mode round $round: $(field "$plan" measured) timed in full," \
        "$(field "$plan" screened) screened, $(field "$plan" ruled_out) ruled out," \
        "search $(field "$plan" seconds) s, tune $(cat "$work/$name-$mode-$round.seconds") s," \
        "kept $(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['strategy'])" "$plan")"
    done
  done
  plans=()
  for ((round = 1; round <= rounds; round++)); do
    for mode in full screen; do plans+=(--plan "$work/$name-$mode-$round.json"); done
  done
  for ((pass = 1; pass <= passes; pass++)); do
    "$collage" run "$model" "${plans[@]}" --threads "$threads" --repeat 30 |
      awk '/^plan / {p = $2; sub(/:$/, "", p); sub(/[.]json$/, "", p)}
           /^ *latency over/ {print p, $6}' |
      while read -r plan ms; do
        tag=$(basename "$plan")
        echo "$ms" >> "$work/$tag-latency.txt"
        echo "$ms" >> "$work/${tag%-*}-latency.txt"
      done
  done
  for ((round = 1; round <= rounds; round++)); do
    for mode in full screen; do
      echo "$name $mode round $round: kept plan $(median < "$work/$name-$mode-$round-latency.txt") ms"
    done
  done
  declare -A timed=() wall=() latency=() screens=() ruled=()
  for mode in full screen; do
    timed[$mode]=$(for ((r = 1; r <= rounds; r++)); do field "$work/$name-$mode-$r.json" measured; done | median)
    screens[$mode]=$(for ((r = 1; r <= rounds; r++)); do field "$work/$name-$mode-$r.json" screened; done | median)
    ruled[$mode]=$(for ((r = 1; r <= rounds; r++)); do field "$work/$name-$mode-$r.json" ruled_out; done | median)
    wall[$mode]=$(cat "$work/$name"-$mode-*.seconds | median)
    latency[$mode]=$(median < "$work/$name-$mode-latency.txt")
  done
  candidates=$(field "$work/$name-full-1.json" candidates)
  row=$(printf "| %s | %s | %s, %.1f | %s, %s, %s, %.1f | %.2f | %.2f | %.3f / %.3f | %.3f |" \
    "$name" "$candidates" "${timed[full]}" "${wall[full]}" "${screens[screen]}" \
    "${timed[screen]}" "${ruled[screen]}" "${wall[screen]}" \
    "$(echo "${timed[screen]} / ${timed[full]}" | bc -l)" \
    "$(echo "${wall[screen]} / ${wall[full]}" | bc -l)" "${latency[full]}" "${latency[screen]}" \
    "$(echo "${latency[screen]} / ${latency[full]}" | bc -l)")
  echo "$row"
  table+=$'\n'"$row"
done
echo "load after: $(uptime)"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
summary="Cold tunes, $threads threads, $cpu ($(nproc) cores), $rounds round(s) per mode, plans timed side by side in $passes runs:

$table"
echo
echo "$summary"
if [ -n "${OUT:-}" ]; then printf '%s\n' "$summary" >> "$OUT"; fi
