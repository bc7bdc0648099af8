"""Pydantic AI behind agent-judge: `python examples/python/pydantic_ai_agent.py` with `agent-judge dev` running.
The model is Pydantic AI's FunctionModel (no API key); put a real model name in its place.

The agent calls `deploy`: a person decides (`agent-judge decide <id> approve --approver you`, with `dev` started as
AGENT_JUDGE_APPROVERS=you). The run ends with DeferredToolRequests (Pydantic AI's human-in-the-loop); the script runs
it again every few seconds with the approvals, and agent-judge, asked again, decides whether it runs."""

from __future__ import annotations

import time

from _settings import gate_settings
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_judge.pydantic_ai import AgentJudge


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    done = any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
    if done:
        return ModelResponse(parts=[TextPart("Deployed billing.")])
    return ModelResponse(parts=[ToolCallPart("deploy", {"service": "billing"}, tool_call_id="c1")])


def deploy(service: str) -> str:
    """Deploy a service to production."""
    print(f"*** deploying {service} ***")
    return f"deployed {service}"


url, token = gate_settings()
agent = Agent(
    FunctionModel(scripted),
    tools=[deploy],
    output_type=[str, DeferredToolRequests],
    capabilities=[AgentJudge(url=url, token=token, hold_ms=5000)],  # the one line
)
result = agent.run_sync("deploy billing")
while isinstance(result.output, DeferredToolRequests):
    for call in result.output.approvals:
        print(result.output.metadata[call.tool_call_id]["agent_judge"]["text"])
    time.sleep(3)
    approvals = {call.tool_call_id: True for call in result.output.approvals}
    result = agent.run_sync(
        message_history=result.all_messages(), deferred_tool_results=DeferredToolResults(approvals=approvals)
    )
print(result.output)
