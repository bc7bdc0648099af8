#!/usr/bin/env bash
# `npm run test:cluster`: the integration and end-to-end suites against the real multi-process Temporal cluster on
# PostgreSQL (scripts/cluster.sh), in a namespace of this run's own, then the failover tests (test/cluster: processes
# of the cluster killed with proposals in flight). The cluster is stopped afterwards, pass or fail.
# Extra arguments go to the first vitest run (reporters, `-t <name>`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/cluster.sh up
trap 'bash scripts/cluster.sh down' EXIT
started=$SECONDS
set +e
AGENT_JUDGE_TEST_TEMPORAL_ADDRESS=127.0.0.1:17233 npx vitest run test/integration test/e2e "$@"
rc=$?
echo "test:cluster: integration and end-to-end suites exited $rc after $((SECONDS - started)) s"
failover_started=$SECONDS
AGENT_JUDGE_TEST_TEMPORAL_ADDRESS=127.0.0.1:17233 npx vitest run --config vitest.cluster.config.ts
failover_rc=$?
set -e
echo "test:cluster: failover tests exited $failover_rc after $((SECONDS - failover_started)) s"
((rc == 0)) && rc=$failover_rc
bash scripts/cluster.sh status
exit $rc
