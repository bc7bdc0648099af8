"""The added latency of a judged tool call through each Python adapter: the same framework run (a scripted model
calls one tool once, then answers) without the adapter and with it, interleaved, against a running agent-judge.

    agent-judge dev --policy bench-policy.yaml     # policies/default.yaml with spec.mcp.rules (below) and
                                                   # spec.limits.proposals.perAgent raised (the bench makes hundreds)
    AGENT_JUDGE_URL=http://127.0.0.1:8766 AGENT_JUDGE_TOKEN=$(cat .agent-judge/hook-token) \\
      .agent-judge/python/bin/python python/bench/latency.py client langchain openai-agents pydantic-ai
    .agent-judge/python-crewai/bin/python python/bench/latency.py crewai         # CrewAI's own venv

The rules::

    rules:
      - { name: agents.read, server: agents, tool: read_note, tier: no-judge }
      - { name: agents.comment, server: agents, tool: comment, actionType: issue_comment,
          target: { repo: a/b, issue: 1 }, parameters: { body: "$.body" } }

Tiers: ``no-judge`` (``read_note``: the policy forwards it, no proposal) and ``lightweight`` (``comment`` as an
``issue_comment``: a proposal decided by the policy alone, then the outcome reported). Each pair is run direct then
judged or judged then direct (alternating); each call has arguments of its own (a new proposal each time). Prints
p50/p95 of each and of the per-pair difference, in milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python/: the tests' scripted CrewAI model

N = int(os.environ.get("BENCH_N", "100"))
WARMUP = 5
TIERS = {"no-judge": ("read_note", "path"), "lightweight": ("comment", "body")}


#: Every real run of a tool: a judged run that did not run its tool is not a judged call, and stops the bench.
RAN: list[str] = []


def read_note(path: str) -> str:
    """Read a note from the vault."""
    RAN.append(path)
    return f"contents of {path}"


def comment(body: str) -> str:
    """Comment on the issue."""
    RAN.append(body)
    return "commented"


Run = Callable[[str, dict[str, Any]], Awaitable[str]]


def langchain_runs() -> tuple[Run, Run]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from agent_judge.langchain import AgentJudgeMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
            return self

    def build(judged: bool) -> Run:
        model = Scripted(messages=iter([]))
        middleware = [AgentJudgeMiddleware()] if judged else []
        agent = create_agent(model, [tool(read_note), tool(comment)], middleware=middleware)

        async def run(name: str, args: dict[str, Any]) -> str:
            call = {"name": name, "args": args, "id": "c1", "type": "tool_call"}
            model.messages = iter([AIMessage(content="", tool_calls=[call]), AIMessage("done")])
            out = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})
            return str(out["messages"][-2].content)

        return run

    return build(False), build(True)


def openai_agents_runs() -> tuple[Run, Run]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    from agent_judge.openai_agents import with_agent_judge

    set_tracing_disabled(True)

    def build(judged: bool) -> Run:
        model = ScriptedModel()
        agent: Any = Agent(name="a", instructions="Help.", model=model, tools=[function_tool(read_note), function_tool(comment)])
        if judged:
            agent = with_agent_judge(agent)

        async def run(name: str, args: dict[str, Any]) -> str:
            model.enqueue([function_call(name, args, call_id="c1")])
            model.enqueue([assistant_message("done")])
            result = await Runner.run(agent, "go")
            return str(result.final_output)

        return run

    return build(False), build(True)


def pydantic_ai_runs() -> tuple[Run, Run]:
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from agent_judge.pydantic_ai import AgentJudge

    def build(judged: bool) -> Run:
        queued: list[ToolCallPart] = []

        def respond(messages: list[Any], _info: Any) -> ModelResponse:
            returned = any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
            return ModelResponse(parts=[TextPart("done")] if returned else list(queued))

        agent: Any = Agent(
            FunctionModel(respond),
            tools=[read_note, comment],
            output_type=[str, DeferredToolRequests],
            capabilities=[AgentJudge()] if judged else [],
        )

        async def run(name: str, args: dict[str, Any]) -> str:
            queued[:] = [ToolCallPart(tool_name=name, args=args, tool_call_id="c1")]
            return str((await agent.run("go")).output)

        return run

    return build(False), build(True)


def crewai_runs() -> tuple[Run, Run]:
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    from agent_judge.crewai import with_agent_judge
    from tests.test_crewai import ScriptedModel

    def build(judged: bool) -> Run:
        tools = [tool(read_note), tool(comment)]
        tools = with_agent_judge(tools) if judged else tools

        async def run(name: str, args: dict[str, Any]) -> str:
            model = ScriptedModel([(name, args)])
            llm = LLM(model="openai/scripted", base_url=model.url, api_key="sk-not-used", max_retries=0)
            agent = Agent(role="operator", goal="do it", backstory="tools", llm=llm, tools=tools, max_iter=4)
            crew = Crew(agents=[agent], tasks=[Task(description="do it", expected_output="done", agent=agent)])
            try:
                return str(await asyncio.to_thread(crew.kickoff))
            finally:
                model.close()

        return run

    return build(False), build(True)


def client_runs() -> tuple[Run, Run]:
    """No framework: the tool called directly, and the gate's own cost (``Judge.decide`` + ``Judge.perform``, what
    every adapter does per call) around it: the floor the adapters add to."""
    from agent_judge.gate import Judge
    from agent_judge.models import Forward

    judge = Judge(runtime="bench")
    tools = {"read_note": read_note, "comment": comment}

    async def direct(name: str, args: dict[str, Any]) -> str:
        return tools[name](**args)

    async def judged(name: str, args: dict[str, Any]) -> str:
        call = judge.call(name, args)
        answer = judge.decide(call)
        if not isinstance(answer, Forward):
            return str(answer.text)
        return judge.perform(answer, call, lambda: tools[name](**answer.arguments))

    return direct, judged


FRAMEWORKS = {
    "client": client_runs,
    "langchain": langchain_runs,
    "openai-agents": openai_agents_runs,
    "pydantic-ai": pydantic_ai_runs,
    "crewai": crewai_runs,
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(framework: str, tier: str, direct: Run, judged: Run) -> dict[str, Any]:
    tool_name, field = TIERS[tier]
    times: dict[str, list[float]] = {"direct": [], "judged": []}
    stamp = time.time_ns()
    for i in range(WARMUP + N):
        order = [("direct", direct), ("judged", judged)]
        if i % 2:
            order.reverse()
        for kind, run in order:
            args = {field: f"bench {framework} {tier} {stamp} {i} {kind}"}
            start = time.perf_counter()
            answer = await run(tool_name, args)
            elapsed = time.perf_counter() - start
            if RAN[-1:] != [args[field]]:
                raise SystemExit(f"{framework} {tier} {kind}: the tool did not run ({answer[:300]})")
            if i >= WARMUP:
                times[kind].append(elapsed * 1000)
    added = [j - d for d, j in zip(times["direct"], times["judged"])]
    row = {"framework": framework, "tier": tier, "n": N}
    for kind, values in (*times.items(), ("added", added)):
        row[kind] = {"p50": round(statistics.median(values), 2), "p95": round(pct(values, 0.95), 2)}
    return row


async def main(names: list[str]) -> None:
    for name in names:
        direct, judged = FRAMEWORKS[name]()
        for tier in TIERS:
            print(json.dumps(await measure(name, tier, direct, judged)), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["client", "langchain", "openai-agents", "pydantic-ai"]))
