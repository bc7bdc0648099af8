"""The OpenAI Agents SDK behind agent-judge: `python examples/python/openai_agents_app.py` with `agent-judge dev`
running. The model is the SDK's scripted test model (no API key); drop `model=` to use OpenAI's.

The agent calls `deploy`: a person decides (`agent-judge decide <id> approve --approver you`, with `dev` started as
AGENT_JUDGE_APPROVERS=you). The run stops with the SDK's interruption; the script keeps the durable RunState and
resumes it every few seconds."""

from __future__ import annotations

import asyncio

from _settings import gate_settings
from agents import Agent, RunState, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from agent_judge.openai_agents import approve_decided, with_agent_judge


@function_tool
def deploy(service: str) -> str:
    """Deploy a service to production."""
    print(f"*** deploying {service} ***")
    return f"deployed {service}"


async def main() -> None:
    set_tracing_disabled(True)
    url, token = gate_settings()
    model = ScriptedModel(
        [[function_call("deploy", {"service": "billing"}, call_id="c1")], [assistant_message("Deployed billing.")]]
    )
    agent = with_agent_judge(  # the one line
        Agent(name="ops", instructions="Deploy what you are asked to.", model=model, tools=[deploy]),
        url=url,
        token=token,
        hold_ms=5000,
        on_pending=lambda answer, call: print(answer.text),
    )
    result = await Runner.run(agent, "deploy billing")
    while result.interruptions:
        saved = result.to_state().to_string()  # durable: keep it anywhere
        await asyncio.sleep(3)
        state = await RunState.from_string(agent, saved)
        await approve_decided(agent, state)
        result = await Runner.run(agent, state)
    print(result.final_output)


asyncio.run(main())
