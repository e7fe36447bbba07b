# Sourced by the benches that need a PostgreSQL server: sets $server to
# $FAULTLINE_TEST_POSTGRES when that is set, else starts a throwaway cluster
# (Debian's postgresql, as an unprivileged user when root) in "$work/pg" on
# a free local port, and stops it with cleanup (the caller's EXIT trap
# calls cleanup). With PG_DURABLE=true the cluster keeps PostgreSQL's
# default durability (fsync on every commit), for figures beside SQLite's;
# else it runs without fsync, as the tests do.
server=${FAULTLINE_TEST_POSTGRES:-}
if [ -z "$server" ]; then
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -x "$pgbin/initdb" ] || { echo "no PostgreSQL: set FAULTLINE_TEST_POSTGRES or install postgresql" >&2; exit 1; }
  mkdir "$work/pg"
  as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
  # nobody must reach its directory through the caller's private one.
  [ "$(id -u)" = 0 ] && chmod 711 "$work" && chown nobody "$work/pg"
  for port in $(shuf -i 20000-60000 -n 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  done
  pg_options="-F -c fsync=off -c full_page_writes=off"
  [ "${PG_DURABLE:-}" = true ] && pg_options=""
  as_pg "$pgbin/initdb" -D "$work/pg/data" -U faultline --auth=trust -E UTF8 --no-sync >/dev/null
  as_pg "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/log" -w -o "-p $port -k $work/pg -h 127.0.0.1 $pg_options" start >/dev/null
  cleanup() { as_pg "$pgbin/pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"; }
  server="postgres://faultline@127.0.0.1:$port/postgres?sslmode=disable"
fi
