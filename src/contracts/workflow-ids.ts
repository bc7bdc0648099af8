/**
 * The proposal workflow id's prefix, in a module of its own with no imports: the CLI's `status` path
 * (src/wire-names.ts) needs the name without loading the digest's hash library.
 */

/** Every proposal workflow id starts with this, then 32 hex characters of its content digest. */
export const PROPOSAL_WORKFLOW_ID_PREFIX = 'proposal-';

/**
 * The audit review workflow's type and id prefix (ids: `review-weekly-2026-W48`, see contracts/review.ts), here so
 * src/names.ts can name them without loading the review schemas and hash libraries into every proposal run.
 */
export const REVIEW_WORKFLOW_TYPE = 'reviewWorkflow';
export const REVIEW_WORKFLOW_ID_PREFIX = 'review-';
