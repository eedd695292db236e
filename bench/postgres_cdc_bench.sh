#!/usr/bin/env bash
# postgres-cdc throughput: changes/s and changes per CPU second of clink reading a
# PostgreSQL change stream (pgoutput) into a blackhole.
#
#   bench/postgres_cdc_bench.sh [ROWS]     (default 300000; needs `scripts/postgres start`)
#
# A first run creates the slot and checkpoints its position; then, with no job running,
# ROWS inserts, ROWS updates (REPLICA IDENTITY FULL: -U and +U each) and ROWS deletes are
# committed (3 x ROWS changes, 4 x ROWS rows); a second run restores the checkpoint and
# streams them all. Measured: from its start until the slot's confirmed_flush_lsn (moved
# by checkpoints every 200 ms) passes the end of the changes; its CPU time from /proc.
# Environment: CLINK_POSTGRES_PORT (15432), CLINK (build/release/clink).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-300000}
port=${CLINK_POSTGRES_PORT:-15432}
clink=${CLINK:-build/release/clink}
q() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAtX -c "$1"; }
tmp=$(mktemp -d)
name=bench_cdc_$$
cleanup() {
  [ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  sleep 0.2
  q "SELECT pg_drop_replication_slot('$name') FROM pg_replication_slots WHERE slot_name = '$name'" >/dev/null || true
  q "DROP PUBLICATION IF EXISTS $name; DROP TABLE IF EXISTS $name" >/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
q "CREATE TABLE $name (id bigint PRIMARY KEY, grp text, qty integer); ALTER TABLE $name REPLICA IDENTITY FULL"
cat >"$tmp/job.sql" <<SQL
CREATE TABLE src (id BIGINT, grp STRING, qty INT) WITH ('connector' = 'postgres-cdc', 'hostname' = '127.0.0.1',
  'port' = '$port', 'username' = 'postgres', 'password' = '', 'database-name' = 'postgres',
  'schema-name' = 'public', 'table-name' = '$name', 'slot.name' = '$name', 'debezium.publication.name' = '$name',
  'scan.lsn-commit.checkpoints-num-delay' = '0');
CREATE TABLE sink (id BIGINT, grp STRING, qty INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM src;
SQL
"$clink" run "$tmp/job.sql" --checkpoint-dir "$tmp/chk" --checkpoint-interval 200 >/dev/null 2>"$tmp/err1" &
pid=$!
until compgen -G "$tmp/chk/chk-*/_metadata" >/dev/null; do sleep 0.05; kill -0 "$pid" || { cat "$tmp/err1"; exit 1; }; done
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
q "INSERT INTO $name SELECT i, 'g' || (i % 10), i % 100 FROM generate_series(1, $rows) i"
q "UPDATE $name SET qty = qty + 1"
q "DELETE FROM $name"
target=$(q "SELECT pg_current_wal_lsn()")
start=$(date +%s.%N)
"$clink" run "$tmp/job.sql" --checkpoint-dir "$tmp/chk" --checkpoint-interval 200 --from-checkpoint "$tmp/chk" \
  >/dev/null 2>"$tmp/err2" &
pid=$!
until [ "$(q "SELECT confirmed_flush_lsn >= '$target'::pg_lsn FROM pg_replication_slots WHERE slot_name = '$name'")" = t ]; do
  kill -0 "$pid" || { cat "$tmp/err2"; exit 1; }
  sleep 0.02
done
end=$(date +%s.%N)
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
cpu=$(echo "($utime + $stime) / $(getconf CLK_TCK)" | bc -l)
wall=$(echo "$end - $start" | bc -l)
changes=$((3 * rows))
printf 'postgres-cdc: %d changes (%d inserts, updates, deletes each; %d rows)\n' "$changes" "$rows" $((4 * rows))
printf 'wall %.2f s  %.0f changes/s  cpu %.2f s  %.0f changes per cpu second\n' "$wall" \
  "$(echo "$changes / $wall" | bc -l)" "$cpu" "$(echo "$changes / $cpu" | bc -l)"
