"""Pydantic AI: one capability puts every function tool call of an agent behind the gate::

    agent = Agent(model, tools=[deploy, read_note], capabilities=[AgentJudge()])

It uses Pydantic AI's own tool hooks and deferred tools. The gate is asked when the call's arguments are validated
(``wrap_tool_validate``): a ``forward`` has its arguments validated and performed exactly as approved (a person's
edits included), and its outcome is reported on the lease (``wrap_tool_execute``); every other answer is the text the
model reads as the tool's result, and the tool never runs. A call still being decided is Pydantic AI's human-in-the-
loop deferral (``ApprovalRequired``): the run ends with ``DeferredToolRequests`` output (its ``metadata`` says which
proposal waits); run it again after the decision with ``message_history=result.all_messages()`` and
``deferred_tool_results=DeferredToolResults(approvals={call_id: True})``. The gate is asked again then; the
application's approval itself decides nothing, so it cannot run a call the gate has not forwarded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import (
    RawToolArgs,
    ValidatedToolArgs,
    WrapToolExecuteHandler,
    WrapToolValidateHandler,
)
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolRetryError
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import AgentDepsT, ToolDefinition
from typing_extensions import Unpack

from .gate import Judge, JudgeOptions, model_text, performed_input
from .models import CallAnswer, Forward, Outcome, Pending

#: The runtime name calls from this adapter carry (part of each call's identity).
PYDANTIC_AI_RUNTIME = "pydantic-ai"


@dataclass(init=False)
class AgentJudge(AbstractCapability[AgentDepsT]):
    """The capability that sends every function tool call of the agent through agent-judge's gate service.

    ``pending="defer"`` (default) makes a call still being decided a deferred tool call (``ApprovalRequired``);
    ``"answer"`` gives the model the pending text ("retry after ...") and the run goes on. ``options`` are
    :class:`~agent_judge.gate.JudgeOptions` (``url``, ``token``, ``server``, ``hold_ms``, ``on_pending``, ...).
    """

    judge: Judge = field(init=False, repr=False)
    pending: Literal["defer", "answer"] = field(init=False, default="defer")
    # The gate's answer per tool call, asked at validation and taken (once) at execution.
    _answers: dict[str, tuple[CallAnswer, dict[str, Any]]] = field(init=False, repr=False, default_factory=dict)

    def __init__(self, *, pending: Literal["defer", "answer"] = "defer", **options: Unpack[JudgeOptions]) -> None:
        self.judge = Judge(runtime=PYDANTIC_AI_RUNTIME, **options)
        self.pending = pending
        self._answers = {}

    async def wrap_tool_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
        handler: WrapToolValidateHandler,
    ) -> ValidatedToolArgs:
        if tool_def.kind != "function":
            return await handler(args)
        raw = call.args_as_dict() if isinstance(args, str) else args
        request = self.judge.call(
            call.tool_name,
            raw,
            description=tool_def.description,
            call_id=call.tool_call_id,
            session_id=ctx.conversation_id,
            user_task=ctx.prompt if isinstance(ctx.prompt, str) else None,
        )
        answer = await self.judge.adecide(request)
        self._answers[call.tool_call_id] = (answer, request)
        if isinstance(answer, Forward):
            # Exactly what was approved (a person's edits included) is validated and performed.
            return await handler(performed_input(raw, answer))
        validated = await handler(args)
        if isinstance(answer, Pending) and self.pending == "defer":
            self._answers.pop(call.tool_call_id, None)
            raise ApprovalRequired(
                metadata={
                    "agent_judge": {
                        "proposal_id": answer.proposal_id,
                        "workflow_id": answer.workflow_id,
                        "waiting_for": answer.waiting_for,
                        "status": answer.status,
                        "deadline": answer.deadline,
                        "text": answer.text,
                    }
                }
            )
        return validated

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        if tool_def.kind != "function":
            return await handler(args)
        taken = self._answers.pop(call.tool_call_id, None)
        if taken is None:
            # Never asked (another capability skipped validation): fail closed.
            return "agent-judge REJECT: this call was not decided. Not performed."
        answer, request = taken
        if not isinstance(answer, Forward):
            return model_text(answer)
        return await self.judge.aperform(answer, request, lambda: handler(args), error_outcome=_error_outcome)


def _error_outcome(err: Exception) -> Outcome:
    # A tool asking the model to retry ran and answered an error; anything else may not have run.
    return "tool_error" if isinstance(err, (ModelRetry, ToolRetryError)) else "performer_failure"
