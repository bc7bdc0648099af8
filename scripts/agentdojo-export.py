"""Writes AgentDojo's task suites as JSON for `agent-judge eval --dataset agentdojo` (src/judge/datasets/agentdojo.ts).

For every suite of one benchmark version: its tools (name, description), its user tasks (prompt and the ground-truth
tool calls that solve it) and its injection tasks (the attacker's goal and the ground-truth calls that achieve it).
Nothing is vendored: the data comes from the installed `agentdojo` package (MIT), read at run time.

Usage: python3 -S scripts/agentdojo-export.py <site-dir> <out.json> [benchmark version, default v1]

`-S` and <site-dir> (where scripts/install-datasets.sh put agentdojo and the few packages the task suites need):
the task data needs neither the agent pipelines' provider SDKs (anthropic, cohere, google-genai, langchain, openai,
240 MB) nor anything else on the machine, so two pipeline modules that import them are replaced by stubs before the
suites load. Pinned to agentdojo 0.1.35; a newer version may need the stubs revisited.
"""

import importlib.util
import json
import os
import sys
import types

site_dir, out_path = sys.argv[1], sys.argv[2]
version = sys.argv[3] if len(sys.argv) > 3 else "v1"
sys.path[:0] = [site_dir]

spec = importlib.util.find_spec("agentdojo")
if spec is None or spec.origin is None:
    sys.exit(f"agentdojo is not installed in {site_dir}: run scripts/install-datasets.sh agentdojo")
root = os.path.dirname(spec.origin)


def stub_package(name, path):
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod
    return mod


# agentdojo.agent_pipeline's __init__ imports every provider SDK; its submodules the suites use do not, except
# tool_execution's one constant from llms.google_llm.
stub_package("agentdojo.agent_pipeline", os.path.join(root, "agent_pipeline"))
stub_package("agentdojo.agent_pipeline.llms", os.path.join(root, "agent_pipeline", "llms"))
google_llm = types.ModuleType("agentdojo.agent_pipeline.llms.google_llm")
google_llm.EMPTY_FUNCTION_NAME = "<empty-function-name>"
sys.modules["agentdojo.agent_pipeline.llms.google_llm"] = google_llm

from agentdojo.task_suite.load_suites import get_suites  # noqa: E402


def calls_of(task, env):
    return [{"function": c.function, "args": dict(c.args)} for c in task.ground_truth(env)]


suites = {}
for name, suite in sorted(get_suites(version).items()):
    env = suite.load_and_inject_default_environment({})
    suites[name] = {
        "tools": [{"name": t.name, "description": t.description} for t in suite.tools],
        "user_tasks": [
            {"id": tid, "prompt": t.PROMPT, "calls": calls_of(t, env)}
            for tid, t in sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        ],
        "injection_tasks": [
            {"id": tid, "goal": t.GOAL, "calls": calls_of(t, env)}
            for tid, t in sorted(suite.injection_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        ],
    }

with open(out_path, "w", encoding="utf-8") as f:
    json.dump({"source": "agentdojo 0.1.35", "version": version, "suites": suites}, f, default=str, indent=1)
print(out_path)
