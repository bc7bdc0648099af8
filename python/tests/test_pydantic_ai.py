"""The Pydantic AI adapter driving a real ``Agent`` with Pydantic AI's own ``FunctionModel`` (a scripted model that
records what it was given), against the real gate service. What the user sees: how often each tool really ran and
with what, the tool result the model read, the deferred tool requests, and what the proposal recorded."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_judge.pydantic_ai import AgentJudge

from .conftest import DOWN_URL, SECRET, Service


class App:
    def __init__(self, service: Service, calls: list[ToolCallPart], url: str | None = None, **options: Any) -> None:
        self.ran: dict[str, list[dict[str, Any]]] = {"read_note": [], "deploy": [], "comment": []}
        self.seen: dict[str, str] = {}
        self.calls = calls
        ran = self.ran

        def read_note(path: str) -> str:
            """Read a note from the vault."""
            ran["read_note"].append({"path": path})
            return f"contents of {path}"

        def deploy(service: str) -> str:
            """Deploy a service to production."""
            ran["deploy"].append({"service": service})
            return f"deployed {service}"

        def comment(body: str) -> str:
            """Comment on the issue."""
            ran["comment"].append({"body": body})
            return "commented"

        self.agent = Agent(
            FunctionModel(self.model),
            tools=[read_note, deploy, comment],
            output_type=[str, DeferredToolRequests],
            # The one line an application adds:
            capabilities=[AgentJudge(url=url or service.url, token=service.token, **options)],
        )

    def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The scripted model: the queued tool calls first, then a text naming what the tools returned."""
        returns = [
            p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
        ]
        for r in returns:
            self.seen[r.tool_call_id] = r.model_response_str()
        if not returns and self.calls:
            return ModelResponse(parts=list(self.calls))
        return ModelResponse(parts=[TextPart("done")])


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCallPart:
    return ToolCallPart(tool_name=name, args=args, tool_call_id=call_id)


async def test_a_no_judge_call_runs_once(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c1")])
    result = await app.agent.run("read my note")
    assert result.output == "done"
    assert app.ran["read_note"] == [{"path": unique}]
    assert app.seen["c1"] == f"contents of {unique}"


async def test_a_call_a_person_decides_is_deferred_approved_it_runs_once(service: Service, unique: str) -> None:
    app = App(service, [call("deploy", {"service": unique}, "c2")], hold_ms=1000)
    first = await app.agent.run("deploy it")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["c2"]
    waiting = first.output.metadata["c2"]["agent_judge"]
    assert waiting["waiting_for"] == "human" and app.ran["deploy"] == []
    # The application's own approval before the person decided: asked again, still deferred, not run.
    early = await app.agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"c2": True})
    )
    assert isinstance(early.output, DeferredToolRequests) and app.ran["deploy"] == []

    service.decide(waiting["proposal_id"], "approve")
    resumed = await app.agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"c2": True})
    )
    assert resumed.output == "done"
    assert app.ran["deploy"] == [{"service": unique}]
    assert app.seen["c2"] == f"deployed {unique}"
    status = service.status(waiting["proposal_id"])
    assert status["status"] == "executed" and status["caller"]["outcome"] == "ok"


async def test_a_persons_edits_are_what_runs(service: Service, unique: str) -> None:
    app = App(service, [call("deploy", {"service": unique}, "c3")], hold_ms=1000)
    first = await app.agent.run("deploy it")
    assert isinstance(first.output, DeferredToolRequests)
    proposal = first.output.metadata["c3"]["agent_judge"]["proposal_id"]
    service.decide(proposal, edits=[{"path": "parameters.arguments.service", "value": f"{unique}-canary"}])
    await app.agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"c3": True})
    )
    assert app.ran["deploy"] == [{"service": f"{unique}-canary"}]
    assert app.seen["c3"] == f"deployed {unique}-canary"


async def test_a_denied_call_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service, [call("comment", {"body": f"key {SECRET} {unique}"}, "c4")])
    result = await app.agent.run("post the key")
    assert result.output == "done" and app.ran["comment"] == []
    assert app.seen["c4"].startswith("agent-judge REJECT (") and "Not performed" in app.seen["c4"]


async def test_with_agent_judge_down_nothing_runs(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c5")], url=DOWN_URL, timeout=5)
    await app.agent.run("read my note")
    assert app.ran["read_note"] == []
    assert "could not be reached" in app.seen["c5"] and app.seen["c5"].endswith("Not performed.")


def test_the_sync_entry_point_is_judged_too(service: Service, unique: str) -> None:
    app = App(service, [call("read_note", {"path": unique}, "c6"), call("comment", {"body": SECRET}, "c7")])
    app.agent.run_sync("read and comment")
    assert app.ran["read_note"] == [{"path": unique}] and app.ran["comment"] == []
