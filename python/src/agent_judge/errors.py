"""What can go wrong talking to the gate service, as exceptions that say exactly what."""

from __future__ import annotations


class AgentJudgeError(Exception):
    """Every error this package raises."""


class GateUnreachable(AgentJudgeError):
    """The gate service could not be reached, did not answer in time, or answered something that is not its API."""

    def __init__(self, url: str, why: str) -> None:
        self.url = url
        self.why = why
        super().__init__(f"agent-judge's gate service at {url} {why}")


class GateHTTPError(AgentJudgeError):
    """The gate service refused the request: ``status``, and ``error`` and ``code`` from its body.

    ``error`` names the field and the rule (``call.tool: ...``); ``code`` is the rule's name when one refused
    (``bad-input``, ``auth``, ``lease``, ``limits.<name>``, ``not-found``, ``duplicate``, ``unavailable``).
    """

    def __init__(self, url: str, status: int, error: str, code: str | None = None) -> None:
        self.url = url
        self.status = status
        self.error = error
        self.code = code
        super().__init__(
            f"agent-judge's gate service at {url} answered {status}{f' ({code})' if code else ''}: {error}"
        )


class ConfigurationError(AgentJudgeError):
    """The client is missing what it needs (the service's URL or this agent's token)."""
