# Throwaway PostgreSQL for scripts: source this file, then `pg_start DIR` and `pg_stop DIR`.
# pg_start sets PG_PORT and PG_URL (superuser "postgres", trust auth, loopback only).
# initdb and pg_ctl refuse to run as root, so as root they run as the "postgres" user.

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}

pg_as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pg_start() {
  local dir=$1
  mkdir -p "$dir/data" "$dir/socket"
  [[ $(id -u) -eq 0 ]] && chown -R postgres:postgres "$dir"
  pg_as_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  PG_PORT=$(free_port)
  pg_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $dir/socket -c max_connections=200" start >/dev/null \
    || { cat "$dir/server.log" >&2; return 1; }
  PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
  export PG_PORT PG_URL
}

pg_stop() {
  local dir=$1
  [[ -f "$dir/data/postmaster.pid" ]] && pg_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
  return 0
}

# Starts a server that pg_start initialised and pg_stop stopped, on the same port.
pg_resume() {
  local dir=$1 port=$2
  pg_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c max_connections=200" start >/dev/null \
    || { cat "$dir/server.log" >&2; return 1; }
}
