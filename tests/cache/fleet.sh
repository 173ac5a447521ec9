#!/usr/bin/env bash
# Measurement jobs shared by a fleet, on a real server (pg_cluster.sh):
#   - two tuners (one measuring jobs too, one leaving them all to the
#     workers) and two workers on one database, tuning one model at once:
#     both finish with the same plan, each job was claimed once, and the
#     progress names the workers;
#   - `kill -9` of a worker in the middle of a job: once its lease runs out
#     the other worker measures the job; what the killed one finished stays;
#   - the server stopped in the middle of a tune on workers: the tuner says
#     so in one line and exits 2; started again, a second tune resumes;
#   - a job whose partition is malformed: the worker stores a failure with
#     its cause and goes on;
#   - a schema newer than this build's: the worker refuses it in one line.
#   fleet.sh COLLAGE_BINARY
# Exits 77 (skipped) without the zoo or PostgreSQL's server.
set -euo pipefail
source "$(dirname "$0")/setup.sh" "$1"
workers=()
stop_workers() {
  [ ${#workers[@]} -eq 0 ] && return
  kill "${workers[@]}" 2> /dev/null || true
  wait "${workers[@]}" 2> /dev/null || true
  workers=()
}
cleanup() { stop_workers; pg_cluster_cleanup; }
trap cleanup EXIT
worker() {  # NAME [FLAGS...]: started in the background
  local name=$1
  shift
  "$collage" worker --cache "$url" --threads 1 --name "$name" "$@" > "$work/$name.out" \
    2> "$work/$name.log" &
  workers+=($!)
}
same_plan() {
  python3 - "$@" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert [(p["backend"], p["nodes"]) for p in a["partitions"]] == \
       [(p["backend"], p["nodes"]) for p in b["partitions"]], "the plans differ"
print(f"same plan: {len(a['partitions'])} partitions")
PY
}
quick=(--threads 1 --refine-rounds 0 --no-verify --cache "$url" --workers remote)

step "two tuners and two workers on one database"
worker w1
worker w2
# Without local moves, which each tuner times end to end on its own (so two
# tuners may keep different moves on a noisy machine): the plans then come
# from the shared measurements alone.
"$collage" tune "$model" --backends native,onednn,xnnpack "${quick[@]}" --no-local-moves \
  -o "$work/a.plan.json" > "$work/a.log" 2>&1 &
a=$!
"$collage" tune "$model" --backends native,onednn,xnnpack "${quick[@]}" --no-local-moves \
  --no-local-measure -o "$work/b.plan.json" > "$work/b.log" 2>&1 &
b=$!
wait $a
wait $b
same_plan "$work/a.plan.json" "$work/b.plan.json"
grep -q "by worker: .*w[12]" "$work/a.log"
jobs=$(psql_query "SELECT count(*) FROM measurement_jobs")
twice=$(psql_query "SELECT count(*) FROM measurement_jobs WHERE attempts <> 1 OR state <> 'done'")
by=$(psql_query "SELECT string_agg(worker || ' ' || n, ', ') FROM (SELECT worker, count(*) n \
  FROM measurement_jobs GROUP BY 1 ORDER BY 1) t")
echo "$jobs jobs, measured by: $by"
[ "$jobs" -gt 0 ] && [ "$twice" -eq 0 ]
"$collage" cache stats --cache "$url" | grep "^measurement jobs: $jobs done; their weights: "
stop_workers

step "kill -9 of a worker in the middle of a job"
# Halide compiles each kernel as it measures it: jobs of seconds.
worker w3 --lease 6
"$collage" tune "$bigger" --backends native,halide "${quick[@]}" --no-local-measure -q \
  -o "$work/killed.plan.json" > "$work/killed.log" 2>&1 &
tuner=$!
# w3 is stopped (SIGSTOP) while it holds a job, so that the job read is the
# one it holds when killed: between the query and a kill, a short job could
# finish.
key=""
for _ in $(seq 1 20); do
  await_row "SELECT 1 WHERE (SELECT count(*) FROM measurement_jobs WHERE worker = 'w3' AND \
    state = 'running' AND backend = 'halide') > 0 AND (SELECT count(*) FROM measurement_jobs \
    WHERE worker = 'w3' AND state = 'done') > 3" 1200 > /dev/null
  kill -STOP "${workers[0]}"
  key=$(psql_query "SELECT key FROM measurement_jobs WHERE worker = 'w3' AND state = 'running'")
  [ -n "$key" ] && break
  kill -CONT "${workers[0]}"
done
[ -n "$key" ]
kill -9 "${workers[0]}"
wait "${workers[0]}" 2> /dev/null || true
workers=()
finished_by_w3=$(psql_query "SELECT count(*) FROM measurement_jobs WHERE worker = 'w3' AND \
  state = 'done'")
worker w4
wait $tuner
[ "$(psql_query "SELECT worker || ' ' || attempts || ' ' || state FROM measurement_jobs \
  WHERE key = '$key'")" = "w4 2 done" ]
[ "$(psql_query "SELECT count(*) FROM measurement_jobs WHERE worker = 'w3' AND state = 'done'")" \
  -eq "$finished_by_w3" ]
[ "$(psql_query "SELECT count(*) FROM measurement_jobs WHERE attempts > 1")" -eq 1 ]
echo "the job w3 held was measured by w4; w3's $finished_by_w3 finished jobs stayed"
stop_workers

step "the server stopped in the middle of a tune on workers"
worker w5
status=0
"$collage" tune "$bigger" --backends native,onednn,xnnpack "${quick[@]}" --no-local-measure \
  -q -o "$work/stopped.plan.json" > /dev/null 2> "$work/stopped.err" &
tuner=$!
await_row "SELECT 1 WHERE (SELECT count(*) FROM measurement_jobs WHERE backend = 'xnnpack' \
  AND state = 'done') > 3" 1200 > /dev/null
pg_ctl -m immediate stop > /dev/null
wait $tuner || status=$?
refused "measurement" "$work/stopped.err" "$status"
[ ! -f "$work/stopped.plan.json" ]
wait "${workers[0]}" && { echo "the worker went on without its database" >&2; exit 1; }
workers=()
tail -1 "$work/w5.log" | grep -q "measurement jobs"
start_server
worker w6
"$collage" tune "$bigger" --backends native,onednn,xnnpack "${quick[@]}" --no-local-measure \
  -o "$work/stopped.plan.json" > "$work/resumed.log" 2>&1
grep '^search:' "$work/resumed.log"
[ "$(sed -n 's/.* \([0-9]*\) from cache.*/\1/p' "$work/resumed.log")" -gt 0 ]
stop_workers

step "a job whose partition is malformed"
psql_query "INSERT INTO measurement_jobs (key, machine_class, machine, backend, \
  backend_version, threads, evict_bytes, partition) SELECT 'malformed job', machine_class, \
  machine, backend, backend_version, threads, 0, '\\x0a0b0c0d'::bytea FROM measurement_jobs \
  LIMIT 1"
"$collage" worker --cache "$url" --threads 1 --name w7 --idle-exit 2 > "$work/w7.out" \
  2> "$work/w7.log"
reason=$(psql_query "SELECT reason FROM measurements WHERE key = 'malformed job' AND NOT valid")
echo "stored: $reason"
echo "$reason" | grep -q "malformed job"
grep -q "1 jobs measured" "$work/w7.out"

step "a schema newer than this build's"
psql_query "INSERT INTO collage_schema (version) VALUES (99)"
status=0
"$collage" worker --cache "$url" --threads 1 --idle-exit 1 > /dev/null 2> "$work/newer.err" \
  || status=$?
refused "schema is version 99" "$work/newer.err" "$status"
echo "fleet: all checks passed"
