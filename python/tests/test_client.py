"""The client against the real gate service: answers as data, exactly the arguments to perform (a person's edits
included), the outcome recorded once, errors naming the field and the rule, and failing closed when agent-judge is
out of reach."""

from __future__ import annotations

import pytest

from agent_judge import (
    AsyncGateClient,
    CallRequest,
    Forward,
    GateClient,
    GateHTTPError,
    GateUnreachable,
    Pending,
    Refused,
)
from agent_judge.models import RESERVED_RUNTIMES

from .conftest import DOWN_URL, Service


def test_a_no_judge_call_is_forwarded_with_its_own_arguments_and_no_lease(service: Service, unique: str) -> None:
    with GateClient(service.url, service.token) as gate:
        answer = gate.decide({"server": "agents", "tool": "read_note", "arguments": {"path": unique}})
    assert isinstance(answer, Forward)
    assert (answer.rule, answer.arguments, answer.lease, answer.text) == ("agents.read", {"path": unique}, None, None)


def test_pending_then_approved_with_edits_forwards_the_edited_arguments_and_records_the_outcome_once(
    service: Service, unique: str
) -> None:
    gate = GateClient(service.url, service.token)
    call = CallRequest(server="agents", tool="deploy", arguments={"service": unique}, hold_ms=1000)
    held = gate.decide(call)
    assert isinstance(held, Pending), held
    assert held.waiting_for == "human" and "waiting for a person" in held.text
    service.decide(
        held.proposal_id, edits=[{"path": "parameters.arguments.service", "value": f"{unique}-canary"}]
    )
    approved = gate.decide(call)
    assert isinstance(approved, Forward), approved
    assert approved.arguments == {"service": f"{unique}-canary"}
    assert approved.lease is not None and approved.lease.edits and len(approved.lease.edits) == 1
    assert approved.text and "edited" in approved.text
    recorded = gate.report(approved.lease, "ok", "deployed")
    assert (recorded.recorded, recorded.proposal_id) == (True, held.proposal_id)
    with pytest.raises(GateHTTPError) as again:
        gate.report(approved.lease, "ok")
    assert again.value.status == 404
    status = service.status(held.proposal_id)
    assert status["status"] == "executed"
    assert status["caller"]["outcome"] == "ok"
    gate.close()


async def test_the_async_client_answers_the_same(service: Service, unique: str) -> None:
    async with AsyncGateClient(service.url, service.token) as gate:
        answer = await gate.decide({"server": "agents", "tool": "read_note", "arguments": {"path": unique}})
        assert isinstance(answer, Forward) and answer.arguments == {"path": unique}
        held = await gate.decide({"server": "agents", "tool": "deploy", "arguments": {"a": unique}, "hold_ms": 1000})
        assert isinstance(held, Pending)
        outcome = await gate.get_proposal(held.proposal_id)
        assert outcome.status == "awaiting_human"


def test_out_of_reach_is_refused_never_forwarded_and_raises_only_when_asked(service: Service) -> None:
    gate = GateClient(DOWN_URL, service.token, timeout=5)
    call = {"server": "agents", "tool": "read_note", "arguments": {}}
    answer = gate.decide(call)
    assert isinstance(answer, Refused)
    assert "could not be reached" in answer.reason and answer.text.endswith("Not performed.")
    with pytest.raises(GateUnreachable):
        gate.decide(call, raise_errors=True)


def test_a_wrong_token_is_refused_naming_the_rule(service: Service) -> None:
    gate = GateClient(service.url, "ajt_wrong")
    answer = gate.decide({"server": "agents", "tool": "read_note", "arguments": {}})
    assert isinstance(answer, Refused) and "401" in answer.reason
    with pytest.raises(GateHTTPError) as err:
        gate.decide({"server": "agents", "tool": "read_note", "arguments": {}}, raise_errors=True)
    assert (err.value.status, err.value.code) == (401, "auth")


def test_malformed_calls_are_refused_naming_the_field_here_and_at_the_service(service: Service) -> None:
    gate = GateClient(service.url, service.token)
    for runtime in RESERVED_RUNTIMES:
        answer = gate.decide({"runtime": runtime, "server": "agents", "tool": "x", "arguments": {}})
        assert isinstance(answer, Refused) and "call.runtime" in answer.reason and "reserved" in answer.reason
    # The service says the same of each (the reserved list is a refine, not in the OpenAPI document).
    for runtime in RESERVED_RUNTIMES:
        with pytest.raises(GateHTTPError) as err:
            gate._request("POST", "/v1/calls", {"runtime": runtime, "server": "agents", "tool": "x", "arguments": {}})
        assert err.value.status == 400 and "call.runtime" in err.value.error and "reserved" in err.value.error
    answer = gate.decide({"server": "agents", "tool": "x", "arguments": {}, "hold_ms": 500})
    assert isinstance(answer, Refused) and "call.hold_ms" in answer.reason
    with pytest.raises(GateHTTPError) as err:
        gate._request("POST", "/v1/calls", {"server": "agents", "arguments": {}})
    assert (err.value.status, err.value.code) == (400, "bad-input") and "call.tool" in err.value.error


def test_an_unknown_proposal_is_not_found(service: Service) -> None:
    with GateClient(service.url, service.token) as gate, pytest.raises(GateHTTPError) as err:
        gate.get_proposal("call-00000000000000000000000000000000")
    assert (err.value.status, err.value.code) == (404, "not-found")
