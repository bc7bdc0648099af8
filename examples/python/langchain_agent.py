"""LangChain `create_agent` behind agent-judge: `python examples/python/langchain_agent.py` with `agent-judge dev`
running. The model is LangChain's scripted fake (no API key); put a real chat model in its place.

The agent calls `deploy`: the default policy maps no rule for it, so a person decides. The run pauses with
LangGraph's `interrupt()`; decide it (`agent-judge decide <id> approve --approver you`, or in the inbox) and the
script, resuming the thread every few seconds, performs it once."""

from __future__ import annotations

import time
from typing import Any

from _settings import gate_settings
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agent_judge.langchain import AgentJudgeMiddleware


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self


@tool
def deploy(service: str) -> str:
    """Deploy a service to production."""
    print(f"*** deploying {service} ***")
    return f"deployed {service}"


url, token = gate_settings()
model = ScriptedModel(
    messages=iter(
        [
            AIMessage("", tool_calls=[{"name": "deploy", "args": {"service": "billing"}, "id": "c1"}]),
            AIMessage("Deployed billing."),
        ]
    )
)
agent = create_agent(
    model,
    [deploy],
    middleware=[AgentJudgeMiddleware(url=url, token=token, hold_ms=5000)],  # the one line
    checkpointer=InMemorySaver(),
)
thread = {"configurable": {"thread_id": "example-1"}}
result = agent.invoke({"messages": [{"role": "user", "content": "deploy billing"}]}, thread)
while result.get("__interrupt__"):
    print(result["__interrupt__"][0].value["message"])
    time.sleep(3)
    result = agent.invoke(Command(resume="check again"), thread)
print(result["messages"][-1].text)
