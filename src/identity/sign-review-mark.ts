/**
 * Signs review marks for the CLI (`review mark --key`). Node only (node:crypto through `keys.ts`);
 * the review workflow verifies with `review-mark.ts`.
 */
import type { KeyFile } from '../contracts/identity';
import type { ReviewMark } from '../contracts/review';
import { reviewMarkSigningBytes } from './review-mark';
import { newNonce, signBytes } from './keys';

/** Signs a mark for one review with a key file (from `agent-judge circles keygen`). */
export function signReviewMark(reviewId: string, mark: ReviewMark, key: KeyFile, now = new Date()): ReviewMark {
  const signedAt = now.toISOString();
  const nonce = newNonce();
  const value = signBytes(reviewMarkSigningBytes(reviewId, mark, signedAt, nonce), key.private_key);
  return { ...mark, signature: { signed_at: signedAt, nonce, value } };
}
