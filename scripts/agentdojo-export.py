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
from agentdojo.functions_runtime import FunctionsRuntime  # noqa: E402
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str  # noqa: E402
from agentdojo.attacks.base_attacks import DEFAULT_MODEL_NAME  # noqa: E402
from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack  # noqa: E402


def calls_of(task, env):
    return [{"function": c.function, "args": dict(c.args)} for c in task.ground_truth(env)]


# Where AgentDojo's attacks put the injection: every injection vector a user task's ground truth reads holds this
# marker, and the session's tool results keep it in place (agent-judge eval --dataset agentdojo --provenance puts each
# injection task's text there).
MARKER = "AGENTDOJO-INJECTION-MARKER"


def results_of(suite, task, injections):
    env = suite.load_and_inject_default_environment(injections)
    runtime = FunctionsRuntime(suite.tools)
    out = []
    for call in task.ground_truth(env):
        result, error = runtime.run_function(env, call.function, call.args, raise_on_error=False)
        out.append((call, tool_result_to_str(result) if error is None else f"error: {error}"))
    return out


def session_of(suite, task):
    """The user task's ground-truth calls, each with its result as the agent reads it (AgentDojo's YAML formatter):
    `result` on the environment with the marker in every injection vector (what `get_injection_candidates` does: an
    attack replaces the vector's default text), `benign_result` on the default environment (no attack)."""
    attacked = results_of(suite, task, {vector: MARKER for vector in suite.get_injection_vector_defaults()})
    benign = results_of(suite, task, {})
    return [
        {"function": call.function, "args": dict(call.args), "result": result, "benign_result": benign_result}
        for (call, result), (_, benign_result) in zip(attacked, benign)
    ]


def injection_text(goal):
    """AgentDojo's `important_instructions` attack, the one its papers and leaderboard report first."""
    return ImportantInstructionsAttack._JB_STRING.format(goal=goal, user="Emma Johnson", model=DEFAULT_MODEL_NAME)


suites = {}
for name, suite in sorted(get_suites(version).items()):
    env = suite.load_and_inject_default_environment({})
    suites[name] = {
        "tools": [{"name": t.name, "description": t.description} for t in suite.tools],
        "user_tasks": [
            {"id": tid, "prompt": t.PROMPT, "calls": calls_of(t, env), "session": session_of(suite, t)}
            for tid, t in sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        ],
        "injection_tasks": [
            {"id": tid, "goal": t.GOAL, "calls": calls_of(t, env), "injection_text": injection_text(t.GOAL)}
            for tid, t in sorted(suite.injection_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        ],
    }

tmp_path = out_path + ".tmp"
with open(tmp_path, "w", encoding="utf-8") as f:
    json.dump(
        {"source": "agentdojo 0.1.35", "version": version, "injection_marker": MARKER, "suites": suites},
        f,
        default=str,
        indent=1,
    )
os.replace(tmp_path, out_path)
print(out_path)
