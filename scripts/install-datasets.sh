#!/usr/bin/env bash
# Installs the field's benchmark data for `agent-judge eval --dataset NAME` from PyPI, pinned, under
# .agent-judge/tools/datasets (nothing is vendored into the repository: the importers read the installed packages).
#   mind2web-sc  inspect-evals 0.28.0 (MIT; its Mind2Web-SC data, GuardAgent's benchmark): a 21 MB wheel, no
#                dependencies needed, a few seconds.
#   agentdojo    agentdojo 0.1.35 (MIT) with only what its task suites import (37 MB, about 15 s), then its tasks
#                exported to .agent-judge/tools/datasets/agentdojo-v1.json by scripts/agentdojo-export.py. The full
#                install with the agent pipelines' provider SDKs would be 266 MB and about 100 s; the export needs
#                none of them.
# Usage: scripts/install-datasets.sh [mind2web-sc|agentdojo|all]   (default: all). Skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT="${1:-all}"
TOOLS=.agent-judge/tools/datasets
PIP=(python3 -m pip install --quiet --disable-pip-version-check --no-deps)

if [ "$WHAT" = all ] || [ "$WHAT" = mind2web-sc ]; then
  if [ ! -d "$TOOLS/inspect-evals/inspect_evals-0.28.0.dist-info" ]; then
    rm -rf "$TOOLS/inspect-evals"
    "${PIP[@]}" --target "$TOOLS/inspect-evals" inspect-evals==0.28.0
  fi
  echo "mind2web-sc: $TOOLS/inspect-evals/inspect_evals/mind2web_sc/data/seeact/sample_labeled_all.json"
fi

if [ "$WHAT" = all ] || [ "$WHAT" = agentdojo ]; then
  if [ ! -d "$TOOLS/agentdojo/agentdojo-0.1.35.dist-info" ]; then
    rm -rf "$TOOLS/agentdojo"
    # agentdojo's task suites and what they import, each pinned; --no-deps keeps the provider SDKs out.
    "${PIP[@]}" --target "$TOOLS/agentdojo" agentdojo==0.1.35 \
      pydantic==2.14.4 pydantic-core==2.50.5 typing-extensions==4.16.0 annotated-types==0.8.0 \
      typing-inspection==0.4.5 email-validator==2.4.0 dnspython==2.9.2 idna==3.20 pyyaml==6.0.4 \
      docstring-parser==0.18.0 deepdiff==9.1.0 orderly-set==5.5.0 cachebox==6.2.10 \
      rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2 pygments==2.21.0
  fi
  # An export from before the sessions (results with the injection marker, for --provenance) is written again.
  if [ ! -s "$TOOLS/agentdojo-v1.json" ] || ! grep -q '"injection_marker"' "$TOOLS/agentdojo-v1.json"; then
    python3 -S scripts/agentdojo-export.py "$TOOLS/agentdojo" "$TOOLS/agentdojo-v1.json" v1 >/dev/null
  fi
  echo "agentdojo: $TOOLS/agentdojo-v1.json"
fi
