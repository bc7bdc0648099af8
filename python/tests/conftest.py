"""What every test here is given: the REAL gate service of a running agent-judge (its URL and an agent's token) and
a small control endpoint standing for the person who decides (approve, reject, edit) and for `agent-judge status`.

test/integration/python-adapters.test.ts starts agent-judge (a real Temporal dev server and workers, the gate
service) and runs pytest with these in the environment:

- ``AGENT_JUDGE_TEST_URL``: the gate service's base URL
- ``AGENT_JUDGE_TEST_TOKEN``: the bearer token of the agent ``@agent``
- ``AGENT_JUDGE_TEST_CONTROL``: ``POST /decide {proposal_id, decision, edits?}`` and ``POST /status {proposal_id}``;
  ``POST /capability/mint {claims?, unlisted?}`` (a token signed by agent-judge's issuer code), ``/capability/digests
  {actions}``, ``/capability/issuers`` and ``/capability/redeem {token, action}`` (through the proposal's workflow)

The policy's ``spec.mcp.rules`` (server ``agents``): ``read_note`` is no-judge; ``comment`` is an
``issue_comment`` the judge decides (a comment carrying an AWS key is rejected); ``open_pr`` is a ``forgejo_pr_create``
the judge asks to clarify (the call cites no evidence); every other tool (``deploy``) is an
``tool_call`` a person decides. Without these variables the tests fail (never skip): run them through vitest.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agent_judge import AsyncGateClient, CallAnswer, Forward, GateClient

#: A port nothing listens on: agent-judge "down".
DOWN_URL = "http://127.0.0.1:9"


@dataclass
class Service:
    url: str
    token: str
    control: str

    def decide(self, proposal_id: str, decision: str = "approve", edits: list[dict[str, Any]] | None = None) -> None:
        body: dict[str, Any] = {"proposal_id": proposal_id, "decision": decision}
        if edits is not None:
            body["edits"] = edits
        res = httpx.post(f"{self.control}/decide", json=body, timeout=60)
        res.raise_for_status()

    def ask(self, path: str, body: dict[str, Any]) -> Any:
        """One of the control endpoint's other questions (``/capability/...``), its JSON answer."""
        res = httpx.post(f"{self.control}{path}", json=body, timeout=60)
        res.raise_for_status()
        return res.json()

    def status(self, proposal_id: str) -> dict[str, Any]:
        res = httpx.post(f"{self.control}/status", json={"proposal_id": proposal_id}, timeout=60)
        res.raise_for_status()
        body: dict[str, Any] = res.json()
        return body


@pytest.fixture(scope="session")
def service() -> Service:
    names = ("AGENT_JUDGE_TEST_URL", "AGENT_JUDGE_TEST_TOKEN", "AGENT_JUDGE_TEST_CONTROL")
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} not set: these tests run against a real agent-judge; run them with "
            "`npx vitest run test/integration/python-adapters.test.ts`"
        )
    return Service(*(os.environ[n] for n in names))


@pytest.fixture
def unique() -> str:
    """A value no other test uses: the call's arguments decide which proposal it is."""
    return uuid.uuid4().hex[:12]


class Recording(GateClient):
    """A client that keeps every answer it was given: which proposal a forwarded call was."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers: list[CallAnswer] = []

    def decide(self, call: Any, *, raise_errors: bool = False) -> CallAnswer:
        self.answers.append(super().decide(call, raise_errors=raise_errors))
        return self.answers[-1]


class AsyncRecording(AsyncGateClient):
    """The async twin of :class:`Recording`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers: list[CallAnswer] = []

    async def decide(self, call: Any, *, raise_errors: bool = False) -> CallAnswer:
        self.answers.append(await super().decide(call, raise_errors=raise_errors))
        return self.answers[-1]


def forwarded_proposal(answers: list[CallAnswer]) -> str:
    """The proposal of the one call forwarded with a lease."""
    [lease] = [a.lease for a in answers if isinstance(a, Forward) and a.lease is not None]
    return lease.proposal_id


def assert_recorded_raise(service: Service, answers: list[CallAnswer], body: str) -> None:
    """The forwarded call's tool raised ``RuntimeError(body)``: the lease's performer_failure, recorded on the
    proposal as upstream_failure with the error (src/gate/resolve.ts ``callerOutcomeOf``)."""
    caller = service.status(forwarded_proposal(answers))["caller"]
    assert caller["outcome"] == "upstream_failure", caller
    assert f"RuntimeError: {body}" in caller["detail"], caller


#: A comment the judge rejects at once (it carries an AWS access key id).
SECRET = "AKIAABCDEFGHIJKLMNOP"
