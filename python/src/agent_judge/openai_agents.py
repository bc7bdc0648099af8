"""The OpenAI Agents SDK (``openai-agents``): one call puts every function tool of an agent behind the gate::

    agent = with_agent_judge(Agent(name="assistant", tools=[deploy, read_note]))

It uses the SDK's own approval hook: each tool's ``needs_approval`` asks the gate; a call still being decided is
the SDK's interruption (``result.interruptions``, a durable ``RunState``: ``result.to_state().to_string()``). The
Python SDK keeps an interruption pending until the application approves or rejects it, so resume with::

    state = await RunState.from_string(agent, saved)
    await approve_decided(agent, state)  # asks the gate again; approves (in the SDK) what is no longer pending
    result = await Runner.run(agent, state)  # still pending: the same interruption again

The tool's ``on_invoke_tool`` performs only a ``forward``, with exactly its arguments (a person's edits included), and
reports its outcome on the lease; every other answer is the text the model reads as the tool's result, and the tool
never runs. So ``state.approve()`` on the SDK's side cannot run a call the gate has not forwarded: it only lets the
gate's own answer reach the model.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

from agents import Agent, FunctionTool, RunContextWrapper, RunState
from agents.tool import Tool, maybe_invoke_function_tool_failure_error_function
from agents.tool_context import ToolContext
from typing_extensions import Unpack

from .gate import Judge, JudgeOptions, model_text, performed_input
from .models import CallAnswer, Forward, Pending

#: The runtime name calls from this adapter carry (part of each call's identity).
OPENAI_AGENTS_RUNTIME = "openai-agents"

TContext = TypeVar("TContext")
#: The attribute a judged tool carries: how `approve_decided` asks the gate again about one of its calls.
_ASK_AGAIN = "_agent_judge_ask_again"


class AgentJudgeToolError(TypeError):
    """A tool the gate cannot hold (a hosted tool runs on the model provider's side)."""


def judge_for(**options: Unpack[JudgeOptions]) -> Judge:
    """The :class:`~agent_judge.gate.Judge` the tools of :func:`with_agent_judge` share."""
    return Judge(runtime=OPENAI_AGENTS_RUNTIME, **options)


@overload
def with_agent_judge(
    agent_or_tools: Agent[TContext], *, pending: Literal["interrupt", "answer"] = ..., **options: Unpack[JudgeOptions]
) -> Agent[TContext]: ...
@overload
def with_agent_judge(
    agent_or_tools: Sequence[Tool], *, pending: Literal["interrupt", "answer"] = ..., **options: Unpack[JudgeOptions]
) -> list[Tool]: ...
def with_agent_judge(
    agent_or_tools: Agent[TContext] | Sequence[Tool],
    *,
    pending: Literal["interrupt", "answer"] = "interrupt",
    **options: Unpack[JudgeOptions],
) -> Agent[TContext] | list[Tool]:
    """The agent with every tool behind the gate (a clone: ``agent`` itself is unchanged), or the tools judged.

    ``options`` are :func:`judge_for`'s (``url``, ``token``, ``server``, ``hold_ms``, ``on_pending``, ...).
    ``pending="interrupt"`` (default) makes a call still being decided the SDK's interruption; ``"answer"`` gives
    the model "pending, retry after ..." as the tool's result and the run goes on. Handoff agents keep their own
    tools: wrap each agent that has tools.
    """
    judge = judge_for(**options)
    if isinstance(agent_or_tools, Agent):
        return agent_or_tools.clone(tools=[judged(t, judge, pending=pending) for t in agent_or_tools.tools])
    return [judged(t, judge, pending=pending) for t in agent_or_tools]


def judged(tool: Tool, judge: Judge, *, pending: Literal["interrupt", "answer"] = "interrupt") -> FunctionTool:
    """``tool`` behind the gate: the same tool (name, schema, description) whose ``needs_approval`` asks the gate
    and whose ``on_invoke_tool`` runs the original only for a ``forward``. Function tools only: hosted tools run
    where nothing can hold them, so they are refused rather than passed through unjudged.
    """
    if not isinstance(tool, FunctionTool):
        name = getattr(tool, "name", "")
        raise AgentJudgeToolError(
            f"agent-judge cannot judge the {type(tool).__name__} {name}: only function tools run where the gate "
            "can hold them"
        )
    original = tool.on_invoke_tool
    # The answer asked in `needs_approval`, taken by `on_invoke_tool` for the same call id (once).
    answers: dict[str, CallAnswer] = {}

    def call_of(arguments: Any, call_id: str | None) -> dict[str, Any]:
        return judge.call(tool.name, arguments, description=tool.description, call_id=call_id)

    async def needs_approval(_ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        previous = answers.get(call_id)
        if previous is not None and not isinstance(previous, Pending):
            return False
        answer = await judge.adecide(call_of(params, call_id))
        answers[call_id] = answer
        return isinstance(answer, Pending) and pending == "interrupt"

    async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> Any:
        call_id = ctx.tool_call_id
        answer = answers.pop(call_id, None)
        arguments = _parse(input)
        call = call_of(arguments, call_id)
        # Not asked yet, or an approval given on the SDK's side while the gate said pending: ask now. The SDK's own
        # `state.approve()` never runs a call the gate has not forwarded.
        if answer is None or isinstance(answer, Pending):
            answer = await judge.adecide(call)
        if not isinstance(answer, Forward):
            return model_text(answer)
        # Exactly what was approved (a person's edits included), never the input as the model sent it.
        approved = json.dumps(performed_input(arguments, answer))
        raw = getattr(original, "_invoke_tool_impl", None)
        if raw is None:  # not the SDK's failure-handling invoker: a tool error it turns into text is reported `ok`
            return await judge.aperform(answer, call, lambda: original(ctx, approved))
        # The SDK's invoker turns a raised error into text (failure_error_function) before this code could see it:
        # run the tool without it, so a raise is reported as what it was, then give the model the SDK's own text.
        try:
            return await judge.aperform(answer, call, lambda: raw(ctx, approved))
        except Exception as err:
            text = await maybe_invoke_function_tool_failure_error_function(function_tool=tool, context=ctx, error=err)
            if text is None:
                raise
            return text

    async def ask_again(arguments: Any, call_id: str) -> CallAnswer:
        answer = await judge.adecide(call_of(arguments, call_id))
        answers[call_id] = answer
        return answer

    wrapped = dataclasses.replace(tool, needs_approval=needs_approval, on_invoke_tool=on_invoke_tool)
    setattr(wrapped, _ASK_AGAIN, ask_again)
    return wrapped


async def approve_decided(agent: Agent[Any], state: RunState[Any]) -> int:
    """Asks the gate again about each of the run's interruptions that a judged tool of ``agent`` raised, and
    approves, on the SDK's side, each the gate no longer holds (forwarded, denied, refused...): resuming then hands
    the gate's answer to the tool, which performs only a forward. Returns how many are still pending (those stay the
    run's interruptions). Interruptions of other tools are left to the application.
    """
    tools = {t.name: t for t in agent.tools if isinstance(t, FunctionTool)}
    still = 0
    for item in state.get_interruptions():
        ask_again = getattr(tools.get(item.name or ""), _ASK_AGAIN, None)
        if ask_again is None or not item.call_id:
            continue
        answer = await ask_again(_parse(item.arguments or ""), item.call_id)
        if isinstance(answer, Pending):
            still += 1
        else:
            state.approve(item)
    return still


def _parse(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text
