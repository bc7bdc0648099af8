"""The Pydantic AI adapter driving a real ``Agent`` with Pydantic AI's own ``FunctionModel`` (a scripted model that
records what it was given), against the real gate service. What the user sees: how often each tool really ran and
with what, the tool result the model read, the deferred tool requests, and what the proposal recorded."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry, AgentRunResult, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_judge.pydantic_ai import AgentJudge

from .conftest import (
    DOWN_URL,
    SECRET,
    AsyncRecording,
    Service,
    assert_one_grant_use,
    assert_recorded_raise,
    assert_recorded_tool_error,
    limit_refusal,
    limited_for,
    wait_until_listed,
)
from .tools import TRACKER_DOWN, TRACKER_REFUSED, Tools


class App:
    def __init__(
        self,
        service: Service,
        calls: list[ToolCallPart],
        url: str | None = None,
        token: str | None = None,
        refuse: Any = None,
        **options: Any,
    ) -> None:
        tools = Tools(refuse)
        self.ran = tools.ran
        self.seen: dict[str, str] = {}
        self.calls = calls
        self.agent = Agent(
            FunctionModel(self.model),
            tools=tools.functions(),
            output_type=[str, DeferredToolRequests],
            # The one line an application adds:
            capabilities=[AgentJudge(url=url or service.url, token=token or service.token, **options)],
        )

    def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The scripted model: the queued tool calls first, then a text naming what the tools returned."""
        # A tool's error answer (ModelRetry) comes back as a retry prompt for that call.
        returns = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, (ToolReturnPart, RetryPromptPart))
        ]
        for r in returns:
            self.seen[r.tool_call_id] = r.model_response_str() if isinstance(r, ToolReturnPart) else r.model_response()
        if not returns and self.calls:
            return ModelResponse(parts=list(self.calls))
        return ModelResponse(parts=[TextPart("done")])

    async def resume(self, first: AgentRunResult[Any], call_id: str) -> AgentRunResult[Any]:
        """The deferred run again, with the application's own approval of ``call_id`` (which decides nothing)."""
        return await self.agent.run(
            message_history=first.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={call_id: True}),
        )


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCallPart:
    return ToolCallPart(tool_name=name, args=args, tool_call_id=call_id)


def waiting(result: AgentRunResult[Any], call_id: str) -> dict[str, Any]:
    """What the deferred call says of the proposal it waits for."""
    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_call_id for c in result.output.approvals] == [call_id]
    found: dict[str, Any] = result.output.metadata[call_id]["agent_judge"]
    return found


async def test_a_no_judge_call_runs_once(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c1")])
    result = await app.agent.run("read my note")
    assert result.output == "done"
    assert app.ran["read_note"] == [{"path": unique}]
    assert app.seen["c1"] == f"contents of {unique}"


async def test_a_call_a_person_decides_is_deferred_approved_it_runs_once(service: Service, unique: str) -> None:
    app = App(service, [call("deploy", {"service": unique}, "c2")], hold_ms=1000)
    first = await app.agent.run("deploy it")
    held = waiting(first, "c2")
    assert held["waiting_for"] == "human" and app.ran["deploy"] == []
    # The application's own approval before the person decided: asked again, still deferred, not run.
    early = await app.resume(first, "c2")
    assert isinstance(early.output, DeferredToolRequests) and app.ran["deploy"] == []

    service.decide(held["proposal_id"], "approve")
    resumed = await app.resume(first, "c2")
    assert resumed.output == "done"
    assert app.ran["deploy"] == [{"service": unique}]
    assert app.seen["c2"] == f"deployed {unique}"
    status = service.status(held["proposal_id"])
    assert status["status"] == "executed" and status["caller"]["outcome"] == "ok"
    # The proposal is the token's agent's: nothing in a tool call can name another.
    assert status["proposal"]["agent_id"] == "@agent"


async def test_a_persons_edits_are_what_runs(service: Service, unique: str) -> None:
    app = App(service, [call("deploy", {"service": unique}, "c3")], hold_ms=1000)
    first = await app.agent.run("deploy it")
    proposal = waiting(first, "c3")["proposal_id"]
    service.decide(proposal, edits=[{"path": "parameters.arguments.service", "value": f"{unique}-canary"}])
    await app.resume(first, "c3")
    assert app.ran["deploy"] == [{"service": f"{unique}-canary"}]
    assert app.seen["c3"] == f"deployed {unique}-canary"


async def test_a_denied_call_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service, [call("comment", {"body": f"key {SECRET} {unique}"}, "c4")])
    result = await app.agent.run("post the key")
    assert result.output == "done" and app.ran["comment"] == []
    assert app.seen["c4"].startswith("agent-judge REJECT (") and "Not performed" in app.seen["c4"]


async def test_a_person_rejecting_it_means_it_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service, [call("deploy", {"service": unique}, "c8")], hold_ms=1000)
    first = await app.agent.run("deploy it")
    proposal = waiting(first, "c8")["proposal_id"]
    service.decide(proposal, "reject")
    resumed = await app.resume(first, "c8")
    assert resumed.output == "done" and app.ran["deploy"] == []
    assert app.seen["c8"].startswith("agent-judge REJECT (human:scott") and "Not performed" in app.seen["c8"]
    assert service.status(proposal)["status"] == "rejected"


async def test_a_call_asked_to_clarify_never_runs_and_the_model_reads_what_is_missing(
    service: Service, unique: str
) -> None:
    app = App(service, [call("open_pr", {"branch": f"f-{unique}"}, "c9")])
    result = await app.agent.run("open the pr")
    assert result.output == "done" and app.ran["open_pr"] == []
    assert app.seen["c9"].startswith("agent-judge CLARIFY: cited_evidence is empty")
    assert "Not performed" in app.seen["c9"]


async def test_with_agent_judge_down_nothing_runs(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c5")], url=DOWN_URL, timeout=5)
    await app.agent.run("read my note")
    assert app.ran["read_note"] == []
    assert "could not be reached" in app.seen["c5"] and app.seen["c5"].endswith("Not performed.")


def test_the_sync_entry_point_is_judged_too(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c6"), call("comment", {"body": SECRET}, "c7")])
    app.agent.run_sync("read and comment")
    assert app.ran["read_note"] == [{"path": unique}] and app.ran["comment"] == []


async def test_a_tool_that_fails_is_recorded_as_it_happened(service: Service, unique: str) -> None:
    gate = AsyncRecording(service.url, service.token)
    body = f"{TRACKER_DOWN} ({unique})"
    app = App(service, [call("comment", {"body": body}, "c10")], async_client=gate)
    with pytest.raises(RuntimeError):  # the tool raised, and the run with it
        await app.agent.run("comment on the issue")
    assert app.ran["comment"] == [{"body": body}]
    assert_recorded_raise(service, gate.answers, body)


def _model_retry(body: str) -> str:
    raise ModelRetry(body)


async def test_a_tools_error_answer_is_recorded_as_a_tool_error(service: Service, unique: str) -> None:
    gate = AsyncRecording(service.url, service.token)
    body = f"{TRACKER_REFUSED} ({unique})"
    app = App(service, [call("comment", {"body": body}, "c11")], async_client=gate, refuse=_model_retry)
    assert (await app.agent.run("comment on the issue")).output == "done"
    assert app.ran["comment"] == [{"body": body}]
    assert body in app.seen["c11"]  # the model reads the tool's own error (Pydantic AI's retry prompt)
    assert_recorded_tool_error(service, gate.answers, body)


async def test_a_grant_covers_the_identical_call_and_holds_another(service: Service, unique: str) -> None:
    first = App(service, [call("deploy", {"service": unique}, "g1")], hold_ms=1000)
    run = await first.agent.run("deploy it")
    proposal = waiting(run, "g1")["proposal_id"]
    service.decide(proposal, "approve")
    # The person grants calls identical to this one; the approved one runs.
    grant_id = service.grant_identical_calls(proposal)
    await first.resume(run, "g1")
    assert first.ran["deploy"] == [{"service": unique}]
    # The identical call again (another run): the grant covers it, it runs at once.
    again = App(service, [call("deploy", {"service": unique}, "g2")], hold_ms=1000)
    result = await again.agent.run("deploy it again")
    assert result.output == "done" and again.ran["deploy"] == [{"service": unique}]
    assert again.seen["g2"] == f"deployed {unique}"
    # Another service: not what the grant says, deferred for a person, not run.
    other = App(service, [call("deploy", {"service": f"{unique}-b"}, "g3")], hold_ms=1000)
    assert waiting(await other.agent.run("deploy the other"), "g3")["waiting_for"] == "human"
    assert other.ran["deploy"] == []
    assert_one_grant_use(service, grant_id, {"service": unique})


async def test_past_the_proposal_limit_nothing_runs_and_the_model_reads_the_limit(service: Service, unique: str) -> None:
    limited = limited_for(service, "pydantic_ai")
    seen: list[str] = []
    for i in range(limited.limit + 1):
        if i == limited.limit:
            wait_until_listed(service, limited, limited.limit)
        script = [call("deploy", {"service": f"{unique}-{i}"}, f"l{i}")]
        app = App(service, script, url=limited.url, token=limited.token, hold_ms=1000, pending="answer")
        assert (await app.agent.run("deploy it")).output == "done"
        assert app.ran["deploy"] == []
        seen.append(app.seen[f"l{i}"])
    assert all(text.startswith("agent-judge: pending, not performed yet") for text in seen[: limited.limit]), seen
    assert limit_refusal(limited).search(seen[-1]) and "Not performed" in seen[-1], seen[-1]
