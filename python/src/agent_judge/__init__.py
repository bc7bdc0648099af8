"""agent-judge for Python: a client of agent-judge's gate service, and one-line adapters for agent frameworks.

- :class:`GateClient` / :class:`AsyncGateClient`: the ``/v1`` API (``decide`` a tool call, ``report`` its outcome,
  seed proposals). ``decide`` fails closed: anything that goes wrong is a ``refused`` answer, never a forward.
- ``agent_judge.langchain.AgentJudgeMiddleware``: LangChain ``create_agent`` / LangGraph.
- ``agent_judge.openai_agents.with_agent_judge``: the OpenAI Agents SDK.
- ``agent_judge.pydantic_ai.AgentJudge``: Pydantic AI.
- ``agent_judge.crewai.with_agent_judge``: CrewAI (its tools wrapped).
- ``agent_judge.capability``: verify a capability token (``pip install agent-judge[capability]``).

Only a ``forward`` is ever performed, with exactly its arguments (``performed_input``); its outcome is reported on
the lease (``Judge.perform`` / ``Judge.aperform``, the one way every adapter performs and reports).
"""

from .client import AsyncGateClient, GateClient
from .errors import AgentJudgeError, ConfigurationError, GateHTTPError, GateUnreachable
from .gate import Judge, JudgeOptions, model_text, performed_input
from .models import (
    AgentStatement,
    CallAnswer,
    CallRequest,
    Clarify,
    Deny,
    ErrorBody,
    Evidence,
    Forward,
    Lease,
    OutcomeAnswer,
    OutcomeRequest,
    Pending,
    ProposalOutcome,
    RedeemAnswer,
    RedeemRequest,
    Redemption,
    Refused,
    ScopeClaim,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "AgentJudgeError",
    "AgentStatement",
    "AsyncGateClient",
    "CallAnswer",
    "CallRequest",
    "Clarify",
    "ConfigurationError",
    "Deny",
    "ErrorBody",
    "Evidence",
    "Forward",
    "GateClient",
    "GateHTTPError",
    "GateUnreachable",
    "Judge",
    "JudgeOptions",
    "Lease",
    "OutcomeAnswer",
    "OutcomeRequest",
    "Pending",
    "ProposalOutcome",
    "RedeemAnswer",
    "RedeemRequest",
    "Redemption",
    "Refused",
    "ScopeClaim",
    "Verdict",
    "model_text",
    "performed_input",
]
