#!/bin/sh
# Two anonpoll nodes, a PostgreSQL primary and its synchronous standby, and
# Caddy in front, all on one machine: the steps of docs/OPERATIONS.md,
# "Running several nodes", as one script. tests/operations/several_nodes.rs runs it
# (every step of that section is a line of this file; a test checks that).
#
#   try-on-one-machine.sh start    # steps 1 to 7
#   try-on-one-machine.sh stop     # stops everything it started
#
# Settings (environment): WORK (a new folder, default /var/tmp/anonpoll-nodes),
# POLLD (the polld binary), CADDY (the caddy binary), and the ports PG_PRIMARY,
# PG_STANDBY, FRONT, CADDY_ADMIN. The nodes listen on Unix sockets in WORK
# (node1.sock, node2.sock), as the shipped units do in /run. Runs as root
# (PostgreSQL's programs then run as the postgres user) or as a normal user.
set -eu

WORK=${WORK:-/var/tmp/anonpoll-nodes}
POLLD=${POLLD:-polld}
CADDY=${CADDY:-caddy}
PG_PRIMARY=${PG_PRIMARY:-5433}
PG_STANDBY=${PG_STANDBY:-5434}
FRONT=${FRONT:-8080}
CADDY_ADMIN=${CADDY_ADMIN:-2019}
HERE=$(cd "$(dirname "$0")" && pwd)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

# PostgreSQL refuses to run as root: as root, its programs run as postgres.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Waits until "$@" succeeds (at most 30 s).
wait_for() {
  i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -lt 150 ] || { echo "gave up waiting for: $*" >&2; return 1; }
    sleep 0.2
  done
}

psql_primary() {
  as_pg "$PGBIN/psql" -X -At -h "$WORK/sock" -p "$PG_PRIMARY" -U postgres -d postgres -c "$1"
}

# Whether the primary waits for the standby now.
synchronous() {
  [ "$(psql_primary "SELECT sync_state FROM pg_stat_replication")" = quorum ]
}

start() {
  mkdir -p "$WORK/sock" "$WORK/node1" "$WORK/node2"
  chmod 700 "$WORK/node1" "$WORK/node2"
  if [ "$(id -u)" = 0 ]; then chown postgres "$WORK" "$WORK/sock"; fi

  # Step 1: the primary, with WAL for a standby.
  as_pg "$PGBIN/initdb" -D "$WORK/primary" -U postgres -A trust --no-sync >/dev/null
  cat >>"$WORK/primary/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PRIMARY
unix_socket_directories = '$WORK/sock'
wal_level = replica
log_min_error_statement = panic
EOF
  as_pg "$PGBIN/pg_ctl" -D "$WORK/primary" -l "$WORK/primary.log" -w start >/dev/null
  as_pg "$PGBIN/createdb" -h "$WORK/sock" -p "$PG_PRIMARY" -U postgres anonpoll

  # Step 2: the standby, a copy of the primary that follows it.
  as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$PG_PRIMARY" -U postgres -D "$WORK/standby" -R -X stream -c fast
  cat >>"$WORK/standby/postgresql.conf" <<EOF
port = $PG_STANDBY
cluster_name = 'standby1'
EOF
  as_pg "$PGBIN/pg_ctl" -D "$WORK/standby" -l "$WORK/standby.log" -w start >/dev/null

  # Step 3: no commit without the standby (an acknowledged vote survives the
  # primary's loss).
  psql_primary "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (standby1)'" >/dev/null
  psql_primary "SELECT pg_reload_conf()" >/dev/null
  wait_for synchronous

  # Step 4: node 1. Its first start creates the key file.
  DB="postgresql://postgres@127.0.0.1:$PG_PRIMARY,127.0.0.1:$PG_STANDBY/anonpoll?target_session_attrs=read-write"
  POLL_DB=$DB POLL_KEYS=$WORK/node1/anonpoll.keys POLL_LISTEN=unix:$WORK/node1.sock \
    POLL_BASE_URL=http://127.0.0.1:$FRONT "$POLLD" >"$WORK/node1.log" 2>&1 &
  echo $! >"$WORK/node1.pid"
  wait_for curl -sf --unix-socket "$WORK/node1.sock" http://node1/healthz

  # Step 5: node 2, with a copy of node 1's key file (from the live node,
  # never from a backup).
  install -m 600 "$WORK/node1/anonpoll.keys" "$WORK/node2/anonpoll.keys"
  POLL_DB=$DB POLL_KEYS=$WORK/node2/anonpoll.keys POLL_LISTEN=unix:$WORK/node2.sock \
    POLL_BASE_URL=http://127.0.0.1:$FRONT "$POLLD" >"$WORK/node2.log" 2>&1 &
  echo $! >"$WORK/node2.pid"
  wait_for curl -sf --unix-socket "$WORK/node2.sock" http://node2/healthz

  # Step 6: Caddy in front of both.
  ANONPOLL_DOMAIN=http://127.0.0.1:$FRONT ANONPOLL_UPSTREAMS="unix/$WORK/node1.sock unix/$WORK/node2.sock" \
    ANONPOLL_CADDY_ADMIN=127.0.0.1:$CADDY_ADMIN \
    "$CADDY" run --config "$HERE/Caddyfile" --adapter caddyfile >"$WORK/caddy.log" 2>&1 &
  echo $! >"$WORK/caddy.pid"
  wait_for curl -sf "http://127.0.0.1:$FRONT/healthz"

  # Step 7: a poll through the front.
  curl -sf -X POST "http://127.0.0.1:$FRONT/api/polls" -H 'Content-Type: application/json' \
    -d '{"title":"Two nodes","lang":"en","expiryDays":7,"questions":[{"label":"Works?","options":["Yes","No"]}]}' \
    >"$WORK/first-poll.json"
  echo "anonpoll: two nodes behind http://127.0.0.1:$FRONT; first poll in $WORK/first-poll.json"
}

stop() {
  for p in caddy node2 node1; do
    if [ -f "$WORK/$p.pid" ]; then kill "$(cat "$WORK/$p.pid")" 2>/dev/null || true; rm -f "$WORK/$p.pid"; fi
  done
  for d in standby primary; do
    if [ -f "$WORK/$d/postmaster.pid" ]; then as_pg "$PGBIN/pg_ctl" -D "$WORK/$d" -m fast -w stop >/dev/null || true; fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
