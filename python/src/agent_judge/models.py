"""The gate service's ``/v1`` API as pydantic models: what an agent sends and gets back.

They mirror the zod schemas of the TypeScript service (src/gate/service/api.ts), which also make the OpenAPI 3.1
document served at ``GET /v1/openapi.json``. ``tests/test_models_match_openapi.py`` compares every model here with
that document (field names, required sets, enums and bounds), so the two cannot drift apart unnoticed.

Requests forbid unknown fields (a misspelt field is an error naming it, before anything is sent). Answers ignore
fields a newer service may add; an answer of a ``kind`` this package does not know is refused, never performed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

#: Runtimes with endpoints of their own (``/hooks/<runtime>``, the MCP proxy): not spoken for through ``/v1/calls``.
RESERVED_RUNTIMES = ("mcp", "claude-code", "codex", "gemini", "openclaw")
#: The shortest hold a request may ask for (ms).
MIN_HOLD_MS = 1000
#: The longest hold a request may ask for (ms); the policy's ``spec.hooks.holdFor`` bounds it further.
MAX_HOLD_MS = 120_000

Outcome = Literal["ok", "tool_error", "unknown", "performer_failure", "not_performed"]
OutcomeStatus = Literal[
    "executed",
    "approved",
    "rejected",
    "awaiting_clarification",
    "awaiting_human",
    "failed",
    "uncertain",
    "pending",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


# --- what the agent says for itself -----------------------------------------------------------------------------


class Evidence(_Request):
    """One piece of evidence the agent cites for a call."""

    type: Annotated[str, Field(min_length=1, max_length=64)]
    url: Annotated[str | None, Field(max_length=2048)] = None
    source: Annotated[str | None, Field(min_length=1, max_length=512)] = None
    title: Annotated[str | None, Field(max_length=512)] = None


class ScopeClaim(_Request):
    """What the agent claims the call stays within."""

    files_only: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=4096)]] | None, Field(max_length=1000)
    ] = None
    max_lines: Annotated[int | None, Field(ge=0, le=9007199254740991)] = None
    no_existing_code_deletion: bool | None = None


class AgentStatement(_Request):
    """The agent's own justification, evidence and scope for a call (each optional)."""

    justification: Annotated[str | None, Field(min_length=1, max_length=16 * 1024)] = None
    cited_evidence: Annotated[list[Evidence] | None, Field(max_length=50)] = None
    scope_claim: ScopeClaim | None = None


# --- POST /v1/calls ---------------------------------------------------------------------------------------------


class CallRequest(_Request):
    """``POST /v1/calls``: one tool call the agent wants to make."""

    runtime: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")] = "api"
    """The framework or program making the call (part of the call's identity)."""
    server: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")]
    """The tool family the policy's rules match (``server`` in a spec.mcp rule), e.g. ``agents``."""
    tool: Annotated[str, Field(min_length=1, max_length=256)]
    arguments: dict[str, Any]
    """The arguments exactly as the tool would receive them."""
    tool_definition_hash: Annotated[str | None, Field(pattern=r"^[0-9a-f]{64}$")] = None
    session_id: Annotated[str | None, Field(min_length=1, max_length=1024)] = None
    """The agent's session or thread: a grant may be scoped to it; part of the proposal's identity."""
    call_id: Annotated[str | None, Field(min_length=1, max_length=256)] = None
    """The runtime's id of this call (audit only)."""
    user_task: Annotated[str | None, Field(max_length=64 * 1024)] = None
    """What the user asked the agent, as untrusted context for the judge."""
    agent: AgentStatement | None = None
    hold_ms: Annotated[int | None, Field(ge=MIN_HOLD_MS, le=MAX_HOLD_MS)] = None
    """How long the service holds the request while a judge or a person decides before answering ``pending``."""

    @field_validator("runtime")
    @classmethod
    def _not_reserved(cls, runtime: str) -> str:
        if runtime in RESERVED_RUNTIMES:
            raise ValueError(f"reserved for an endpoint of its own ({', '.join(RESERVED_RUNTIMES)})")
        return runtime

    def body(self) -> dict[str, Any]:
        """The JSON body: unset optional fields are left out (the service takes no nulls)."""
        return self.model_dump(mode="json", exclude_none=True)


class Verdict(_Answer):
    """A verdict as agent-judge records it (seed 000 §3.2 plus who decided and at which tier)."""

    model_config = ConfigDict(extra="allow")

    proposal_id: str
    verdict: Literal["APPROVE", "REJECT", "CLARIFY"]
    reason: str
    constraints: dict[str, Any]
    escalation: dict[str, Any] | None
    confidence: float
    decided_by: str
    tier: Literal["no-judge", "lightweight-approval", "full-judge-review", "human-only"]
    rule: str | None = None
    decided_at: str | None = None
    judge: dict[str, Any] | None = None
    evidence_checks: list[dict[str, Any]] | None = None
    edited: dict[str, Any] | None = None


class Lease(_Answer):
    """The one performance of an approved call, leased to this agent: report its outcome once."""

    id: str
    proposal_id: str
    workflow_id: str
    verdict: Verdict | None
    edits: list[dict[str, Any]] | None
    """What a person changed, when the call was approved with edits."""
    report_by: str
    """Report by then; after it the proposal records "forwarded, no outcome"."""


class Forward(_Answer):
    """Perform the call now, exactly once, with exactly ``arguments`` (a person's edits included)."""

    kind: Literal["forward"]
    rule: str
    arguments: dict[str, Any]
    lease: Lease | None
    """The lease to report on, or None when no proposal was needed (a no-judge rule)."""
    text: str | None
    """When approved with edits: the words that tell the model what was changed."""


class Deny(_Answer):
    """Do not perform; the identical call is denied again."""

    kind: Literal["deny"]
    reason: str
    recorded: bool
    proposal_id: str
    workflow_id: str
    verdict: Verdict | None
    text: str


class Clarify(_Answer):
    """Do not perform; repeat the identical call with the agent's justification filled in."""

    kind: Literal["clarify"]
    reason: str
    rounds_left: int
    deadline: str | None
    proposal_id: str
    workflow_id: str
    verdict: Verdict | None
    text: str


class Pending(_Answer):
    """Do not perform yet: a judge or a person is deciding. Repeat the identical call later."""

    kind: Literal["pending"]
    waiting_for: Literal["judge", "human"]
    status: str
    deadline: str | None
    retry_after_ms: int
    proposal_id: str
    workflow_id: str
    verdict: Verdict | None
    text: str


class Refused(_Answer):
    """Do not perform; no verdict of its own (bad input, agent-judge out of reach, a lease held elsewhere...)."""

    kind: Literal["refused"]
    reason: str
    proposal_id: str | None
    workflow_id: str | None
    text: str


CallAnswer = Annotated[Union[Forward, Deny, Clarify, Pending, Refused], Field(discriminator="kind")]
"""The gate's answer to a call. Only a :class:`Forward` may be performed."""
CALL_ANSWER: TypeAdapter[Forward | Deny | Clarify | Pending | Refused] = TypeAdapter(CallAnswer)


# --- POST /v1/calls/{id}/outcome --------------------------------------------------------------------------------


class OutcomeRequest(_Request):
    """What happened when the forwarded call was performed."""

    outcome: Outcome
    detail: Annotated[str | None, Field(max_length=2000)] = None


class OutcomeAnswer(_Answer):
    recorded: Literal[True]
    proposal_id: str


# --- POST /v1/capabilities/redeem ------------------------------------------------------------------------------


class RedeemRequest(_Request):
    """A capability token spent once, through its proposal's workflow, for the action about to be performed."""

    token: Annotated[str, Field(min_length=1, max_length=8192)]
    action_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    audience: Annotated[str, Field(min_length=1, max_length=200)]
    nonce: Annotated[str | None, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")] = None


class Redemption(_Answer):
    token_id: str
    audience: str
    redeemer: str
    nonce: str
    redeemed_at: str


class RedeemAnswer(_Answer):
    redeemed: Literal[True]
    redemption: Redemption


# --- /v1/proposals ----------------------------------------------------------------------------------------------


class ProposalOutcome(_Answer):
    """A proposal as agent-judge reports it: documented by its main fields; the rest are kept as extra fields."""

    model_config = ConfigDict(extra="allow")

    proposal_id: str
    workflow_id: str
    status: OutcomeStatus
    verdict: Verdict | None
    verdicts: list[Verdict]
    execution: dict[str, Any] | None


class ErrorBody(_Answer):
    """The body of every 4xx and 5xx answer: what was wrong, naming the field and the rule."""

    error: str
    code: str | None = None
    """Which rule refused (``limits.proposals-per-agent``, ``bad-input``, ...), when one did."""


def refused(reason: str) -> Refused:
    """A refusal made on this side (agent-judge out of reach, a bad request): the tool must not run."""
    prefix = "" if reason.startswith("REJECT") else "REJECT: "
    return Refused(
        kind="refused",
        reason=reason,
        proposal_id=None,
        workflow_id=None,
        text=f"agent-judge {prefix}{reason}. Not performed.",
    )
