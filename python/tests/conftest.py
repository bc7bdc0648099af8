"""What every test here is given: the REAL gate service of a running agent-judge (its URL and an agent's token) and
a small control endpoint standing for the person who decides (approve, reject, edit) and for `agent-judge status`.

test/integration/python-adapters.test.ts starts agent-judge (a real Temporal dev server and workers, the gate
service) and runs pytest with these in the environment:

- ``AGENT_JUDGE_TEST_URL``: the gate service's base URL
- ``AGENT_JUDGE_TEST_TOKEN``: the bearer token of the agent ``@agent``
- ``AGENT_JUDGE_TEST_CONTROL``: ``POST /decide {proposal_id, decision, edits?}`` and ``POST /status {proposal_id}``;
  ``POST /capability/mint {claims?, unlisted?}`` (a token signed by agent-judge's issuer code), ``/capability/digests
  {actions}``, and ``/capability/issuers``;
  ``POST /grant {proposal_id}`` (the person grants calls identical to that proposal's, in any session of its agent,
  five uses; answered once the workflow worker's grant index lists it), ``/grant/uses {grant_id}`` (the status of
  each proposal the grant covered) and ``/visible {agent, count}`` (waits until that many of the agent's proposals
  are listed: the limit counts with visibility)
- ``AGENT_JUDGE_TEST_LIMITED``: JSON ``{url, limit, agents: {langchain|openai_agents|pydantic_ai|crewai: {agent,
  token}}}``: a second gate service over the same system whose policy allows ``limit`` proposals per agent in ten
  minutes, one fresh agent per adapter's test

The policy's ``spec.mcp.rules`` (server ``agents``): ``read_note`` is no-judge; ``comment`` is an
``issue_comment`` the judge decides (a comment carrying an AWS key is rejected); ``open_pr`` is a ``forgejo_pr_create``
the judge asks to clarify (the call cites no evidence); every other tool (``deploy``) is an
``tool_call`` a person decides. Without these variables the tests fail (never skip): run them through vitest.
"""

from __future__ import annotations

import json
import os
import re
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

    def grant_identical_calls(self, proposal_id: str) -> str:
        """A person's grant of calls identical to ``proposal_id``'s; its grant id."""
        grant_id: str = self.ask("/grant", {"proposal_id": proposal_id})["grant_id"]
        return grant_id

    def grant_uses(self, grant_id: str) -> list[dict[str, Any]]:
        """The status of every proposal the grant covered."""
        uses: list[dict[str, Any]] = self.ask("/grant/uses", {"grant_id": grant_id})
        return uses

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


@dataclass
class Limited:
    """A gate service allowing ``limit`` proposals per agent, and an agent of its own for one adapter's test."""

    url: str
    token: str
    agent: str
    limit: int


def limited_for(service: Service, adapter: str) -> Limited:
    """The limited gate service and the fresh agent ``adapter``'s limit test acts as."""
    raw = os.environ.get("AGENT_JUDGE_TEST_LIMITED")
    if not raw:
        pytest.fail("AGENT_JUDGE_TEST_LIMITED not set: run these tests through vitest (conftest.py)")
    config = json.loads(raw)
    who = config["agents"][adapter]
    return Limited(config["url"], who["token"], who["agent"], int(config["limit"]))


def wait_until_listed(service: Service, limited: Limited, count: int) -> None:
    """Until visibility lists ``count`` of the limited agent's proposals (the limit counts what is listed)."""
    service.ask("/visible", {"agent": limited.agent, "count": count})


def limit_refusal(limited: Limited) -> re.Pattern[str]:
    """What a call past the limit is refused with: the limit's name and its setting."""
    return re.compile(
        rf"limit proposals_per_agent: {re.escape(limited.agent)} submitted {limited.limit} proposals .*"
        rf"\(spec\.limits\.proposals\.perAgent is {limited.limit}\)"
    )


def assert_one_grant_use(service: Service, grant_id: str, arguments: dict[str, Any]) -> None:
    """The grant covered exactly one proposal, with ``arguments``: approved by the grant, run, recorded ok."""
    [use] = service.grant_uses(grant_id)
    assert use["verdict"]["verdict"] == "APPROVE" and use["verdict"]["decided_by"] == f"grant:{grant_id}", use
    assert use["status"] == "executed" and use["caller"]["outcome"] == "ok", use
    assert use["proposal"]["parameters"]["arguments"] == arguments, use


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


def assert_recorded_tool_error(service: Service, answers: list[CallAnswer], body: str) -> None:
    """The forwarded call's tool ran and answered an error (the framework's own kind): recorded ``tool_error``
    with the error's text, not ``ok`` nor a failure to run."""
    caller = service.status(forwarded_proposal(answers))["caller"]
    assert caller["outcome"] == "tool_error", caller
    assert body in caller["detail"], caller


#: A comment the judge rejects at once (it carries an AWS access key id).
SECRET = "AKIAABCDEFGHIJKLMNOP"
