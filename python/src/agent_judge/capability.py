"""Capability tokens, verified in Python: a tool that performs an approved action itself checks the token agent-judge
issued for it (seed 000 §8, docs/capabilities.md) before it acts.

A token is a PASETO ``v4.public`` token (Ed25519, verified by ``pyseto``) whose footer is ``{"kid": "<key id>"}`` and
whose payload is the claims ``sub aud jti iat exp wid policy_sha256 action_sha256``. :func:`verify_capability` makes
the same checks, in the same order and with the same refusal codes, as the TypeScript verifier
(``verifyCapability`` in src/identity/capability.ts): a well-formed ``v4.public`` token (canonical unpadded
base64url, a non-empty footer), a footer naming a key the policy lists (``spec.capabilities.issuers``; never a key
the token brings), the signature before any claim is read, every claim present, times RFC 3339, digests 64 hex
characters, then expiry, audience, workflow and the digest of the exact action about to be performed.

Single use: a token is spent by the ``redeemCapability`` Update on its proposal's workflow, which accepts exactly one
redemption whoever sends it. From Python, :func:`redeem` (or :func:`aredeem`) sends it through the gate service
(``POST /v1/capabilities/redeem``, with this agent's token: only the token's own agent may redeem it): the first
redemption wins, any other is refused (``redeemed``), whichever process sends it. A :class:`CapabilityVerifier`
refuses a second use of a token *at that verifier* only (its ledger lives in its process until the token expires):
it needs no round trip, and stops a replay to the same tool, not a use of the same token by another process.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from hashlib import sha256
from typing import Any, Literal

try:
    import pyseto
    import rfc8785
except ImportError as err:  # pragma: no cover - the message is the point
    raise ImportError(
        f"agent_judge.capability needs {err.name}: pip install 'agent-judge[capability]' (pyseto, rfc8785)"
    ) from err

from .client import AsyncGateClient, GateClient
from .errors import AgentJudgeError, GateHTTPError
from .models import Redemption

#: Why a token was refused; the codes of the TypeScript verifier, plus ``redeemed`` (a second use at one verifier).
CapabilityRefusal = Literal[
    "malformed",
    "unsupported",
    "unknown-key",
    "signature",
    "claims",
    "expired",
    "audience",
    "workflow",
    "action",
    "redeemed",
    # Refused by the workflow or the gate service when redeeming (:func:`redeem`):
    "agent",
    "closed",
    "refused",
]

V4_PUBLIC_HEADER = "v4.public."
EXECUTOR_AUDIENCE_PREFIX = "executor:"
MCP_AUDIENCE_PREFIX = "mcp:"
_SIGNATURE_BYTES = 64
_PUBLIC_KEY_BYTES = 32
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$"
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_CLAIM_NAMES = ("sub", "aud", "jti", "iat", "exp", "wid", "policy_sha256", "action_sha256")
# The encodings of Ed25519's small-order points (libsodium's blocklist): a key no signature can be bound to.
_SMALL_ORDER = {
    bytes.fromhex(h)
    for h in (
        "0100000000000000000000000000000000000000000000000000000000000000",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    )
}


class CapabilityRefused(AgentJudgeError):
    """The token does not allow this action: do not act. ``code`` is stable (:data:`CapabilityRefusal`)."""

    def __init__(self, code: CapabilityRefusal, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"capability token refused ({code}): {reason}")


@dataclass(frozen=True)
class CapabilityClaims:
    """The claims of a capability token; times are RFC 3339 as issued."""

    sub: str
    aud: str
    jti: str
    iat: str
    exp: str
    wid: str
    policy_sha256: str
    action_sha256: str

    @property
    def expires_at(self) -> datetime:
        return _parse_time(self.exp)  # checked when the claims were read


@dataclass(frozen=True)
class VerifiedCapability:
    """A token that verified: its claims, and the key id that signed it."""

    claims: CapabilityClaims
    kid: str


def _b64url(text: str) -> bytes | None:
    """Unpadded base64url, canonical (re-encoding gives the same text), or None."""
    if len(text) % 4 == 1 or not _B64URL.match(text):
        return None
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return raw if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == text else None


def _parse_v4_public(token: str) -> bytes:
    """The footer of a well-formed v4.public token (before its signature is checked), as ``parseV4Public`` does."""
    if not isinstance(token, str) or not token:
        raise CapabilityRefused("malformed", "the token is empty")
    segments = token.split(".")
    if len(segments) < 3 or len(segments) > 4:
        raise CapabilityRefused("malformed", "a PASETO has 3 or 4 dot-separated parts")
    version, purpose, body = segments[:3]
    if version != "v4" or purpose != "public":
        raise CapabilityRefused("unsupported", f"expected a v4.public token, got {version[:8]}.{purpose[:8]}")
    raw = _b64url(body)
    if raw is None:
        raise CapabilityRefused("malformed", "the token body is not unpadded base64url")
    if len(raw) < _SIGNATURE_BYTES:
        raise CapabilityRefused("malformed", "the token body is shorter than a signature")
    footer = b""
    if len(segments) == 4:
        decoded = _b64url(segments[3])
        # An empty footer is written without its dot: a trailing "." is not the same token.
        if not decoded:
            raise CapabilityRefused("malformed", "the footer is empty or not base64url")
        footer = decoded
    return footer


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _footer_kid(footer: bytes) -> str | None:
    parsed = _json(footer)
    if not isinstance(parsed, dict) or list(parsed) != ["kid"] or not isinstance(parsed["kid"], str):
        return None
    return parsed["kid"]


def _public_key(text: Any) -> pyseto.KeyInterface | None:
    """An issuer's key (32 bytes as unpadded base64url, not small-order) as a pyseto v4.public key."""
    raw = _b64url(text) if isinstance(text, str) and len(text) == 43 else None
    if raw is None or len(raw) != _PUBLIC_KEY_BYTES or raw in _SMALL_ORDER:
        return None
    try:
        return pyseto.Key.from_paserk(f"k4.public.{text}")
    except (pyseto.PysetoError, ValueError):
        return None


def _parse_time(text: str) -> datetime:
    m = _RFC3339.match(text)
    if not m:
        raise ValueError(text)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    # Milliseconds, as JavaScript's Date.parse reads them (further digits are dropped).
    millis = int(((m.group(7) or "") + "000")[:3])
    offset = timedelta(0)
    if m.group(8) != "Z":
        offset = timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        offset = -offset if m.group(9) == "-" else offset
    when = datetime(year, month, day, hour, minute, second, millis * 1000, tzinfo=timezone(offset))
    return when.astimezone(timezone.utc)


def _read_claims(value: Any) -> CapabilityClaims | str:
    if not isinstance(value, dict):
        return "the payload is not a JSON object"
    for name in _CLAIM_NAMES:
        claim = value.get(name)
        if not isinstance(claim, str) or not claim:
            return f"claim {name} is missing or not a string"
    for name in ("iat", "exp"):
        try:
            _parse_time(value[name])
        except ValueError:
            return f"claim {name} is not an RFC 3339 time"
    for name in ("policy_sha256", "action_sha256"):
        if not _HEX64.match(value[name]):
            return f"claim {name} is not 64 lowercase hex characters"
    return CapabilityClaims(**{name: value[name] for name in _CLAIM_NAMES})


def verify_capability(
    token: str,
    *,
    issuers: Mapping[str, str],
    audience: str | None = None,
    workflow_id: str | None = None,
    action_sha256: str | None = None,
    now: datetime | None = None,
) -> VerifiedCapability:
    """Verifies a capability token against the policy's ``issuers`` (key id -> public key,
    ``spec.capabilities.issuers``) and what the caller is about to do; each expectation left out is not checked
    (signature and expiry always are). Raises :class:`CapabilityRefused`; returns the verified claims."""
    footer = _parse_v4_public(token)
    kid = _footer_kid(footer)
    if kid is None:
        raise CapabilityRefused("malformed", 'the token footer is not {"kid": "<key id>"}')
    if kid not in issuers:
        raise CapabilityRefused("unknown-key", f"key id {json.dumps(kid)} is not in the policy's capabilities.issuers")
    key = _public_key(issuers[kid])
    if key is None:
        raise CapabilityRefused(
            "unknown-key", f"the policy's key for {json.dumps(kid)} is not an Ed25519 public key"
        )
    try:
        message = pyseto.decode(key, token).payload
    except pyseto.VerifyError:
        raise CapabilityRefused("signature", f"the token signature does not verify (key {kid})") from None
    except (pyseto.PysetoError, ValueError) as err:
        raise CapabilityRefused("malformed", f"{err} (key {kid})") from None
    claims = _read_claims(_json(message if isinstance(message, bytes) else b""))
    if isinstance(claims, str):
        raise CapabilityRefused("claims", claims)
    if claims.expires_at <= (now or datetime.now(timezone.utc)):
        raise CapabilityRefused("expired", f"the token expired at {claims.exp}")
    if audience is not None and claims.aud != audience:
        raise CapabilityRefused("audience", f"the token is for {claims.aud}, not {audience}")
    if workflow_id is not None and claims.wid != workflow_id:
        raise CapabilityRefused("workflow", f"the token belongs to workflow {claims.wid}, not {workflow_id}")
    if action_sha256 is not None and claims.action_sha256 != action_sha256:
        raise CapabilityRefused(
            "action",
            f"the token was issued for another action (sha256 {claims.action_sha256[:16]}…, "
            f"this one is {action_sha256[:16]}…)",
        )
    return VerifiedCapability(claims=claims, kid=kid)


def _sha256_canonical(value: Any) -> str:
    try:
        return sha256(rfc8785.dumps(value)).hexdigest()
    except rfc8785.CanonicalizationError as err:
        raise ValueError(f"the action is not plain JSON data ({err})") from None


def action_digest(action: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON (RFC 8785, as agent-judge's ``canonicalJson``) of ``{action_type, target,
    parameters}``: what a token for an ordinary proposal binds. Justification, evidence and scope are not the action.
    Use the action as agent-judge validated it (schema defaults applied: the proposal's status shows it)."""
    return _sha256_canonical(
        {"action_type": action["action_type"], "target": action["target"], "parameters": action["parameters"]}
    )


def mcp_tool_call_digest(tool: str, tool_definition_hash: str, arguments: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``{tool, tool_definition_hash, arguments}`` without the proxy's
    ``_agent_judge`` argument: what a token for a proxied MCP tool call binds."""
    args = {k: v for k, v in arguments.items() if k != "_agent_judge"}
    return _sha256_canonical({"tool": tool, "tool_definition_hash": tool_definition_hash, "arguments": args})


def executor_audience(action_type: str) -> str:
    """The audience of the performer of an action type (agent-judge's executor, or the caller for the rest)."""
    return f"{EXECUTOR_AUDIENCE_PREFIX}{action_type}"


class CapabilityVerifier:
    """One performer's verifier: the policy's issuers, the audience it is, and a ledger of the tokens it accepted.

    :meth:`use` verifies a token for the exact action about to be performed and records its id: the same token used
    again at this verifier is refused (``redeemed``) until it expires. Thread-safe. This is single use *here* only;
    agent-judge's own single use is the redemption through the proposal's workflow (see the module docs).
    """

    def __init__(self, issuers: Mapping[str, str], audience: str) -> None:
        self.issuers = dict(issuers)
        self.audience = audience
        self._used: dict[str, datetime] = {}
        self._lock = threading.Lock()

    def use(
        self, token: str, action_sha256: str, *, workflow_id: str | None = None, now: datetime | None = None
    ) -> VerifiedCapability:
        """Verifies ``token`` for this audience and the action whose digest is ``action_sha256``
        (:func:`action_digest`, :func:`mcp_tool_call_digest`) and spends it here; raises :class:`CapabilityRefused`."""
        at = now or datetime.now(timezone.utc)
        verified = verify_capability(
            token,
            issuers=self.issuers,
            audience=self.audience,
            workflow_id=workflow_id,
            action_sha256=action_sha256,
            now=at,
        )
        with self._lock:
            for jti in [j for j, exp in self._used.items() if exp <= at]:
                del self._used[jti]  # expired tokens are refused by expiry from now on
            if verified.claims.jti in self._used:
                raise CapabilityRefused("redeemed", f"token {verified.claims.jti} was already used at this verifier")
            self._used[verified.claims.jti] = verified.claims.expires_at
        return verified


def _redeem_args(action: Mapping[str, Any], audience: str | None) -> tuple[str, str]:
    if "action_sha256" in action:
        digest = str(action["action_sha256"])
    else:
        digest = action_digest(action)
    if audience is None:
        if "action_type" not in action:
            raise ValueError("audience: required unless the action is a proposal action (action_type, ...)")
        audience = executor_audience(str(action["action_type"]))
    return digest, audience


def _refusal_of(err: GateHTTPError) -> CapabilityRefused | GateHTTPError:
    prefix = "capability."
    if err.status == 409 and err.code and err.code.startswith(prefix):
        return CapabilityRefused(err.code[len(prefix) :], err.error)  # type: ignore[arg-type]
    return err


def redeem(
    gate: GateClient,
    token: str,
    action: Mapping[str, Any],
    *,
    audience: str | None = None,
    nonce: str | None = None,
) -> Redemption:
    """Spends ``token`` once, through its proposal's workflow, for ``action`` (a proposal action ``{action_type,
    target, parameters}``, or ``{"action_sha256": ...}``); the audience defaults to ``executor:<action_type>``.
    Perform the action only if this returns. Raises :class:`CapabilityRefused` (``redeemed``: someone redeemed it
    first; ``agent``: another agent's token; ``expired``, ``action``, ...) and nothing was spent."""
    digest, audience = _redeem_args(action, audience)
    try:
        return gate.redeem_capability(token, digest, audience, nonce=nonce).redemption
    except GateHTTPError as err:
        raise _refusal_of(err) from None


async def aredeem(
    gate: AsyncGateClient,
    token: str,
    action: Mapping[str, Any],
    *,
    audience: str | None = None,
    nonce: str | None = None,
) -> Redemption:
    """The async twin of :func:`redeem`."""
    digest, audience = _redeem_args(action, audience)
    try:
        return (await gate.redeem_capability(token, digest, audience, nonce=nonce)).redemption
    except GateHTTPError as err:
        raise _refusal_of(err) from None
