# A throwaway PostgreSQL cluster for a test script (sourced): initdb in a
# temporary directory, pg_ctl on a Unix socket in it, stopped and removed at
# exit; as the postgres user when run as root, which initdb refuses.
# Defines $tmp (the directory, world-readable), $bin (the server's
# programs), $url (the database's URL, with a password the server ignores
# and no output may show: $secret), and pg_ctl, start_server, psql_query
# SQL (one value per line), await_row SQL TRIES, as_server (prefix).
# Exits 77 (skipped) when PostgreSQL's server is not installed.
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "skipped: no PostgreSQL server (apt-get install postgresql)"
  exit 77
fi
tmp=$(mktemp -d)
chmod 755 "$tmp"
as_server=()
if [ "$(id -u)" -eq 0 ]; then as_server=(runuser -u postgres --); fi
mkdir "$tmp/data" "$tmp/socket"
[ "$(id -u)" -eq 0 ] && chown postgres "$tmp" "$tmp/data" "$tmp/socket"
port=$((20000 + RANDOM % 20000))
pg_ctl() { "${as_server[@]}" "$bin/pg_ctl" -D "$tmp/data" "$@"; }
start_server() {
  pg_ctl -o "-k $tmp/socket -c listen_addresses= -p $port" -l "$tmp/server.log" -w start > /dev/null
}
psql_query() {
  "${as_server[@]}" "$bin/psql" -h "$tmp/socket" -p "$port" -U postgres -d postgres -qtAc "$1"
}
# Polls SQL every 0.05 s until it returns a row, at most TRIES times; prints
# that row (nothing when none came).
await_row() {  # SQL TRIES
  local row
  for _ in $(seq 1 "$2"); do
    row=$(psql_query "$1" 2> /dev/null || true)
    if [ -n "$row" ]; then
      echo "$row"
      return
    fi
    sleep 0.05
  done
}
pg_cluster_cleanup() { pg_ctl -m immediate stop > /dev/null 2>&1 || true; rm -rf "$tmp"; }
trap pg_cluster_cleanup EXIT
"${as_server[@]}" "$bin/initdb" -D "$tmp/data" -A trust -U postgres > "$tmp/initdb.log"
start_server
secret=sekret-$RANDOM
url="postgresql://postgres:$secret@/postgres?host=$tmp/socket&port=$port"
