"""Clients for the gate service's ``/v1`` API, sync (:class:`GateClient`) and async (:class:`AsyncGateClient`).

The agent's process holds only the service's URL and its own bearer token (``agent-judge hook token --agent @x``;
under ``agent-judge dev`` the token is in ``.agent-judge/hook-token``). Both default to the environment variables
``AGENT_JUDGE_URL`` and ``AGENT_JUDGE_TOKEN``.

:meth:`GateClient.decide` fails closed: agent-judge out of reach, a timeout, an error answer or a malformed request
come back as a :class:`~agent_judge.models.Refused` answer (whose ``text`` the model reads), never as a forward;
pass ``raise_errors=True`` to get the exception instead. Every other method raises
:class:`~agent_judge.errors.GateHTTPError` (the service's message names the field and the rule) or
:class:`~agent_judge.errors.GateUnreachable`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from .errors import ConfigurationError, GateHTTPError, GateUnreachable
from .models import (
    CALL_ANSWER,
    CallAnswer,
    CallRequest,
    Lease,
    Outcome,
    OutcomeAnswer,
    OutcomeRequest,
    ProposalOutcome,
    RedeemAnswer,
    RedeemRequest,
    refused,
)

#: How long one request may take (s): above the longest hold (120 s) the service may be asked for.
DEFAULT_TIMEOUT_S = 150.0
#: How long connecting may take (s).
CONNECT_TIMEOUT_S = 10.0
#: Where a capability token is redeemed.
REDEEM_PATH = "/v1/capabilities/redeem"


def _settings(url: str | None, token: str | None) -> tuple[str, str]:
    url = url or os.environ.get("AGENT_JUDGE_URL")
    token = token or os.environ.get("AGENT_JUDGE_TOKEN")
    if not url:
        raise ConfigurationError(
            "no gate service URL: pass url= or set AGENT_JUDGE_URL (`agent-judge dev` prints it)"
        )
    if not token:
        raise ConfigurationError(
            "no agent token: pass token= or set AGENT_JUDGE_TOKEN (`agent-judge hook token --agent @x`)"
        )
    return url.rstrip("/"), token


def _timeout(seconds: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(CONNECT_TIMEOUT_S, seconds))


def _call_request(call: CallRequest | Mapping[str, Any]) -> CallRequest:
    return call if isinstance(call, CallRequest) else CallRequest.model_validate(dict(call))


def _lease_id(lease: Lease | str) -> str:
    return lease.id if isinstance(lease, Lease) else lease


def _outcome_body(outcome: Outcome, detail: str | None) -> dict[str, Any]:
    if detail is not None and len(detail) > 2000:
        detail = detail[:1999] + "…"
    return OutcomeRequest(outcome=outcome, detail=detail).model_dump(mode="json", exclude_none=True)


def _redeem_body(token: str, action_sha256: str, audience: str, nonce: str | None) -> dict[str, Any]:
    request = RedeemRequest(token=token, action_sha256=action_sha256, audience=audience, nonce=nonce)
    return request.model_dump(mode="json", exclude_none=True)


def _json_of(base: str, res: httpx.Response) -> Any:
    try:
        body = res.json()
    except ValueError:
        raise GateUnreachable(base, f"answered {res.status_code} without JSON") from None
    if res.status_code >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        code = body.get("code") if isinstance(body, dict) else None
        raise GateHTTPError(base, res.status_code, str(error), code if isinstance(code, str) else None)
    return body


def _answer_of(base: str, body: Any) -> CallAnswer:
    try:
        return CALL_ANSWER.validate_python(body)
    except ValidationError as err:
        kind = body.get("kind") if isinstance(body, dict) else None
        raise GateUnreachable(
            base, f"answered a call with something this client does not know (kind {kind!r}): {err.errors()[:1]}"
        ) from None


def _refusal(err: Exception) -> CallAnswer:
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "call"
        return refused(f"the call is malformed (call.{field}: {first['msg']})")
    return refused(str(err))


def _outcome_path(lease: Lease | str) -> str:
    return f"/v1/calls/{quote(_lease_id(lease), safe='')}/outcome"


def _proposal_path(proposal_id: str, tail: str = "") -> str:
    return f"/v1/proposals/{quote(proposal_id, safe='')}{tail}"


class _Client:
    """What the sync and async clients share: where the service is, this agent's token, and how one request is
    made and what going wrong on the way means."""

    def __init__(self, url: str | None, token: str | None, timeout: float) -> None:
        self.url, self._token = _settings(url, token)
        self.timeout = timeout

    def _request_args(self, method: str, path: str, body: Any, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return {
            "method": method,
            "url": f"{self.url}{path}",
            "json": body,
            "params": {k: v for k, v in (params or {}).items() if v is not None},
            "headers": {"authorization": f"Bearer {self._token}"},
            "timeout": _timeout(self.timeout),
        }

    def _unreachable(self, err: httpx.HTTPError) -> GateUnreachable:
        if isinstance(err, httpx.TimeoutException):
            return GateUnreachable(self.url, f"did not answer within {self.timeout:g} s")
        return GateUnreachable(self.url, f"could not be reached ({type(err).__name__}: {err})")


class GateClient(_Client):
    """A synchronous client of the gate service, for one agent (its token decides the agent).

    Use it as a context manager, or call :meth:`close`. ``http_client`` lets the application pass an
    ``httpx.Client`` of its own (proxies, certificates, a test transport); it is not closed by :meth:`close`.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(url, token, timeout)
        self._own = http_client is None
        self._http = http_client or httpx.Client(timeout=_timeout(timeout))

    def __enter__(self) -> GateClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own:
            self._http.close()

    def _request(
        self, method: str, path: str, body: Any = None, params: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            res = self._http.request(**self._request_args(method, path, body, params))
        except httpx.HTTPError as err:
            raise self._unreachable(err) from None
        return _json_of(self.url, res)

    def decide(self, call: CallRequest | Mapping[str, Any], *, raise_errors: bool = False) -> CallAnswer:
        """Asks whether the call may run. Perform it only for a ``forward``, exactly with its ``arguments``.

        Never raises for the call's own sake unless ``raise_errors``: anything that goes wrong is ``refused``.
        """
        try:
            request = _call_request(call)
            return _answer_of(self.url, self._request("POST", "/v1/calls", request.body()))
        except (ValidationError, GateUnreachable, GateHTTPError) as err:
            if raise_errors:
                raise
            return _refusal(err)

    def report(self, lease: Lease | str, outcome: Outcome, detail: str | None = None) -> OutcomeAnswer:
        """Records what happened when a forwarded call was performed (once per lease)."""
        body = self._request("POST", _outcome_path(lease), _outcome_body(outcome, detail))
        return OutcomeAnswer.model_validate(body)

    def submit_proposal(self, proposal: Mapping[str, Any], *, wait_ms: int | None = None) -> ProposalOutcome:
        """Submits a seed 000 §3.1 proposal (its ``agent_id`` comes from the token) and waits up to ``wait_ms``."""
        body = self._request("POST", "/v1/proposals", dict(proposal), {"wait_ms": wait_ms})
        return ProposalOutcome.model_validate(body)

    def get_proposal(self, proposal_id: str, *, wait_ms: int | None = None) -> ProposalOutcome:
        """One of this agent's proposals, waiting up to ``wait_ms`` for it to settle."""
        body = self._request("GET", _proposal_path(proposal_id), None, {"wait_ms": wait_ms})
        return ProposalOutcome.model_validate(body)

    def clarify(self, proposal_id: str, clarification: Mapping[str, Any]) -> ProposalOutcome:
        """Answers a CLARIFY: ``justification``, ``cited_evidence`` and/or ``scope_claim``."""
        body = self._request("POST", _proposal_path(proposal_id, "/clarification"), dict(clarification))
        return ProposalOutcome.model_validate(body)

    def redeem_capability(
        self, token: str, action_sha256: str, audience: str, *, nonce: str | None = None
    ) -> RedeemAnswer:
        """Spends the capability token of one of this agent's proposals once, through its workflow, for the action
        whose digest is ``action_sha256``; perform the action only if this returns. A refusal raises
        :class:`~agent_judge.errors.GateHTTPError` (409, ``code`` ``capability.<why>``). Pass the same ``nonce`` to
        retry one redemption. :func:`agent_judge.capability.redeem` computes the digest from the action."""
        body = _redeem_body(token, action_sha256, audience, nonce)
        return RedeemAnswer.model_validate(self._request("POST", REDEEM_PATH, body))

    def openapi(self) -> dict[str, Any]:
        """The service's OpenAPI 3.1 document."""
        body = self._request("GET", "/v1/openapi.json")
        return body if isinstance(body, dict) else {}


class AsyncGateClient(_Client):
    """The asynchronous twin of :class:`GateClient` (same methods, awaited)."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(url, token, timeout)
        self._own = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=_timeout(timeout))

    async def __aenter__(self) -> AsyncGateClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own:
            await self._http.aclose()

    async def _request(
        self, method: str, path: str, body: Any = None, params: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            res = await self._http.request(**self._request_args(method, path, body, params))
        except httpx.HTTPError as err:
            raise self._unreachable(err) from None
        return _json_of(self.url, res)

    async def decide(self, call: CallRequest | Mapping[str, Any], *, raise_errors: bool = False) -> CallAnswer:
        """See :meth:`GateClient.decide`."""
        try:
            request = _call_request(call)
            return _answer_of(self.url, await self._request("POST", "/v1/calls", request.body()))
        except (ValidationError, GateUnreachable, GateHTTPError) as err:
            if raise_errors:
                raise
            return _refusal(err)

    async def report(self, lease: Lease | str, outcome: Outcome, detail: str | None = None) -> OutcomeAnswer:
        body = await self._request("POST", _outcome_path(lease), _outcome_body(outcome, detail))
        return OutcomeAnswer.model_validate(body)

    async def submit_proposal(self, proposal: Mapping[str, Any], *, wait_ms: int | None = None) -> ProposalOutcome:
        body = await self._request("POST", "/v1/proposals", dict(proposal), {"wait_ms": wait_ms})
        return ProposalOutcome.model_validate(body)

    async def get_proposal(self, proposal_id: str, *, wait_ms: int | None = None) -> ProposalOutcome:
        body = await self._request("GET", _proposal_path(proposal_id), None, {"wait_ms": wait_ms})
        return ProposalOutcome.model_validate(body)

    async def clarify(self, proposal_id: str, clarification: Mapping[str, Any]) -> ProposalOutcome:
        body = await self._request("POST", _proposal_path(proposal_id, "/clarification"), dict(clarification))
        return ProposalOutcome.model_validate(body)

    async def redeem_capability(
        self, token: str, action_sha256: str, audience: str, *, nonce: str | None = None
    ) -> RedeemAnswer:
        """See :meth:`GateClient.redeem_capability`."""
        body = _redeem_body(token, action_sha256, audience, nonce)
        return RedeemAnswer.model_validate(await self._request("POST", REDEEM_PATH, body))

    async def openapi(self) -> dict[str, Any]:
        body = await self._request("GET", "/v1/openapi.json")
        return body if isinstance(body, dict) else {}
