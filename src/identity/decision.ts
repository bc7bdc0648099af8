/**
 * Signed human decisions, verification side. The approver id in a decision is only a claim;
 * anyone who can reach the Temporal namespace could send `{"approver":"scott"}`. When the policy
 * gives an approver a public key (or a bot key for `discord:` or `slack:` approvers), the workflow accepts that
 * approver's decision only with a valid Ed25519 signature over the decision bound to what the
 * approver saw: this proposal's content digest and this workflow run, made within the signature
 * window, with a nonce the run has not accepted before. Pure: the proposal workflow verifies it
 * itself. Signing is in `sign-decision.ts`.
 */
import type { HumanDecision } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';
import type { PasskeyCredential } from '../contracts/passkey';
import { refusal, type Refusal } from '../contracts/refusal';
import { assertionChallenge, refusePasskeyAssertion } from './passkey-verify';
import { checkSignature, staleness, statementBytes } from './verify';

/** The domain tag of a decision statement. v1 bound the workflow id alone; new runs refuse it. */
export const DECISION_TAG = 'agent-judge/human-decision/v2';

/**
 * What a decision signature is made for. `runId` is the FIRST execution run id of the workflow
 * chain: unique to this start of this workflow id (a new start under the same id gets a new one),
 * yet kept by a reset, a retry or a continue-as-new of the same chain, so an operator's reset does
 * not void decisions already given. `contentSha256` is `proposalContentDigest` of the proposal as
 * the run holds it (clarifications applied: what the approver was shown).
 */
export interface DecisionBinding {
  workflowId: string;
  runId: string;
  contentSha256: string;
  /**
   * For an approval with edits only: `proposalContentDigest` of the edited action (src/contracts/action-edit.ts), which
   * the statement then binds as `edited_sha256`. Absent otherwise, so unedited statements are unchanged.
   */
  editedSha256?: string;
}

/** The exact bytes signed: the domain tag, then the decision bound to one content and one run, canonically. */
export function decisionSigningBytes(
  binding: DecisionBinding,
  d: HumanDecision,
  signedAt: string,
  nonce: string,
): Uint8Array {
  const statement = {
    workflow_id: binding.workflowId,
    run_id: binding.runId,
    content_sha256: binding.contentSha256,
    decision: d.decision,
    approver: d.approver,
    reason: d.reason ?? null,
    signed_at: signedAt,
    nonce,
    ...(binding.editedSha256 !== undefined ? { edited_sha256: binding.editedSha256 } : {}),
  };
  return statementBytes(DECISION_TAG, statement);
}

/** The key that must sign this approver's decisions, or null when the policy names none. */
export function signingKeyFor(policy: CompliancePolicy, approver: string): string | null {
  const { approverKeys, discordBotKey, slackBotKey } = policy.spec.escalation;
  // Own keys only: an approver id such as `constructor` must not find Object's.
  const own = Object.hasOwn(approverKeys, approver) ? approverKeys[approver] : undefined;
  if (typeof own === 'string') return own;
  if (approver.startsWith('discord:') && discordBotKey) return discordBotKey;
  if (approver.startsWith('slack:') && slackBotKey) return slackBotKey;
  return null;
}

/** The approver's registered passkeys (the policy's, with the worker's registry merged in); none when unlisted. */
export function passkeysFor(policy: CompliancePolicy, approver: string): readonly PasskeyCredential[] {
  const all = policy.spec.escalation.approverPasskeys ?? {};
  return Object.hasOwn(all, approver) ? (all[approver] ?? []) : [];
}

/**
 * The WebAuthn challenge of a passkey-signed decision: the SHA-256 of the exact statement an Ed25519 signature would
 * sign (content digest, first run id, approve/reject, approver, reason, signing time, nonce). The inbox asks the
 * browser for an assertion over it; the workflow recomputes it from its own run.
 */
export function decisionChallenge(binding: DecisionBinding, d: HumanDecision, signedAt: string, nonce: string): string {
  return assertionChallenge(decisionSigningBytes(binding, d, signedAt, nonce));
}

/** The approvers the policy lists whose decisions nothing signs: for them an approver id is only a claim. */
export function keylessApprovers(policy: CompliancePolicy): string[] {
  return policy.spec.escalation.approvers.filter(
    (a) => signingKeyFor(policy, a) === null && passkeysFor(policy, a).length === 0,
  );
}

/**
 * Whether unsigned decisions count, resolved once at start: `requireSignedDecisions` as the policy sets it, and when
 * it is unset, refused by `agent-judge worker` (anyone who can reach the namespace could otherwise decide as an
 * approver without a key) and accepted by `agent-judge dev` (one person's machine). The workflows read the result.
 */
export function resolveUnsignedDecisions(
  policy: CompliancePolicy,
  mode: 'dev' | 'worker',
): { policy: CompliancePolicy; refused: boolean; keyless: string[] } {
  const keyless = keylessApprovers(policy);
  const set = policy.spec.escalation.requireSignedDecisions;
  const refused = set ?? (mode === 'worker' && keyless.length > 0);
  return {
    policy: {
      ...policy,
      spec: { ...policy.spec, escalation: { ...policy.spec.escalation, requireSignedDecisions: refused } },
    },
    refused,
    keyless,
  };
}

/**
 * Why a decision's signature is not acceptable to the run `binding` describes, or null. `usedNonces`
 * are the nonces of the signed decisions this run already accepted. Never throws.
 */
export function refuseDecisionSignature(
  policy: CompliancePolicy,
  binding: DecisionBinding,
  d: HumanDecision,
  nowMs: number,
  usedNonces: readonly string[],
): Refusal | null {
  const key = signingKeyFor(policy, d.approver);
  const passkeys = passkeysFor(policy, d.approver);
  if (!key && passkeys.length === 0) {
    return policy.spec.escalation.requireSignedDecisions
      ? refusal(
          'unsigned',
          `decisions must be signed, and the policy has no key or passkey for ${d.approver} (add a key to ` +
            'spec.escalation.approverKeys or enrol a passkey in the inbox; spec.escalation.requireSignedDecisions: ' +
            'false accepts unsigned decisions)',
        )
      : null;
  }
  const s = d.signature;
  if (!s)
    return key
      ? refusal('unsigned', `${d.approver} must sign decisions (agent-judge decide --key <key file>)`)
      : refusal('unsigned', `${d.approver} must sign decisions with their passkey (in the approval inbox)`);
  if (!s.binds)
    return refusal(
      'wrong-binding',
      'a v1 signature binds only the workflow id, not the content or the run; sign again with this agent-judge',
    );
  // The claims are compared first only to say clearly what is wrong; the signature is then checked
  // over this run's own values, never the claimed ones.
  if (s.binds.run_id !== binding.runId)
    return refusal(
      'wrong-binding',
      `the decision was signed for another run of ${binding.workflowId} ` +
        `(${s.binds.run_id}, this is ${binding.runId}); sign it again for this run`,
    );
  if (s.binds.content_sha256 !== binding.contentSha256)
    return refusal(
      'wrong-binding',
      `the decision was signed for other content (sha256 ${s.binds.content_sha256.slice(0, 16)}…, ` +
        `this proposal is ${binding.contentSha256.slice(0, 16)}…)`,
    );
  // An approval with edits signs the edited action's digest (the workflow computed it from the edits themselves).
  if (binding.editedSha256 !== undefined && s.binds.edited_sha256 === undefined)
    return refusal(
      'wrong-binding',
      'the decision carries edits, but its signature does not bind the edited action; sign the edited decision',
    );
  if (binding.editedSha256 === undefined && s.binds.edited_sha256 !== undefined)
    return refusal('wrong-binding', 'the signature was made for an edited action, but the decision carries no edits');
  if (s.binds.edited_sha256 !== undefined && s.binds.edited_sha256 !== binding.editedSha256)
    return refusal(
      'wrong-binding',
      `the decision was signed for another edited action (sha256 ${s.binds.edited_sha256.slice(0, 16)}…, ` +
        `these edits make ${(binding.editedSha256 ?? '').slice(0, 16)}…)`,
    );
  const stale = staleness(Date.parse(s.signed_at), nowMs);
  if (stale !== null) return refusal('stale', `the decision signature ${stale}; sign it again`);
  const statement = decisionSigningBytes(binding, d, s.signed_at, s.nonce);
  if (s.webauthn) {
    if (passkeys.length === 0)
      return refusal('unknown-key', `${d.approver} has no registered passkey; sign with their key instead`);
    const refused = refusePasskeyAssertion(statement, s.webauthn, passkeys, d.approver);
    if (refused) return refused;
  } else {
    if (!key || s.value === undefined)
      return refusal(
        'unknown-key',
        `${d.approver} signs decisions with a passkey (in the approval inbox), and has no key in the policy`,
      );
    const check = checkSignature(statement, s.value, key);
    if (check === 'malformed') return refusal('malformed', 'the decision signature is malformed');
    if (check !== 'ok')
      return refusal('bad-signature', `the decision signature does not verify against ${d.approver}'s key`);
  }
  if (usedNonces.includes(s.nonce))
    return refusal('replay', `this signed decision was already used (nonce ${s.nonce}); sign a new one`);
  return null;
}
