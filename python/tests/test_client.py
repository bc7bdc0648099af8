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


def test_a_proposal_naming_no_agent_is_the_tokens_and_one_naming_another_agent_is_refused(
    service: Service, unique: str
) -> None:
    proposal = {
        "action_type": "memory_write",
        "target": {},
        "parameters": {"content": f"remember the milk {unique}"},
        "justification": "the user asked to remember it",
        "cited_evidence": [],
        "scope_claim": {},
    }
    with GateClient(service.url, service.token) as gate:
        with pytest.raises(GateHTTPError) as forged:
            gate.submit_proposal({**proposal, "agent_id": "@mallory"}, wait_ms=1000)
        assert (forged.value.status, forged.value.code) == (403, "agent")
        assert forged.value.error.startswith('proposal.agent_id: "@mallory" is not the agent this token belongs to')
        done = gate.submit_proposal(proposal, wait_ms=20_000)
        assert done.status == "executed" and done.verdict is not None and done.verdict.verdict == "APPROVE"
        read = gate.get_proposal(done.proposal_id, wait_ms=1000)
        assert (read.proposal_id, read.workflow_id, read.status) == (done.proposal_id, done.workflow_id, "executed")
        with pytest.raises(GateHTTPError) as again:
            gate.submit_proposal(proposal)
        assert (again.value.status, again.value.code) == (409, "duplicate")
    recorded = service.status(done.proposal_id)["proposal"]
    assert recorded["agent_id"] == "@agent" and recorded["parameters"] == proposal["parameters"]


async def test_a_clarify_is_answered_and_judged_again_waiting_until_it_settles(service: Service, unique: str) -> None:
    proposal = {
        "action_type": "forgejo_pr_create",
        "target": {"repo": "a/b", "branch": f"f-{unique}", "base": "main"},
        "parameters": {"files_changed": ["src/a.ts"], "estimated_diff_lines": 3},
        "justification": "the pull request the ticket asks for",
        "cited_evidence": [],
        "scope_claim": {"files_only": ["src/"], "max_lines": 10},
    }
    evidence = [{"type": "task", "source": f"ops ticket {unique}"}]
    async with AsyncGateClient(service.url, service.token) as gate:
        asked = await gate.submit_proposal(proposal, wait_ms=20_000)
        assert asked.status == "awaiting_clarification"
        assert asked.verdict is not None
        assert (asked.verdict.verdict, asked.verdict.rule) == ("CLARIFY", "evidence.missing")
        assert (await gate.get_proposal(asked.proposal_id, wait_ms=1000)).status == "awaiting_clarification"
        # A clarification that is not one names the field, and changes nothing.
        with pytest.raises(GateHTTPError) as bad:
            await gate.clarify(asked.proposal_id, {"mood": "please"})
        assert (bad.value.status, bad.value.code) == (400, "bad-input") and "mood" in bad.value.error
        answered = await gate.clarify(asked.proposal_id, {"cited_evidence": evidence})
        # Judged again with the evidence: no model here, so a person decides (spec.judge.withoutModel: escalate).
        assert answered.status == "awaiting_human" and answered.proposal_id == asked.proposal_id
        assert [v.verdict for v in answered.verdicts][0] == "CLARIFY"
        settled = await gate.get_proposal(asked.proposal_id, wait_ms=5000)
        assert settled.status == "awaiting_human"
    status = service.status(asked.proposal_id)
    assert status["clarify_rounds"] == 1 and status["proposal"]["cited_evidence"] == evidence
    assert status["proposal"]["agent_id"] == "@agent"


def test_an_unknown_proposal_is_not_found(service: Service) -> None:
    with GateClient(service.url, service.token) as gate, pytest.raises(GateHTTPError) as err:
        gate.get_proposal("call-00000000000000000000000000000000")
    assert (err.value.status, err.value.code) == (404, "not-found")
