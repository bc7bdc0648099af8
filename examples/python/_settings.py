"""Where `agent-judge dev` is: AGENT_JUDGE_URL (default its address) and AGENT_JUDGE_TOKEN (default the token it
writes for @local in .agent-judge/hook-token, looked for from here upwards)."""

from __future__ import annotations

import os
from pathlib import Path


def gate_settings() -> tuple[str, str]:
    url = os.environ.get("AGENT_JUDGE_URL", "http://127.0.0.1:8766")
    token = os.environ.get("AGENT_JUDGE_TOKEN")
    if not token:
        for folder in [Path.cwd(), *Path.cwd().parents]:
            file = folder / ".agent-judge" / "hook-token"
            if file.is_file():
                token = file.read_text().strip()
                break
    if not token:
        raise SystemExit("no token: run `agent-judge dev` in this project, or set AGENT_JUDGE_TOKEN")
    return url, token
