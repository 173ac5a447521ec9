#!/usr/bin/env bash
# A fleet of measuring machines against one: a cold tune on PostgreSQL
# (`collage tune --workers remote --no-local-measure`) measured by one
# `collage worker`, then by two, each worker pinned to a core of its own
# with one thread (a fleet of one-core machines); the tuner does none of
# the measuring. Each run starts from an empty database and an empty cache
# directory (Halide compiles its kernels again), in the order 1 2 1 2 ...
# Prints each run's wall time, the median per fleet size and the ratio, and
# how the plans compare: the nodes each places on another backend than the
# first run's plan, and each plan's latency (`collage run --plan`, one
# thread, the plans in turn, three times; medians). Cold tunes measure with
# noise, so two tunes of one fleet size may differ as well.
#   bench/fleet.sh [MODEL.onnx]   (default: the zoo's resnet18)
#   env: COLLAGE (default build/collage), ROUNDS (default 2), BACKENDS
#   (default all), OUT (a markdown file to append the table to)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage=$(realpath "${COLLAGE:-$root/build/collage}")
model=$(realpath "${1:-${COLLAGE_ZOO_DIR:-$HOME/.cache/collage/zoo}/resnet18/model.onnx}")
rounds=${ROUNDS:-2}
backends=${BACKENDS:-all}
if [ "$(nproc)" -lt 2 ]; then
  echo "needs two cores" >&2
  exit 1
fi
source "$root/tests/cache/pg_cluster.sh"
work=$tmp/work
mkdir -p "$work"
[ "$(id -u)" -eq 0 ] && chmod 777 "$work"
echo "load before: $(uptime)"

run() {  # WORKERS ROUND -> prints seconds
  local n=$1 round=$2 pids=() status=0
  psql_query "DROP TABLE IF EXISTS measurements, measurement_jobs, job_weights, collage_schema"
  local xdg=$work/xdg-$n-$round
  rm -rf "$xdg"
  for ((i = 0; i < n; i++)); do
    XDG_CACHE_HOME=$xdg taskset -c "$i" "$collage" worker --cache "$url" --threads 1 \
      --name "core$i" > "$work/worker-$n-$round-$i.log" 2>&1 &
    pids+=($!)
  done
  local start end
  start=$(date +%s.%N)
  XDG_CACHE_HOME=$xdg "$collage" tune "$model" --backends "$backends" --threads 1 \
    --refine-rounds 0 --no-verify --workers remote --no-local-measure --cache "$url" -q \
    -o "$work/plan-$n-$round.json" > "$work/tune-$n-$round.log" 2>&1 || status=$?
  end=$(date +%s.%N)
  kill "${pids[@]}" 2> /dev/null || true
  wait "${pids[@]}" 2> /dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "tune failed ($status):" >&2
    cat "$work/tune-$n-$round.log" >&2
    exit 1
  fi
  echo "$end - $start" | bc
}

declare -A seconds
for ((round = 1; round <= rounds; round++)); do
  for n in 1 2; do
    s=$(run "$n" "$round")
    seconds[$n]="${seconds[$n]:-} $s"
    echo "round $round, $n worker(s): $s s ($(grep -c 'attempt' "$work"/worker-$n-$round-*.log \
      | tr '\n' ' '))"
  done
done
echo "load after: $(uptime)"

# Each plan timed in turn, three times over.
for pass in 1 2 3; do
  for ((round = 1; round <= rounds; round++)); do
    for n in 1 2; do
      "$collage" run "$model" --plan "$work/plan-$n-$round.json" --threads 1 --repeat 30 \
        | sed -n 's/^latency over [0-9]* runs: median \([0-9.]*\) ms.*/\1/p' \
        >> "$work/latency-$n-$round.txt"
    done
  done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
/usr/bin/python3 - "$work" "$rounds" "$model" "${seconds[1]}" "${seconds[2]}" "$cpu" \
  "$backends" <<'PY' | tee -a "${OUT:-/dev/null}"
import datetime, json, os, statistics, sys
work, rounds, model, cpu, backends = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[6], sys.argv[7]
print(f"\n## bench/fleet.sh, {datetime.date.today()}: {cpu}, {os.cpu_count()} cores; "
      f"workers and tuner at 1 thread, --backends {backends}, --refine-rounds 0 --no-verify")
one, two = ([float(x) for x in s.split()] for s in sys.argv[4:6])
def placement(n, r):
    plan = json.load(open(f"{work}/plan-{n}-{r}.json"))
    return {node: p["backend"] for p in plan["partitions"] for node in p["nodes"]}
def latency(n, r):
    return statistics.median(float(x) for x in open(f"{work}/latency-{n}-{r}.txt").read().split())
first = placement(1, 1)
name = model.split('/')[-2] if model.endswith('model.onnx') else model.split('/')[-1]
m1, m2 = statistics.median(one), statistics.median(two)
print(f"\n{name}: cold tune wall time, median of {rounds}: 1 worker {m1:.1f} s "
      f"({', '.join(f'{x:.1f}' for x in one)}), 2 workers {m2:.1f} s "
      f"({', '.join(f'{x:.1f}' for x in two)}): {m2 / m1:.2f}x\n")
print("| plan | nodes placed unlike the first | latency (ms, median of 3) |")
print("|---|---|---|")
for r in range(1, rounds + 1):
    for n in (1, 2):
        other = placement(n, r)
        moved = sum(1 for node, backend in other.items() if first.get(node) != backend)
        print(f"| round {r}, {n} worker{'s' if n > 1 else ''} | {moved} of {len(other)} | "
              f"{latency(n, r):.2f} |")
PY
