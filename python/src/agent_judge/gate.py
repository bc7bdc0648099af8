"""What every framework adapter shares: where the gate service is, how a tool call becomes a ``/v1/calls`` request,
and the one way an approved call is performed and reported.

Only a ``forward`` is performed, with exactly the arguments it carries (a person's edits included), and its outcome
is reported on the lease: ``ok``, ``tool_error`` (the tool ran and answered an error) or ``performer_failure`` (the
tool raised). Every other answer is text the model reads, and the tool does not run.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypedDict, TypeVar

from .client import DEFAULT_TIMEOUT_S, AsyncGateClient, GateClient, _settings
from .models import CallAnswer, Forward, Outcome, Pending

T = TypeVar("T")

#: Told when a call is left pending: e.g. show the user which proposal to decide.
OnPending = Callable[[Pending, Mapping[str, Any]], None]
#: Told when an outcome could not be recorded (default: a warning).
OnReportError = Callable[[Exception, Mapping[str, Any]], None]
#: What a performed call's result says happened: the outcome and an optional detail.
OutcomeOf = Callable[[Any], "tuple[Outcome, str | None]"]


class JudgeOptions(TypedDict, total=False):
    """The options every adapter takes (``**options``), passed on to :class:`Judge`: see it for each one."""

    url: str | None
    token: str | None
    server: str
    hold_ms: int | None
    timeout: float
    client: GateClient | None
    async_client: AsyncGateClient | None
    on_pending: OnPending | None
    on_report_error: OnReportError | None


def _ok(_result: Any) -> tuple[Outcome, str | None]:
    return "ok", None


def _failed(_err: Exception) -> Outcome:
    return "performer_failure"


class Judge:
    """One agent's access to the gate service, as the adapters use it.

    ``url`` and ``token`` default to ``AGENT_JUDGE_URL`` and ``AGENT_JUDGE_TOKEN``; ``client`` / ``async_client``
    take clients of the application's own instead. ``server`` is what the policy's ``spec.mcp.rules`` match these
    tools under; ``hold_ms`` how long the service holds a call for a judge or a person before answering pending.
    """

    def __init__(
        self,
        *,
        runtime: str,
        url: str | None = None,
        token: str | None = None,
        server: str = "agents",
        hold_ms: int | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        client: GateClient | None = None,
        async_client: AsyncGateClient | None = None,
        on_pending: OnPending | None = None,
        on_report_error: OnReportError | None = None,
    ) -> None:
        given = client or async_client
        if given is None:
            # Fails now, naming what is missing, rather than at the first tool call.
            url, token = _settings(url, token)
        else:
            url, token = url or given.url, token or given._token
        self.runtime = runtime
        self.server = server
        self.hold_ms = hold_ms
        self._url, self._token, self._timeout = url, token, timeout
        self._client = client
        self._async_client = async_client
        self.on_pending = on_pending
        self.on_report_error = on_report_error

    @property
    def client(self) -> GateClient:
        if self._client is None:
            self._client = GateClient(self._url, self._token, timeout=self._timeout)
        return self._client

    @property
    def async_client(self) -> AsyncGateClient:
        if self._async_client is None:
            self._async_client = AsyncGateClient(self._url, self._token, timeout=self._timeout)
        return self._async_client

    def call(
        self,
        tool: str,
        arguments: Any,
        *,
        description: str | None = None,
        call_id: str | None = None,
        session_id: str | None = None,
        user_task: str | None = None,
    ) -> dict[str, Any]:
        """The ``/v1/calls`` request for one tool call (arguments that are not an object go as ``{"input": ...}``)."""
        described = (description or "").strip()
        call: dict[str, Any] = {
            "runtime": self.runtime,
            "server": self.server,
            "tool": tool,
            "arguments": dict(arguments) if isinstance(arguments, Mapping) else {"input": arguments},
            "agent": {
                "justification": described[:4096]
                if described
                else f"{tool} call; the tool gave no description of its purpose"
            },
        }
        if call_id:
            call["call_id"] = call_id[:256]
        if session_id:
            call["session_id"] = session_id
        if user_task and user_task.strip():
            call["user_task"] = user_task.strip()[: 64 * 1024]
        if self.hold_ms is not None:
            call["hold_ms"] = self.hold_ms
        return call

    def decide(self, call: Mapping[str, Any]) -> CallAnswer:
        return self._told(self.client.decide(call), call)

    async def adecide(self, call: Mapping[str, Any]) -> CallAnswer:
        return self._told(await self.async_client.decide(call), call)

    def _told(self, answer: CallAnswer, call: Mapping[str, Any]) -> CallAnswer:
        if isinstance(answer, Pending) and self.on_pending:
            self.on_pending(answer, call)
        return answer

    def perform(
        self,
        forward: Forward,
        call: Mapping[str, Any],
        run: Callable[[], T],
        outcome_of: OutcomeOf = _ok,
        error_outcome: Callable[[Exception], Outcome] = _failed,
    ) -> T:
        """Runs a forwarded call once and reports what happened on its lease: ``outcome_of(result)``, or
        ``error_outcome(err)`` (default ``performer_failure``) when it raises (re-raised). ``run`` performs the call
        with exactly the forward's arguments: :func:`performed_input`. A report that cannot be recorded goes to
        ``on_report_error``, never to the tool's caller."""
        try:
            result = run()
        except Exception as err:
            self._report(forward, (error_outcome(err), _detail(err)), call)
            raise
        self._report(forward, outcome_of(result), call)
        return result

    async def aperform(
        self,
        forward: Forward,
        call: Mapping[str, Any],
        run: Callable[[], Awaitable[T]],
        outcome_of: OutcomeOf = _ok,
        error_outcome: Callable[[Exception], Outcome] = _failed,
    ) -> T:
        """The async twin of :meth:`perform`."""
        try:
            result = await run()
        except Exception as err:
            await self._areport(forward, (error_outcome(err), _detail(err)), call)
            raise
        await self._areport(forward, outcome_of(result), call)
        return result

    def _report(self, forward: Forward, what: tuple[Outcome, str | None], call: Mapping[str, Any]) -> None:
        if forward.lease is None:  # a no-judge call: no proposal to report on
            return
        try:
            self.client.report(forward.lease.id, *what)
        except Exception as err:  # never the tool's caller's problem: the proposal records "no outcome"
            self._report_failed(err, call)

    async def _areport(self, forward: Forward, what: tuple[Outcome, str | None], call: Mapping[str, Any]) -> None:
        if forward.lease is None:
            return
        try:
            await self.async_client.report(forward.lease.id, *what)
        except Exception as err:
            self._report_failed(err, call)

    def _report_failed(self, err: Exception, call: Mapping[str, Any]) -> None:
        if self.on_report_error:
            self.on_report_error(err, call)
        else:
            warnings.warn(f"agent-judge: the outcome of {call.get('tool')} was not recorded: {err}", stacklevel=3)


def performed_input(original: Any, forward: Forward) -> Any:
    """What to hand the tool: the forward's arguments (a person's edits included) in the shape the tool was called
    with. A call whose input was not an object went to the gate as ``{"input": ...}`` and comes back out the same
    way; never the input as the model sent it when the gate says otherwise."""
    if isinstance(original, Mapping):
        return forward.arguments
    return forward.arguments.get("input", original)


def _detail(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}"
    return text if len(text) <= 2000 else text[:1999] + "…"


def model_text(answer: CallAnswer) -> str:
    """What the model reads for an answer that is not performed."""
    text = getattr(answer, "text", None)
    return text if isinstance(text, str) and text else "agent-judge REJECT. Not performed."
