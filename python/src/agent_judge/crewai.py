"""CrewAI: one call puts an agent's tools behind the gate::

    agent = Agent(role=..., goal=..., backstory=..., tools=with_agent_judge([deploy, read_note]))

Each tool is wrapped, not hooked. CrewAI 1.x has a blocking ``before_tool_call`` hook, but its dispatcher swallows
any exception a hook raises other than ``HookAborted`` and lets the call run (``crewai/hooks/dispatch.py``:
"any other exception is swallowed (fail-open)"), hooks are process-global, a blocked call tells the model only
"Tool execution blocked by hook", and the after hook sees a tool's exception as text. A wrapped tool fails closed in
this package's own code, gives the model agent-judge's words, and knows how the tool ended.

The wrapped tool has the original's name, description and argument schema. When the agent calls it, the gate decides;
only a ``forward`` runs the original, once, with exactly the forward's arguments (a person's edits included), and its
outcome is reported on the lease: ``ok``; ``tool_error`` when the tool answered CrewAI's ``ToolFailure``;
``performer_failure`` when it raised (re-raised: CrewAI tells the model). Anything else is text the model reads as
the tool's result. CrewAI's tool cache is off for wrapped tools: a "pending" answer must not be replayed after the
person approved. CrewAI has no resumable tool interruption: a call still held is answered "pending, retry after ...".
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from crewai.tools import BaseTool
from crewai.tools.tool_failure import ToolFailure
from pydantic import PrivateAttr
from typing_extensions import Unpack

from .gate import Judge, JudgeOptions, model_text, performed_input
from .models import Forward, Outcome

RUNTIME = "crewai"


def judge_for(**options: Unpack[JudgeOptions]) -> Judge:
    """The :class:`~agent_judge.gate.Judge` CrewAI tools share (runtime ``crewai``)."""
    return Judge(runtime=RUNTIME, **options)


def with_agent_judge(tools: Sequence[BaseTool], **options: Unpack[JudgeOptions]) -> list[BaseTool]:
    """Each of ``tools`` behind the gate (``options``: ``url``, ``token``, ``server``, ``hold_ms``, ...)."""
    judge = judge_for(**options)
    return [judged(t, judge) for t in tools]


def judged(tool: BaseTool, judge: Judge) -> BaseTool:
    """``tool`` behind the gate: the same name, description and argument schema; it runs only for a ``forward``."""
    wrapped = JudgedTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        result_as_answer=tool.result_as_answer,
        # Never cache an answer: the same call after a person approved must be asked again.
        cache_function=_never,
    )
    wrapped._original = tool
    wrapped._judge = judge
    return wrapped


def _never(_args: Any = None, _result: Any = None) -> bool:
    return False


def _outcome_of(result: Any) -> tuple[Outcome, str | None]:
    if isinstance(result, ToolFailure):
        return "tool_error", str(result.message)[:2000]
    return "ok", None


class JudgedTool(BaseTool):
    """A CrewAI tool whose every call the gate decides first (made by :func:`judged`)."""

    _original: BaseTool = PrivateAttr()
    _judge: Judge = PrivateAttr()

    def _call(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return self._judge.call(self.name, kwargs, description=self._original.description)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        call = self._call(kwargs)
        answer = self._judge.decide(call)
        if not isinstance(answer, Forward):
            return model_text(answer)
        approved = performed_input(kwargs, answer)
        return self._judge.perform(answer, call, lambda: self._original.run(**approved), _outcome_of)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        call = self._call(kwargs)
        answer = await self._judge.adecide(call)
        if not isinstance(answer, Forward):
            return model_text(answer)
        approved = performed_input(kwargs, answer)

        async def run() -> Any:
            if type(self._original)._arun is BaseTool._arun:  # a sync-only tool: in a thread, once
                return await asyncio.to_thread(self._original.run, **approved)
            return await self._original.arun(**approved)

        return await self._judge.aperform(answer, call, run, _outcome_of)
