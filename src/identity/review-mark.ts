/**
 * Signed review marks, verification side. A reviewer id in a mark is only a claim, as an approver
 * id in a decision is: anyone who can reach the namespace could send `--reviewer scott`. A reviewer
 * with a key in the policy (`spec.reviews.reviewerKeys`, else their `escalation.approverKeys` key)
 * marks only with a fresh Ed25519 signature over exactly this review, this proposal, this mark and
 * note, the signing time and a nonce the review has not accepted before. Pure: the review workflow
 * verifies it in its Update validator. Signing is in `sign-review-mark.ts`.
 */
import type { CompliancePolicy } from '../contracts/policy';
import { refusal, type Refusal } from '../contracts/refusal';
import type { ReviewMark } from '../contracts/review';
import { checkSignature, staleness, statementBytes } from './verify';

/** The domain tag of a review-mark statement: a decision signature never passes as a mark, nor the reverse. */
export const REVIEW_MARK_TAG = 'agent-judge/review-mark/v1';

/** The exact bytes signed: the tag, then the mark bound to one review and one proposal, canonically. */
export function reviewMarkSigningBytes(reviewId: string, m: ReviewMark, signedAt: string, nonce: string): Uint8Array {
  return statementBytes(REVIEW_MARK_TAG, {
    review_id: reviewId,
    workflow_id: m.workflow_id,
    mark: m.mark,
    should_be: m.should_be ?? null,
    reviewer: m.reviewer,
    note: m.note ?? null,
    signed_at: signedAt,
    nonce,
  });
}

/** The reviewers of a policy: `spec.reviews.reviewers`, default the escalation approvers. */
export function reviewersOf(policy: CompliancePolicy): string[] {
  return policy.spec.reviews.reviewers ?? policy.spec.escalation.approvers;
}

/** The key that must sign this reviewer's marks, or null when the policy names none. */
export function reviewerKeyFor(policy: CompliancePolicy, reviewer: string): string | null {
  const own = policy.spec.reviews.reviewerKeys;
  if (Object.hasOwn(own, reviewer) && typeof own[reviewer] === 'string') return own[reviewer];
  const approverKeys = policy.spec.escalation.approverKeys;
  if (Object.hasOwn(approverKeys, reviewer) && typeof approverKeys[reviewer] === 'string')
    return approverKeys[reviewer];
  return null;
}

/**
 * Why a mark's signature is not acceptable to review `reviewId`, or null. `usedNonces` are the
 * nonces of the signed marks the review already accepted. Never throws.
 */
export function refuseReviewMarkSignature(
  policy: CompliancePolicy,
  reviewId: string,
  m: ReviewMark,
  nowMs: number,
  usedNonces: readonly string[],
): Refusal | null {
  const key = reviewerKeyFor(policy, m.reviewer);
  if (!key) {
    return policy.spec.reviews.requireSignedMarks
      ? refusal('unsigned', `marks must be signed, and the policy has no key for ${m.reviewer}`)
      : null;
  }
  const s = m.signature;
  if (!s) return refusal('unsigned', `${m.reviewer} must sign marks (agent-judge review mark --key <key file>)`);
  const stale = staleness(Date.parse(s.signed_at), nowMs);
  if (stale !== null) return refusal('stale', `the mark signature ${stale}; sign it again`);
  const check = checkSignature(reviewMarkSigningBytes(reviewId, m, s.signed_at, s.nonce), s.value, key);
  if (check === 'malformed') return refusal('malformed', 'the mark signature is malformed');
  if (check !== 'ok') return refusal('bad-signature', `the mark signature does not verify against ${m.reviewer}'s key`);
  if (usedNonces.includes(s.nonce))
    return refusal('replay', `this signed mark was already used (nonce ${s.nonce}); sign a new one`);
  return null;
}
