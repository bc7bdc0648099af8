"""The CrewAI adapter driving a real ``Crew`` (one agent, one task) whose LLM is CrewAI's own OpenAI provider pointed at
a scripted OpenAI-compatible server on loopback (the real Chat Completions wire protocol, no network), against the
real gate service. Runs in CrewAI's own venv (``.agent-judge/python-crewai``). What the user sees: how often each tool
really ran and with what, the tool result the model read, and what the proposal recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool
from crewai.tools.tool_failure import ToolFailure

from agent_judge.crewai import with_agent_judge
from agent_judge.models import Pending

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


class ScriptedModel:
    """An OpenAI Chat Completions server: answers each request with the next scripted tool call, after the tool
    results come back; then a final text. Records every tool result the model was given. A call left unanswered or a
    request after the script ended fails the test."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = list(calls)
        self.seen: dict[str, str] = {}
        self.finals = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                answer = model.answer(body["messages"])
                raw = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        for m in messages:
            if m.get("role") == "tool":
                self.seen[m["tool_call_id"]] = str(m.get("content"))
        issued = len(self.seen)
        message: dict[str, Any]
        if issued < len(self.calls) and all(f"c{i}" in self.seen for i in range(issued)):
            name, args = self.calls[issued]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{issued}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                ],
            }
            finish = "tool_calls"
        else:
            self.finals += 1
            message, finish = {"role": "assistant", "content": "done"}, "stop"
        return {
            "id": f"chatcmpl-{issued}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class App:
    def __init__(
        self,
        service: Service,
        model: ScriptedModel,
        url: str | None = None,
        token: str | None = None,
        refuse: Any = None,
        **options: Any,
    ) -> None:
        self.tools = Tools(refuse)
        self.ran = self.tools.ran
        llm = LLM(model="openai/scripted", base_url=model.url, api_key="sk-test-not-used", max_retries=0)
        agent = Agent(
            role="operator",
            goal="do what the user asks",
            backstory="an operator with tools",
            llm=llm,
            # The one line an application adds:
            tools=with_agent_judge(
                [tool(f) for f in self.tools.functions()],
                url=url or service.url,
                token=token or service.token,
                **options,
            ),
            max_iter=6,
        )
        self.crew = Crew(agents=[agent], tasks=[Task(description="do it", expected_output="done", agent=agent)])

    def run(self) -> str:
        return str(self.crew.kickoff())


@pytest.fixture
def scripted() -> Iterator[Callable[[list[tuple[str, dict[str, Any]]]], ScriptedModel]]:
    made: list[ScriptedModel] = []

    def make(calls: list[tuple[str, dict[str, Any]]]) -> ScriptedModel:
        made.append(ScriptedModel(calls))
        return made[-1]

    yield make
    for m in made:
        m.close()
        assert len(m.seen) == len(m.calls), f"scripted calls left unanswered: {m.calls[len(m.seen):]}"


def test_a_no_judge_call_runs_once(service: Service, unique: str, scripted: Any) -> None:
    model = scripted([("read_note", {"path": unique})])
    app = App(service, model)
    assert app.run() == "done"
    assert app.ran["read_note"] == [{"path": unique}]
    assert f"contents of {unique}" in model.seen["c0"]


def test_a_held_call_runs_only_after_approval_and_once(service: Service, unique: str, scripted: Any) -> None:
    held: list[Pending] = []
    ran_when_held: list[int] = []
    model = scripted([("deploy", {"service": unique}), ("deploy", {"service": unique})])

    def approve(answer: Pending, _call: Any) -> None:
        held.append(answer)
        ran_when_held.append(len(app.ran["deploy"]))
        service.decide(answer.proposal_id, "approve")

    app = App(service, model, hold_ms=1000, on_pending=approve)
    app.run()
    assert len(held) == 1 and ran_when_held == [0]
    assert model.seen["c0"].startswith("agent-judge: pending, not performed yet.")
    assert app.ran["deploy"] == [{"service": unique}]
    assert f"deployed {unique}" in model.seen["c1"]
    status = service.status(held[0].proposal_id)
    assert status["status"] == "executed" and status["caller"]["outcome"] == "ok"
    # The proposal is the token's agent's: nothing in a tool call can name another.
    assert status["proposal"]["agent_id"] == "@agent"


def test_a_persons_edits_are_what_runs(service: Service, unique: str, scripted: Any) -> None:
    model = scripted([("deploy", {"service": unique}), ("deploy", {"service": unique})])

    def edit(answer: Pending, _call: Any) -> None:
        service.decide(answer.proposal_id, edits=[{"path": "parameters.arguments.service", "value": f"{unique}-b"}])

    app = App(service, model, hold_ms=1000, on_pending=edit)
    app.run()
    assert app.ran["deploy"] == [{"service": f"{unique}-b"}]
    assert f"deployed {unique}-b" in model.seen["c1"]


def test_a_denied_call_never_runs_and_the_model_reads_why(service: Service, unique: str, scripted: Any) -> None:
    model = scripted([("comment", {"body": f"key {SECRET} {unique}"})])
    app = App(service, model)
    app.run()
    assert app.ran["comment"] == []
    assert model.seen["c0"].startswith("agent-judge REJECT (") and "Not performed" in model.seen["c0"]


def test_with_agent_judge_down_nothing_runs(service: Service, unique: str, scripted: Any) -> None:
    model = scripted([("read_note", {"path": unique})])
    app = App(service, model, url=DOWN_URL, timeout=5)
    app.run()
    assert app.ran["read_note"] == []
    assert "could not be reached" in model.seen["c0"] and "Not performed" in model.seen["c0"]


def test_a_tool_that_fails_is_recorded_as_it_happened(service: Service, unique: str, scripted: Any) -> None:
    body = f"{TRACKER_DOWN} ({unique})"
    reported: list[str] = []
    model = scripted([("comment", {"body": body})])
    gate = Recording(service.url, service.token)
    app = App(service, model, client=gate, on_report_error=lambda err, _c: reported.append(str(err)))
    app.run()
    assert app.ran["comment"] == [{"body": body}] and reported == []
    assert TRACKER_DOWN in model.seen["c0"]  # CrewAI tells the model the tool's error
    assert_recorded_raise(service, gate.answers, body)


def test_a_tools_error_answer_is_recorded_as_a_tool_error(service: Service, unique: str, scripted: Any) -> None:
    body = f"{TRACKER_REFUSED} ({unique})"
    model = scripted([("comment", {"body": body})])
    gate = Recording(service.url, service.token)
    app = App(service, model, client=gate, refuse=lambda text: ToolFailure(message=text, code="refused"))
    app.run()
    assert app.ran["comment"] == [{"body": body}]
    assert body in model.seen["c0"]  # the model reads the tool's own failure, as CrewAI renders it
    assert_recorded_tool_error(service, gate.answers, body)


def test_a_grant_covers_the_identical_call_and_holds_another(service: Service, unique: str, scripted: Any) -> None:
    granted: list[str] = []

    def approve_and_grant(answer: Pending, _call: Any) -> None:
        service.decide(answer.proposal_id, "approve")
        # The person grants calls identical to this one; the approved one runs when the model calls it again.
        granted.append(service.grant_identical_calls(answer.proposal_id))

    first = App(service, scripted([("deploy", {"service": unique})] * 2), hold_ms=1000, on_pending=approve_and_grant)
    first.run()
    assert first.ran["deploy"] == [{"service": unique}] and len(granted) == 1
    # Another crew: the identical call is covered and runs at once; another service is held for a person.
    held: list[Pending] = []
    model = scripted([("deploy", {"service": unique}), ("deploy", {"service": f"{unique}-b"})])
    again = App(service, model, hold_ms=1000, on_pending=lambda answer, _c: held.append(answer))
    again.run()
    assert again.ran["deploy"] == [{"service": unique}] and f"deployed {unique}" in model.seen["c0"]
    assert [h.waiting_for for h in held] == ["human"]
    assert model.seen["c1"].startswith("agent-judge: pending, not performed yet.")
    assert_one_grant_use(service, granted[0], {"service": unique})


def test_past_the_proposal_limit_nothing_runs_and_the_model_reads_the_limit(
    service: Service, unique: str, scripted: Any
) -> None:
    limited = limited_for(service, "crewai")
    within = scripted([("deploy", {"service": f"{unique}-{i}"}) for i in range(limited.limit)])
    first = App(service, within, url=limited.url, token=limited.token, hold_ms=1000)
    first.run()
    assert all(text.startswith("agent-judge: pending, not performed yet") for text in within.seen.values())
    wait_until_listed(service, limited, limited.limit)
    past = scripted([("deploy", {"service": f"{unique}-past"})])
    second = App(service, past, url=limited.url, token=limited.token, hold_ms=1000)
    second.run()
    assert first.ran["deploy"] == [] and second.ran["deploy"] == []
    assert limit_refusal(limited).search(past.seen["c0"]) and "Not performed" in past.seen["c0"], past.seen["c0"]
