"""The OpenAI Agents SDK adapter driving a real ``Agent`` and ``Runner.run`` with the SDK's own scripted model
(``agents.testing.ScriptedModel``: it fails on an unexpected model call), against the real gate service. What the
user sees: how often each tool really ran and with what, the output the model was given, the interruptions (a
durable ``RunState``), and what the proposal recorded."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, RunResult, RunState, Runner, WebSearchTool, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from agent_judge.openai_agents import AgentJudgeToolError, approve_decided, with_agent_judge

from .conftest import (
    DOWN_URL,
    SECRET,
    AsyncRecording,
    Service,
    assert_one_grant_use,
    assert_recorded_raise,
    limit_refusal,
    limited_for,
    wait_until_listed,
)
from .tools import TRACKER_DOWN, Tools

set_tracing_disabled(True)


class App:
    def __init__(self, service: Service, url: str | None = None, token: str | None = None, **options: Any) -> None:
        tools = Tools()
        self.ran = tools.ran
        #: The output the model was given for each tool call, in order.
        self.seen: list[str] = []
        #: The proposals left pending (`on_pending`), in order.
        self.pending: list[str] = []
        self.model = ScriptedModel()
        base = Agent(
            name="assistant",
            instructions="Help.",
            model=self.model,
            tools=[function_tool(f) for f in tools.functions()],
        )
        # The one line an application adds:
        self.agent = with_agent_judge(
            base,
            url=url or service.url,
            token=token or service.token,
            on_pending=lambda answer, call: self.pending.append(answer.proposal_id),
            **options,
        )

    def call(self, name: str, args: dict[str, Any], call_id: str) -> None:
        self.model.enqueue([function_call(name, args, call_id=call_id)])

    def reply(self, call_id: str, text: str) -> None:
        """The model's next turn: record the output it was given for ``call_id``, then answer ``text``."""

        def respond(call: ModelCall) -> list[Any]:
            items = call.input if isinstance(call.input, list) else []
            outputs = [
                i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output" and i.get("call_id") == call_id
            ]
            assert outputs, f"the model was not given {call_id}'s output"
            out = outputs[-1]["output"]
            self.seen.append(out if isinstance(out, str) else str(out))
            return [assistant_message(text)]

        self.model.enqueue(ModelStep.respond(respond))

    async def held(self, call_id: str, service: str) -> RunResult:
        """A deploy a person decides: the run ends in its interruption, and the tool has not run."""
        self.call("deploy", {"service": service}, call_id)
        first = await Runner.run(self.agent, "deploy it")
        assert [i.name for i in first.interruptions] == ["deploy"]
        assert self.ran["deploy"] == [] and len(self.pending) == 1
        return first

    async def resumed(self, first: RunResult) -> RunResult:
        """The paused run resumed after the decision: nothing is still pending at the gate."""
        state = first.to_state()
        assert await approve_decided(self.agent, state) == 0
        return await Runner.run(self.agent, state)


async def test_a_no_judge_call_runs_once(service: Service, unique: str) -> None:
    app = App(service)
    app.call("read_note", {"path": unique}, "c1")
    app.reply("c1", "read it")
    result = await Runner.run(app.agent, "read my note")
    assert app.ran["read_note"] == [{"path": unique}]
    assert app.seen == [f"contents of {unique}"]
    assert result.final_output == "read it" and result.interruptions == []
    app.model.assert_complete()


async def test_a_call_a_person_decides_is_an_interruption_approved_it_runs_once(service: Service, unique: str) -> None:
    app = App(service, hold_ms=1000)
    first = await app.held("c2", unique)
    # The application keeps the paused run (durable: a string) while the person decides.
    saved = first.to_state().to_string()
    # Resumed before the decision: the gate still holds it, so it stays the run's interruption, not run.
    early_state = await RunState.from_string(app.agent, saved)
    assert await approve_decided(app.agent, early_state) == 1
    early = await Runner.run(app.agent, early_state)
    assert len(early.interruptions) == 1 and app.ran["deploy"] == []

    service.decide(app.pending[0], "approve")
    app.reply("c2", "done")
    state = await RunState.from_string(app.agent, saved)
    assert await approve_decided(app.agent, state) == 0
    resumed = await Runner.run(app.agent, state)
    assert resumed.interruptions == []
    assert app.ran["deploy"] == [{"service": unique}]
    assert app.seen == [f"deployed {unique}"] and resumed.final_output == "done"
    status = service.status(app.pending[0])
    assert status["status"] == "executed" and status["caller"]["outcome"] == "ok"
    # The proposal is the token's agent's: nothing in a tool call can name another.
    assert status["proposal"]["agent_id"] == "@agent"
    app.model.assert_complete()


async def test_a_persons_edits_are_what_runs(service: Service, unique: str) -> None:
    app = App(service, hold_ms=1000)
    first = await app.held("c3", unique)
    service.decide(app.pending[0], edits=[{"path": "parameters.arguments.service", "value": f"{unique}-canary"}])
    app.reply("c3", "done")
    await app.resumed(first)
    assert app.ran["deploy"] == [{"service": f"{unique}-canary"}]
    assert app.seen == [f"deployed {unique}-canary"]


async def test_a_denied_call_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service)
    app.call("comment", {"body": f"key {SECRET} {unique}"}, "c4")
    app.reply("c4", "could not")
    result = await Runner.run(app.agent, "post the key")
    assert app.ran["comment"] == [] and result.interruptions == []
    assert app.seen[0].startswith("agent-judge REJECT (") and "Not performed" in app.seen[0]


async def test_a_person_rejecting_it_means_it_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service, hold_ms=1000)
    first = await app.held("c7", unique)
    service.decide(app.pending[0], "reject")
    app.reply("c7", "rejected")
    resumed = await app.resumed(first)
    assert app.ran["deploy"] == [] and resumed.interruptions == [] and resumed.final_output == "rejected"
    assert app.seen[0].startswith("agent-judge REJECT (human:scott") and "Not performed" in app.seen[0]
    assert service.status(app.pending[0])["status"] == "rejected"
    app.model.assert_complete()


async def test_a_call_asked_to_clarify_never_runs_and_the_model_reads_what_is_missing(
    service: Service, unique: str
) -> None:
    app = App(service)
    app.call("open_pr", {"branch": f"f-{unique}"}, "c8")
    app.reply("c8", "will cite")
    result = await Runner.run(app.agent, "open the pr")
    assert app.ran["open_pr"] == [] and result.interruptions == [] and app.pending == []
    assert app.seen[0].startswith("agent-judge CLARIFY: cited_evidence is empty") and "Not performed" in app.seen[0]
    app.model.assert_complete()


async def test_the_sdks_own_approve_cannot_run_a_call_the_gate_has_not_forwarded(
    service: Service, unique: str
) -> None:
    app = App(service, hold_ms=1000)
    app.call("deploy", {"service": unique}, "c5")
    first = await Runner.run(app.agent, "deploy it")
    state = first.to_state()
    state.approve(first.interruptions[0])
    app.reply("c5", "waiting")
    await Runner.run(app.agent, state)
    assert app.ran["deploy"] == []
    assert app.seen[0].startswith("agent-judge: pending, not performed yet.")


async def test_with_agent_judge_down_nothing_runs(service: Service, unique: str) -> None:
    app = App(service, url=DOWN_URL, timeout=5)
    app.call("read_note", {"path": unique}, "c6")
    app.reply("c6", "sorry")
    await Runner.run(app.agent, "read my note")
    assert app.ran["read_note"] == []
    assert "could not be reached" in app.seen[0] and app.seen[0].endswith("Not performed.")


def test_a_hosted_tool_it_cannot_hold_is_refused(service: Service) -> None:
    with pytest.raises(AgentJudgeToolError, match="WebSearchTool"):
        with_agent_judge([WebSearchTool()], url=service.url, token=service.token)


async def test_a_tool_that_fails_is_recorded_as_it_happened(service: Service, unique: str) -> None:
    gate = AsyncRecording(service.url, service.token)
    app = App(service, async_client=gate)
    body = f"{TRACKER_DOWN} ({unique})"
    app.call("comment", {"body": body}, "c20")
    app.reply("c20", "it failed")
    result = await Runner.run(app.agent, "comment on the issue")
    assert result.final_output == "it failed" and app.ran["comment"] == [{"body": body}]
    # The model reads the SDK's own error text (its default failure_error_function), as without agent-judge...
    assert app.seen == ["An error occurred while running the tool."]
    # ...and the proposal records that the tool raised, not `ok`.
    assert_recorded_raise(service, gate.answers, body)
    app.model.assert_complete()


async def test_a_grant_covers_the_identical_call_and_holds_another(service: Service, unique: str) -> None:
    first = App(service, hold_ms=1000)
    held = await first.held("g1", unique)
    service.decide(first.pending[0], "approve")
    # The person grants calls identical to this one; the approved one runs.
    grant_id = service.grant_identical_calls(first.pending[0])
    first.reply("g1", "done")
    await first.resumed(held)
    assert first.ran["deploy"] == [{"service": unique}]
    # The identical call again (another run): the grant covers it, it runs at once.
    again = App(service, hold_ms=1000)
    again.call("deploy", {"service": unique}, "g2")
    again.reply("g2", "done")
    result = await Runner.run(again.agent, "deploy it again")
    assert result.interruptions == [] and again.ran["deploy"] == [{"service": unique}]
    assert again.seen == [f"deployed {unique}"]
    # Another service: not what the grant says, the SDK's interruption, not run.
    other = App(service, hold_ms=1000)
    await other.held("g3", f"{unique}-b")
    assert_one_grant_use(service, grant_id, {"service": unique})


async def test_past_the_proposal_limit_nothing_runs_and_the_model_reads_the_limit(service: Service, unique: str) -> None:
    limited = limited_for(service, "openai_agents")
    app = App(service, url=limited.url, token=limited.token, hold_ms=1000, pending="answer")
    for i in range(limited.limit + 1):
        if i == limited.limit:
            wait_until_listed(service, limited, limited.limit)
        app.call("deploy", {"service": f"{unique}-{i}"}, f"l{i}")
        app.reply(f"l{i}", "not now")
        result = await Runner.run(app.agent, "deploy it")
        assert result.interruptions == []
    assert app.ran["deploy"] == []
    assert all(text.startswith("agent-judge: pending, not performed yet") for text in app.seen[: limited.limit])
    assert limit_refusal(limited).search(app.seen[-1]) and "Not performed" in app.seen[-1], app.seen[-1]
    app.model.assert_complete()
