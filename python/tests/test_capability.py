"""The Python verifier of capability tokens against tokens agent-judge's own TypeScript issuer signed: the control
endpoint signs claims with ``signCapability`` and computes digests with ``actionDigest``; the last test takes the
token of a proposal the running system approved and redeems it through its workflow after Python verified it."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from agent_judge import AsyncGateClient, GateClient
from agent_judge.capability import (
    CapabilityRefused,
    CapabilityVerifier,
    action_digest,
    aredeem,
    executor_audience,
    mcp_tool_call_digest,
    redeem,
    verify_capability,
)

from .conftest import Service

ACTION = {"action_type": "issue_comment", "target": {"repo": "a/b", "issue": 1}, "parameters": {"body": "hi"}}


def mint(service: Service, **body: Any) -> tuple[str, dict[str, str], dict[str, Any]]:
    answer = service.ask("/capability/mint", body)
    return answer["token"], answer["issuers"], answer["claims"]


def refusal(token: str, issuers: dict[str, str], **expect: Any) -> str:
    with pytest.raises(CapabilityRefused) as err:
        verify_capability(token, issuers=issuers, **expect)
    return err.value.code


def test_a_token_agent_judge_signed_verifies_with_every_expectation_and_its_claims(service: Service) -> None:
    digest = action_digest(ACTION)
    token, issuers, claims = mint(service, claims={"action_sha256": digest})
    verified = verify_capability(
        token,
        issuers=issuers,
        audience=executor_audience("issue_comment"),
        workflow_id="call-python-capability",
        action_sha256=digest,
    )
    assert verified.kid == "python-tests"
    assert verified.claims.__dict__ == claims


def _value(rng: random.Random, depth: int) -> Any:
    """A JSON value with what canonical JSON must agree on: key order beyond the BMP, escapes, floats, big numbers."""
    pick = rng.randrange(9 if depth < 3 else 6)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice([0, -1, 7, 2**53 - 1, -(2**31), 10**15])
    if pick == 3:
        return rng.choice([0.5, -1.25, 1e21, 1e-7, 123456.789, 1.0, -0.0, 5e-324, 1.7976931348623157e308])
    if pick in (4, 5):
        alphabet = ["a", "Z", "é", "\u2028", '"', "\\", "\n", "\x00", "\x1f", "😀", "\ufffd", "\ue000", " ", "/"]
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
    if pick in (6, 7):
        keys = ["a", "B", "é", "😀", "\ue000", "", "_agent_judge", "10", "9"]
        return {rng.choice(keys) + str(rng.randrange(3)): _value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_generated_actions_have_the_digest_agent_judge_computes(service: Service) -> None:
    rng = random.Random(39)
    actions = [
        {"action_type": f"t{i}", "target": _value(rng, 1), "parameters": _value(rng, 0) or {}} for i in range(300)
    ]
    theirs = service.ask("/capability/digests", {"actions": actions})
    mismatched = [a for a, d in zip(actions, theirs) if action_digest(a) != d]
    assert mismatched == []


def test_the_mcp_tool_call_digest_leaves_out_the_proxys_argument_and_nothing_else() -> None:
    base = mcp_tool_call_digest("write", "h" * 64, {"path": "a"})
    assert mcp_tool_call_digest("write", "h" * 64, {"path": "a", "_agent_judge": {"justification": "x"}}) == base
    assert mcp_tool_call_digest("write", "h" * 64, {"path": "b"}) != base
    assert mcp_tool_call_digest("write", "i" * 64, {"path": "a"}) != base


def test_wrong_audience_workflow_action_and_expired_tokens_are_refused(service: Service) -> None:
    digest = action_digest(ACTION)
    token, issuers, _ = mint(service, claims={"action_sha256": digest})
    assert refusal(token, issuers, audience="executor:exec") == "audience"
    assert refusal(token, issuers, workflow_id="call-another") == "workflow"
    other = action_digest({**ACTION, "parameters": {"body": "hi!"}})
    assert refusal(token, issuers, action_sha256=other) == "action"
    assert refusal(token, issuers, now=datetime.now(timezone.utc) + timedelta(minutes=2)) == "expired"
    past = datetime.now(timezone.utc) - timedelta(minutes=5)
    expired, _, _ = mint(
        service,
        claims={"iat": past.isoformat().replace("+00:00", "Z"), "exp": (past + timedelta(minutes=1)).isoformat()},
    )
    assert refusal(expired, issuers) == "expired"


def test_every_tampered_byte_of_a_token_is_refused(service: Service) -> None:
    token, issuers, _ = mint(service)
    verify_capability(token, issuers=issuers)
    rng = random.Random(3939)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    positions = [len("v4.public.") + i for i in range(len(token) - len("v4.public."))]
    for at in rng.sample(positions, 150):
        if token[at] == ".":
            continue
        changed = token[:at] + rng.choice([c for c in alphabet if c != token[at]]) + token[at + 1 :]
        assert refusal(changed, issuers) in {"signature", "malformed", "unknown-key"}, changed


def test_foreign_keys_formats_and_claims_are_refused(service: Service) -> None:
    token, issuers, _ = mint(service)
    head, body, footer = token.rsplit(".", 2)[0], token.split(".")[2], token.split(".")[3]
    unlisted, _, _ = mint(service, unlisted=True)
    assert refusal(unlisted, issuers) == "signature"
    assert refusal(token, {"someone-else": next(iter(issuers.values()))}) == "unknown-key"
    assert refusal(token, {"python-tests": "A" * 43}) == "unknown-key"  # the all-zero (small-order) point
    assert refusal(token.replace("v4.public.", "v3.public.", 1), issuers) == "unsupported"
    assert refusal(token.replace("v4.public.", "v4.local.", 1), issuers) == "unsupported"
    assert refusal(f"{head}.{body}", issuers) == "malformed"  # no footer, so no key id
    assert refusal(f"{head}.{body}.{footer}.", issuers) == "malformed"
    assert refusal(f"v4.public.{body}=.{footer}", issuers) == "malformed"
    assert refusal("", issuers) == "malformed"
    for claims, why in [
        ({"exp": "tomorrow"}, "exp"),
        ({"iat": "2026-12-07 10:00:00Z"}, "iat"),
        ({"action_sha256": "A" * 64}, "action_sha256"),
        ({"sub": ""}, "sub"),
        ({"aud": 7}, "aud"),
    ]:
        bad, _, _ = mint(service, claims=claims)
        with pytest.raises(CapabilityRefused) as err:
            verify_capability(bad, issuers=issuers)
        assert err.value.code == "claims" and why in err.value.reason


def test_a_verifier_accepts_a_token_once(service: Service) -> None:
    digest = action_digest(ACTION)
    token, issuers, _ = mint(service, claims={"action_sha256": digest})
    verifier = CapabilityVerifier(issuers, executor_audience("issue_comment"))
    assert verifier.use(token, digest).claims.action_sha256 == digest
    with pytest.raises(CapabilityRefused) as again:
        verifier.use(token, digest)
    assert again.value.code == "redeemed"
    with pytest.raises(CapabilityRefused) as wrong:
        CapabilityVerifier(issuers, executor_audience("issue_comment")).use(token, action_digest({**ACTION, "target": {}}))
    assert wrong.value.code == "action"


async def test_the_token_of_an_approved_proposal_verifies_here_and_redeems_once_at_its_workflow(
    service: Service, unique: str
) -> None:
    proposal = {
        "action_type": "issue_comment",
        "target": {"repo": "a/b", "issue": 1},
        "parameters": {"body": f"Thanks, verified from Python {unique}."},
        "justification": "the user asked to thank the reporter",
        "cited_evidence": [],
        "scope_claim": {},
    }
    with GateClient(service.url, service.token) as gate:
        approved = gate.submit_proposal(proposal, wait_ms=20_000)
    assert approved.status == "approved", approved
    capability: dict[str, Any] = approved.model_extra["capability"]  # type: ignore[index]
    issuers = service.ask("/capability/issuers", {})
    status = service.status(approved.proposal_id)
    recorded = status["proposal"]
    digest = action_digest(recorded)
    assert digest == action_digest(proposal) == status["capability"]["action_sha256"]
    verifier = CapabilityVerifier(issuers, capability["audience"])
    verified = verifier.use(capability["token"], digest, workflow_id=approved.workflow_id)
    assert (verified.claims.jti, verified.claims.sub) == (capability["token_id"], "@agent")
    edited = {**proposal, "parameters": {"body": "something else"}}
    with pytest.raises(CapabilityRefused) as other:
        verify_capability(capability["token"], issuers=issuers, action_sha256=action_digest(edited))
    assert other.value.code == "action"
    # Single use is the workflow's, through the gate service: a wrong action spends nothing, the first redemption
    # wins, a retry with its nonce gets the same answer, any other is refused there (another client, async too).
    with GateClient(service.url, service.token) as gate:
        with pytest.raises(CapabilityRefused) as wrong:
            redeem(gate, capability["token"], edited)
        assert wrong.value.code == "action"
        first = redeem(gate, capability["token"], recorded, nonce=f"n-{unique}")
        assert first.token_id == capability["token_id"] and first.redeemer == "gate:@agent"
        assert redeem(gate, capability["token"], recorded, nonce=f"n-{unique}") == first
    with GateClient(service.url, service.token) as other:
        with pytest.raises(CapabilityRefused) as again:
            redeem(other, capability["token"], recorded)
    assert again.value.code == "redeemed" and "already redeemed" in again.value.reason
    async with AsyncGateClient(service.url, service.token) as agate:
        with pytest.raises(CapabilityRefused) as async_again:
            await aredeem(agate, capability["token"], {"action_sha256": digest}, audience=capability["audience"])
    assert async_again.value.code == "redeemed"
    assert service.status(approved.proposal_id)["capability"]["redemption"] == first.model_dump()


def test_only_the_tokens_own_agent_redeems_it_and_a_token_no_issuer_signed_is_refused(service: Service) -> None:
    with GateClient(service.url, service.token) as gate:
        token, _, claims = mint(service, claims={"sub": "@someone-else"})
        with pytest.raises(CapabilityRefused) as other_agent:
            redeem(gate, token, {"action_sha256": claims["action_sha256"]}, audience=claims["aud"])
        assert other_agent.value.code == "agent"
        # The test's own key is not one of the running policy's issuers: refused before the workflow is asked.
        token, _, claims = mint(service)
        with pytest.raises(CapabilityRefused) as unlisted:
            redeem(gate, token, {"action_sha256": claims["action_sha256"]}, audience=claims["aud"])
        assert unlisted.value.code == "unknown-key"
        # A malformed request never leaves: the model names the field.
        with pytest.raises(ValidationError, match="action_sha256"):
            gate.redeem_capability(token, "not-a-digest", claims["aud"])
