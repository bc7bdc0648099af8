"""LangChain / LangGraph: one middleware puts every tool call of a ``create_agent`` agent behind the gate::

    agent = create_agent(model, tools, middleware=[AgentJudgeMiddleware()], checkpointer=InMemorySaver())

It uses LangChain's own tool hook (``wrap_tool_call`` / ``awrap_tool_call``): the tool runs only for a ``forward``,
with exactly the forward's arguments (a person's edits included), and its outcome is reported on the lease. Every
other answer is the ``ToolMessage`` the model reads, and the tool never runs. A call still being decided is
LangGraph's own durable pause, ``interrupt()`` (kept by the agent's checkpointer): invoke the thread again with
``Command(resume=...)`` after the decision; the gate is asked again and the resume value itself decides nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypedDict

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from typing_extensions import Unpack

from .gate import Judge, JudgeOptions, model_text, performed_input
from .models import CallAnswer, Forward, Outcome, Pending

#: The runtime name calls from this adapter carry (part of each call's identity).
LANGCHAIN_RUNTIME = "langchain"
#: Resume values one paused call takes before the adapter stops pausing and answers the pending text.
MAX_RESUMES = 10_000

ToolResult = ToolMessage | Command[Any]


class AgentJudgeInterrupt(TypedDict):
    """The value of the interrupt a pending call raises (``result["__interrupt__"][i].value``). Informational."""

    type: Literal["agent-judge"]
    proposal_id: str
    workflow_id: str
    waiting_for: Literal["judge", "human"]
    status: str
    deadline: str | None
    tool: str
    arguments: dict[str, Any]
    tool_call_id: str | None
    message: str


class AgentJudgeMiddleware(AgentMiddleware):
    """The middleware that sends every tool call of the agent through agent-judge's gate service.

    ``pending="interrupt"`` (default) pauses a call still being decided with ``interrupt()`` (the agent needs a
    checkpointer); ``"answer"`` gives the model the pending text ("retry after ...") and the run goes on. ``options``
    are :class:`~agent_judge.gate.JudgeOptions` (``url``, ``token``, ``server``, ``hold_ms``, ``on_pending``, ...).
    """

    def __init__(
        self, *, pending: Literal["interrupt", "answer"] = "interrupt", **options: Unpack[JudgeOptions]
    ) -> None:
        super().__init__()
        self.judge = Judge(runtime=LANGCHAIN_RUNTIME, **options)
        self.pending = pending

    @property
    def name(self) -> str:
        return "AgentJudgeMiddleware"

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        call = self._call_of(request)
        answer = self.judge.decide(call)
        if isinstance(answer, Forward):
            approved = _approved(request, answer)
            return self.judge.perform(answer, call, lambda: handler(approved), _outcome_of)
        return self._not_performed(request, call, answer)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        call = self._call_of(request)
        answer = await self.judge.adecide(call)
        if isinstance(answer, Forward):
            approved = _approved(request, answer)
            return await self.judge.aperform(answer, call, lambda: handler(approved), _outcome_of)
        return self._not_performed(request, call, answer)

    def _not_performed(self, request: ToolCallRequest, call: Mapping[str, Any], answer: CallAnswer) -> ToolMessage:
        tool_call = request.tool_call
        if isinstance(answer, Pending) and self.pending == "interrupt":
            value: AgentJudgeInterrupt = {
                "type": "agent-judge",
                "proposal_id": answer.proposal_id,
                "workflow_id": answer.workflow_id,
                "waiting_for": answer.waiting_for,
                "status": answer.status,
                "deadline": answer.deadline,
                "tool": tool_call["name"],
                "arguments": call["arguments"],
                "tool_call_id": tool_call.get("id"),
                "message": _person_text(answer),
            }
            # LangGraph's durable pause. A resumed run runs this task again from the start, so the gate above was
            # just asked afresh and still says pending: `interrupt()` hands back the resume values this task was
            # given before, in order, and the first one not given yet pauses the run again. The values themselves
            # are never read: only agent-judge's approvers decide, so an application's "approve" cannot run it.
            for _ in range(MAX_RESUMES):
                interrupt(value)
        return ToolMessage(
            content=model_text(answer),
            tool_call_id=tool_call.get("id") or "",
            name=tool_call["name"],
            status="error",
        )

    def _call_of(self, request: ToolCallRequest) -> dict[str, Any]:
        tool_call = request.tool_call
        tool = request.tool
        config = getattr(request.runtime, "config", None) or {}
        thread_id = (config.get("configurable") or {}).get("thread_id")
        return self.judge.call(
            tool_call["name"],
            tool_call.get("args"),
            description=getattr(tool, "description", None) if tool is not None else None,
            call_id=tool_call.get("id"),
            session_id=thread_id if isinstance(thread_id, str) else None,
            user_task=_first_user_message(request.state),
        )


def agent_judge_middleware(
    *, pending: Literal["interrupt", "answer"] = "interrupt", **options: Unpack[JudgeOptions]
) -> AgentJudgeMiddleware:
    """``AgentJudgeMiddleware(...)``, for symmetry with the TypeScript ``agentJudgeMiddleware``."""
    return AgentJudgeMiddleware(pending=pending, **options)


def _approved(request: ToolCallRequest, forward: Forward) -> ToolCallRequest:
    """The request with exactly the approved arguments (a person's edits included)."""
    tool_call = request.tool_call
    return request.override(tool_call={**tool_call, "args": performed_input(tool_call.get("args"), forward)})


def _outcome_of(result: Any) -> tuple[Outcome, str | None]:
    # A ToolMessage with status `error` is the tool's own error answer: it ran, and failed.
    if isinstance(result, ToolMessage) and result.status == "error":
        return "tool_error", result.text[:2000]
    return "ok", None


def _person_text(answer: Pending) -> str:
    if answer.waiting_for == "human":
        return (
            f"agent-judge: {answer.proposal_id} waits for an approver: agent-judge decide {answer.proposal_id} "
            "approve|reject --approver <you> (or in Discord)"
        )
    return answer.text


def _first_user_message(state: Any) -> str | None:
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    for m in messages or []:
        if isinstance(m, HumanMessage):
            return m.text or None
    return None
