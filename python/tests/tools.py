"""The application's tools, the same in every adapter's tests: plain functions, each recording how often it really
ran and with what. Each framework's test wraps them its own way (LangChain's ``tool``, the Agents SDK's
``function_tool``, Pydantic AI takes them as they are).

What the policy makes of each (conftest.py): ``read_note`` runs at once, ``comment`` is judged, ``open_pr`` is
asked to clarify (it cites no evidence), ``deploy`` waits for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


#: A comment body starting with this makes ``comment`` raise after it ran: a tool that failed.
TRACKER_DOWN = "the tracker is down"

#: A comment body starting with this makes ``comment`` answer an error after it ran, the framework's own way
#: (``Tools(refuse=...)``: LangChain's ToolException, Pydantic AI's ModelRetry, CrewAI's ToolFailure).
TRACKER_REFUSED = "the tracker refused"


class Tools:
    def __init__(self, refuse: Callable[[str], Any] | None = None) -> None:
        #: Each tool's real runs, with their arguments.
        self.ran: dict[str, list[dict[str, Any]]] = {"read_note": [], "deploy": [], "comment": [], "open_pr": []}
        self.refuse = refuse

    def functions(self) -> list[Callable[..., Any]]:
        ran = self.ran
        refuse = self.refuse

        def read_note(path: str) -> str:
            """Read a note from the vault."""
            ran["read_note"].append({"path": path})
            return f"contents of {path}"

        def deploy(service: str) -> str:
            """Deploy a service to production."""
            ran["deploy"].append({"service": service})
            return f"deployed {service}"

        def comment(body: str) -> str:
            """Comment on the issue."""
            ran["comment"].append({"body": body})
            if body.startswith(TRACKER_DOWN):
                raise RuntimeError(body)
            if refuse is not None and body.startswith(TRACKER_REFUSED):
                return refuse(body)  # type: ignore[no-any-return]
            return "commented"

        def open_pr(branch: str) -> str:
            """Open a pull request from a branch."""
            ran["open_pr"].append({"branch": branch})
            return f"opened a pull request from {branch}"

        return [read_note, deploy, comment, open_pr]
