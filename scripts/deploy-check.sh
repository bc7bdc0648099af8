#!/usr/bin/env bash
# `npm run check:deploy`: the deployment artifacts checked with the real tools, built from Go modules (nothing else
# can be downloaded here) into .agent-judge/tools/, reused when present:
#   helm v4.3.2       helm lint --strict, and helm template with the default values and with the judge as a sidecar
#   Compose v5.6.0    docker-compose config -q on docker-compose.temporal.yml, with and without --profile discord
# Cold builds take about 20 min (helm) and 10 min (Compose) on 2 cores; Go's caches make later ones take seconds.
# Not part of .ci/run for that reason; the unit tests check the same files without the tools
# (test/unit/deploy-artifacts.test.ts, test/unit/policy-crd.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.agent-judge/tools"
HELM="$TOOLS/helm/bin/helm"
COMPOSE="$TOOLS/compose/bin/docker-compose"
HELM_VERSION=v4.3.2
COMPOSE_VERSION=v5.6.0

say() { echo "check:deploy: $*"; }
command -v go >/dev/null || {
  echo "check:deploy: go is not installed: helm and Compose build from Go modules" >&2
  exit 1
}

if [[ ! -x $HELM ]]; then
  say "building helm $HELM_VERSION from Go modules"
  GOBIN="$(dirname "$HELM")" go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
fi
if [[ ! -x $COMPOSE ]]; then
  # Compose's go.mod has replace directives, which `go install module@version` refuses: build in a copy of it.
  say "building Docker Compose $COMPOSE_VERSION from its Go module"
  src="$(go mod download -json "github.com/docker/compose/v5@$COMPOSE_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cp -r "$src/." "$work"
  chmod -R u+w "$work"
  mkdir -p "$(dirname "$COMPOSE")"
  (cd "$work" && go build -o "$COMPOSE" ./cmd)
fi

chart=deploy/helm/agent-judge
"$HELM" lint --strict "$chart"
count() { grep -c '^kind:' || true; }
plain=$("$HELM" template aj "$chart" --set temporal.address=temporal:7233 | count)
sidecar=$("$HELM" template aj "$chart" --set temporal.address=temporal:7233 --set judge.sidecar=true | count)
say "helm template: $plain objects; with judge.sidecar=true: $sidecar"
"$HELM" template aj "$chart" --set temporal.address=temporal:7233 --set judge.sidecar=true |
  grep -q 'name: aj-agent-judge-judge-sidecar' || {
  echo "check:deploy: the sidecar ConfigMap is missing from helm template's output" >&2
  exit 1
}

"$COMPOSE" -f docker-compose.temporal.yml config -q
"$COMPOSE" -f docker-compose.temporal.yml --profile discord config -q
say "docker compose config: $("$COMPOSE" -f docker-compose.temporal.yml --profile discord config --services | wc -l) services valid"
say "passed"
