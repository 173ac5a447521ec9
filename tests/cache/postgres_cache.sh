#!/usr/bin/env bash
# The measurement cache in PostgreSQL, on a real server: a throwaway cluster
# (pg_cluster.sh). Checks:
#   - a tune stores its measurements there; a second tune (and one with
#     $COLLAGE_CACHE_URL) measures nothing again and makes the same plan;
#   - two tuners at once on one database both finish;
#   - `cache stats`, `cache export` and `cache import` work on it, to and
#     from an SQLite file;
#   - the password in the URL appears in no output, message or plan;
#   - the server stopped in the middle of a tune: one line, exit 2; started
#     again, a second tune resumes (what was stored is not measured again);
#   - a schema newer than this build's is refused with one line, exit 2.
#   postgres_cache.sh COLLAGE_BINARY
# Exits 77 (skipped) without the zoo or PostgreSQL's server.
set -euo pipefail
source "$(dirname "$0")/setup.sh" "$1"
measured() { sed -n 's/^search: [0-9]* candidates, \([0-9]*\) measured.*/\1/p' "$1"; }
# Every candidate timed in full: with screening, a second tune may screen
# candidates the first ruled out by a bound (its bounds start from the
# cached rates), so "nothing measured again" would not hold.
quick=(--backends native,onednn --threads 2 --refine-rounds 0 --no-verify --no-screen)

step "a tune stores its measurements in the database"
"$collage" tune "$model" "${quick[@]}" --cache "$url" -o "$work/first.plan.json" > "$work/first.log" 2>&1
first=$(measured "$work/first.log")
[ "$first" -gt 0 ]
step "tuned again (the URL from \$COLLAGE_CACHE_URL): nothing measured, the same plan"
COLLAGE_CACHE_URL=$url "$collage" tune "$model" "${quick[@]}" -o "$work/second.plan.json" \
  > "$work/second.log" 2>&1
[ "$(measured "$work/second.log")" -eq 0 ]
python3 - "$work/first.plan.json" "$work/second.plan.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert [(p["backend"], p["nodes"]) for p in a["partitions"]] == \
       [(p["backend"], p["nodes"]) for p in b["partitions"]]
print(f"same plan: {len(a['partitions'])} partitions")
PY

step "two tuners at once on one database"
"$collage" tune "$bigger" "${quick[@]}" --cache "$url" -o "$work/a.plan.json" > "$work/a.log" 2>&1 &
a=$!
"$collage" tune "$bigger" "${quick[@]}" --cache "$url" -o "$work/b.plan.json" > "$work/b.log" 2>&1 &
b=$!
wait $a
wait $b
echo "measured: $(measured "$work/a.log") and $(measured "$work/b.log")"

step "stats, export and import"
"$collage" cache stats --cache "$url" > "$work/stats.log"
grep -q "(PostgreSQL)" "$work/stats.log"
grep -q "(this machine)" "$work/stats.log"
"$collage" cache export "$work/rows.jsonl" --cache "$url" > "$work/export.log"
rows=$(sed -n 's/^exported \([0-9]*\) rows.*/\1/p' "$work/export.log")
"$collage" cache import "$work/rows.jsonl" --cache "$work/copy.sqlite" | grep -q "imported $rows of $rows"
"$collage" cache import "$work/rows.jsonl" --cache "$url" | grep -q "imported 0 of $rows"
echo "$rows rows exported, imported into SQLite, kept on a second import into PostgreSQL"

step "the password appears nowhere"
if grep -rq "$secret" "$work"; then
  echo "the password leaked into:" >&2
  grep -rl "$secret" "$work" >&2
  exit 1
fi
grep -q "postgres:\*\*\*@" "$work/stats.log"

step "the server stopped in the middle of a tune"
rm -f "$work/stopped.plan.json"
status=0
"$collage" tune "$bigger" --backends native,onednn,xnnpack --threads 2 --refine-rounds 0 \
  --no-verify -q --cache "$url" -o "$work/stopped.plan.json" > /dev/null 2> "$work/stopped.err" &
tuner=$!
# Stopped once the tuner has stored some of its measurements.
await_row "SELECT 1 WHERE (SELECT count(*) FROM measurements WHERE backend = 'xnnpack') > 5" \
  600 > /dev/null
pg_ctl -m immediate stop > /dev/null
wait $tuner || status=$?
refused "measurement cache" "$work/stopped.err" "$status"
[ ! -f "$work/stopped.plan.json" ]
start_server
"$collage" tune "$bigger" --backends native,onednn,xnnpack --threads 2 --refine-rounds 0 \
  --no-verify --cache "$url" -o "$work/stopped.plan.json" > "$work/resumed.log" 2>&1
grep '^search:' "$work/resumed.log"
cached=$(sed -n 's/.* \([0-9]*\) from cache.*/\1/p' "$work/resumed.log")
[ "$cached" -gt 0 ]

step "a schema newer than this build's"
psql_query "INSERT INTO collage_schema (version) VALUES (99)"
status=0
"$collage" tune "$model" "${quick[@]}" --cache "$url" -q -o "$work/x.plan.json" \
  > /dev/null 2> "$work/newer.err" || status=$?
refused "schema is version 99" "$work/newer.err" "$status"
status=0
"$collage" cache stats --cache "$url" > /dev/null 2> "$work/newer.err" || status=$?
refused "schema is version 99" "$work/newer.err" "$status"
echo "postgres cache: all checks passed"
