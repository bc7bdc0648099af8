"""The LangChain adapter driving a real ``create_agent`` agent (LangGraph underneath, an ``InMemorySaver``
checkpointer) with LangChain's own scripted chat model, against the real gate service. What the user sees: how often
each tool really ran and with what, the ToolMessage the model got back, the interrupts, and what the proposal
recorded."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agent_judge.langchain import AgentJudgeMiddleware

from .conftest import (
    DOWN_URL,
    SECRET,
    Recording,
    Service,
    assert_one_grant_use,
    assert_recorded_raise,
    assert_recorded_tool_error,
    limit_refusal,
    limited_for,
    wait_until_listed,
)
from .tools import TRACKER_DOWN, TRACKER_REFUSED, Tools


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, answering the queued messages in order (tool calls included)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self


class App:
    """The application: its tools (each counting how often it really ran, and with what) and its agent."""

    def __init__(
        self,
        service: Service,
        script: list[AIMessage],
        url: str | None = None,
        token: str | None = None,
        refuse: Any = None,
        **options: Any,
    ) -> None:
        tools = Tools(refuse)
        self.ran = tools.ran
        self.model = ScriptedChatModel(messages=iter(script))
        self.thread = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
        self.agent = create_agent(
            self.model,
            # A ToolException a tool raises is its error answer (a ToolMessage with status "error"), as LangChain does.
            [_answering_errors(tool(f)) for f in tools.functions()],
            # The one line an application adds:
            middleware=[AgentJudgeMiddleware(url=url or service.url, token=token or service.token, **options)],
            checkpointer=InMemorySaver(),
        )

    def ask(self, text: str) -> dict[str, Any]:
        result: dict[str, Any] = self.agent.invoke({"messages": [{"role": "user", "content": text}]}, self.thread)
        return result

    def resume(self) -> dict[str, Any]:
        # The resume value is never read: only agent-judge's approvers decide.
        result: dict[str, Any] = self.agent.invoke(Command(resume="approved, go ahead"), self.thread)
        return result


def _answering_errors(t: BaseTool) -> BaseTool:
    t.handle_tool_error = True
    return t


def _tool_exception(body: str) -> str:
    raise ToolException(body)


def calls(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def tool_output(result: dict[str, Any], call_id: str) -> ToolMessage:
    messages: list[BaseMessage] = result["messages"]
    found = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
    assert found, f"the model was not given {call_id}'s output"
    return found[-1]


def interrupts(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [i.value for i in result.get("__interrupt__", [])]


def test_a_no_judge_call_runs_once(service: Service, unique: str) -> None:
    app = App(service, [calls("read_note", {"path": unique}, "c1"), AIMessage("read it")])
    result = app.ask("read my note")
    assert app.ran["read_note"] == [{"path": unique}]
    assert tool_output(result, "c1").text == f"contents of {unique}"
    assert interrupts(result) == []
    assert result["messages"][-1].text == "read it"


def test_a_call_a_person_decides_is_an_interrupt_approved_it_runs_once(service: Service, unique: str) -> None:
    app = App(service, [calls("deploy", {"service": unique}, "c2"), AIMessage("done")], hold_ms=1000)
    first = app.ask("deploy it")
    [paused] = interrupts(first)
    assert paused["type"] == "agent-judge" and paused["waiting_for"] == "human" and paused["tool"] == "deploy"
    assert paused["arguments"] == {"service": unique} and paused["tool_call_id"] == "c2"
    assert f"agent-judge decide {paused['proposal_id']} approve|reject" in paused["message"]
    assert app.ran["deploy"] == []
    # Resumed before the decision: paused again, still not run (the resume value decides nothing).
    early = app.resume()
    assert [i["proposal_id"] for i in interrupts(early)] == [paused["proposal_id"]]
    assert app.ran["deploy"] == []

    service.decide(paused["proposal_id"], "approve")
    resumed = app.resume()
    assert interrupts(resumed) == []
    assert app.ran["deploy"] == [{"service": unique}]
    assert tool_output(resumed, "c2").text == f"deployed {unique}"
    assert resumed["messages"][-1].text == "done"
    status = service.status(paused["proposal_id"])
    assert status["status"] == "executed" and status["caller"]["outcome"] == "ok"
    # The proposal is the token's agent's: nothing in a tool call can name another.
    assert status["proposal"]["agent_id"] == "@agent"


def test_a_persons_edits_are_what_runs(service: Service, unique: str) -> None:
    app = App(service, [calls("deploy", {"service": unique}, "c3"), AIMessage("done")], hold_ms=1000)
    [paused] = interrupts(app.ask("deploy it"))
    service.decide(
        paused["proposal_id"], edits=[{"path": "parameters.arguments.service", "value": f"{unique}-canary"}]
    )
    app.resume()
    assert app.ran["deploy"] == [{"service": f"{unique}-canary"}]
    assert service.status(paused["proposal_id"])["caller"]["outcome"] == "ok"


def test_a_denied_call_never_runs_and_the_model_reads_why(service: Service, unique: str) -> None:
    app = App(service, [calls("comment", {"body": f"key {SECRET} {unique}"}, "c4"), AIMessage("could not")])
    result = app.ask("post the key")
    assert app.ran["comment"] == []
    out = tool_output(result, "c4")
    assert out.status == "error" and out.text.startswith("agent-judge REJECT (") and "Not performed" in out.text
    assert interrupts(result) == []


def test_a_person_rejecting_it_means_it_never_runs(service: Service, unique: str) -> None:
    app = App(service, [calls("deploy", {"service": unique}, "c5"), AIMessage("ok")], hold_ms=1000)
    [paused] = interrupts(app.ask("deploy it"))
    service.decide(paused["proposal_id"], "reject")
    resumed = app.resume()
    assert app.ran["deploy"] == [] and interrupts(resumed) == []
    out = tool_output(resumed, "c5")
    assert out.status == "error" and out.text.startswith("agent-judge REJECT (human:scott")
    assert "Not performed" in out.text
    assert service.status(paused["proposal_id"])["status"] == "rejected"


def test_a_call_asked_to_clarify_never_runs_and_the_model_reads_what_is_missing(service: Service, unique: str) -> None:
    app = App(service, [calls("open_pr", {"branch": f"f-{unique}"}, "c8"), AIMessage("will cite")])
    result = app.ask("open the pr")
    assert app.ran["open_pr"] == [] and interrupts(result) == []
    out = tool_output(result, "c8")
    assert out.status == "error" and out.text.startswith("agent-judge CLARIFY: cited_evidence is empty")
    assert "Not performed" in out.text


def test_with_agent_judge_down_nothing_runs(service: Service, unique: str) -> None:
    app = App(service, [calls("read_note", {"path": unique}, "c6"), AIMessage("sorry")], url=DOWN_URL, timeout=5)
    result = app.ask("read my note")
    assert app.ran["read_note"] == []
    out = tool_output(result, "c6")
    assert out.status == "error" and "could not be reached" in out.text and out.text.endswith("Not performed.")


def test_pending_answer_mode_tells_the_model_to_retry(service: Service, unique: str) -> None:
    app = App(
        service, [calls("deploy", {"service": unique}, "c7"), AIMessage("later")], hold_ms=1000, pending="answer"
    )
    result = app.ask("deploy it")
    assert interrupts(result) == [] and app.ran["deploy"] == []
    assert "pending, not performed yet" in tool_output(result, "c7").text


async def test_the_async_path_runs_and_denies_alike(service: Service, unique: str) -> None:
    app = App(
        service,
        [
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "read_note", "args": {"path": unique}, "id": "a1", "type": "tool_call"},
                    {"name": "comment", "args": {"body": f"{SECRET} {unique}"}, "id": "a2", "type": "tool_call"},
                ],
            ),
            AIMessage("done"),
        ],
    )
    result = await app.agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}, app.thread)
    assert app.ran["read_note"] == [{"path": unique}] and app.ran["comment"] == []
    assert tool_output(result, "a1").text == f"contents of {unique}"
    assert "REJECT" in tool_output(result, "a2").text


def test_a_tool_that_fails_is_recorded_as_it_happened(service: Service, unique: str) -> None:
    gate = Recording(service.url, service.token)
    body = f"{TRACKER_DOWN} ({unique})"
    app = App(service, [calls("comment", {"body": body}, "c10"), AIMessage("it failed")], client=gate)
    with pytest.raises(RuntimeError):  # the tool raised, and the run with it
        app.ask("comment on the issue")
    assert app.ran["comment"] == [{"body": body}]
    assert_recorded_raise(service, gate.answers, body)


def test_a_tools_error_answer_is_recorded_as_a_tool_error(service: Service, unique: str) -> None:
    gate = Recording(service.url, service.token)
    body = f"{TRACKER_REFUSED} ({unique})"
    script = [calls("comment", {"body": body}, "c11"), AIMessage("it was refused")]
    app = App(service, script, client=gate, refuse=_tool_exception)
    result = app.ask("comment on the issue")
    assert app.ran["comment"] == [{"body": body}]
    out = tool_output(result, "c11")
    assert out.status == "error" and body in out.text  # the model reads the tool's own error
    assert result["messages"][-1].text == "it was refused"
    assert_recorded_tool_error(service, gate.answers, body)


def test_a_grant_covers_the_identical_call_and_holds_another(service: Service, unique: str) -> None:
    first = App(service, [calls("deploy", {"service": unique}, "g1"), AIMessage("done")], hold_ms=1000)
    [paused] = interrupts(first.ask("deploy it"))
    service.decide(paused["proposal_id"], "approve")
    # The person grants calls identical to this one; the approved one runs.
    grant_id = service.grant_identical_calls(paused["proposal_id"])
    first.resume()
    assert first.ran["deploy"] == [{"service": unique}]
    # The identical call again (another thread): the grant covers it, it runs at once.
    again = App(service, [calls("deploy", {"service": unique}, "g2"), AIMessage("done")], hold_ms=1000)
    result = again.ask("deploy it again")
    assert interrupts(result) == [] and again.ran["deploy"] == [{"service": unique}]
    assert tool_output(result, "g2").text == f"deployed {unique}"
    # Another service: not what the grant says, held for a person.
    other = App(service, [calls("deploy", {"service": f"{unique}-b"}, "g3"), AIMessage("done")], hold_ms=1000)
    [held] = interrupts(other.ask("deploy the other"))
    assert held["waiting_for"] == "human" and other.ran["deploy"] == []
    assert_one_grant_use(service, grant_id, {"service": unique})


def test_past_the_proposal_limit_nothing_runs_and_the_model_reads_the_limit(service: Service, unique: str) -> None:
    limited = limited_for(service, "langchain")
    seen: list[str] = []
    for i in range(limited.limit + 1):
        if i == limited.limit:
            wait_until_listed(service, limited, limited.limit)
        script = [calls("deploy", {"service": f"{unique}-{i}"}, f"l{i}"), AIMessage("not now")]
        app = App(service, script, url=limited.url, token=limited.token, hold_ms=1000, pending="answer")
        result = app.ask("deploy it")
        assert app.ran["deploy"] == [] and interrupts(result) == []
        seen.append(tool_output(result, f"l{i}").text)
    assert all("pending, not performed yet" in text for text in seen[: limited.limit]), seen
    assert limit_refusal(limited).search(seen[-1]) and "Not performed" in seen[-1], seen[-1]
