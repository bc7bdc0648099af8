/**
 * The proposal workflow id's prefix, in a module of its own with no imports: the CLI's `status` path
 * (src/wire-names.ts) needs the name without loading the digest's hash library.
 */

/** Every proposal workflow id starts with this, then 32 hex characters of its content digest. */
export const PROPOSAL_WORKFLOW_ID_PREFIX = 'proposal-';

/**
 * The proposal_id forms that name a proposal by its content: its workflow id itself, or the MCP proxy's
 * `mcp-<32 hex>` form of it. A proposal so named is unique because its workflow id is (no proposal_id claim needed),
 * and these forms are reserved: a submission whose proposal_id has one of them but names other content is refused.
 */
const CONTENT_NAME_RE = /^(?:proposal|mcp)-([0-9a-f]{32})$/;

/** What a proposal_id may look like (the proposal schema checks it with this; lookups by id too). */
export const PROPOSAL_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The workflow id that a content-derived proposal_id (or a workflow id) names, without a lookup; null otherwise. */
export function workflowIdNamedBy(id: string): string | null {
  const m = CONTENT_NAME_RE.exec(id);
  return m ? `${PROPOSAL_WORKFLOW_ID_PREFIX}${m[1]}` : null;
}

/**
 * The audit review workflow's type and id prefix (ids: `review-weekly-2026-W48`, see contracts/review.ts), here so
 * src/names.ts can name them without loading the review schemas and hash libraries into every proposal run.
 */
export const REVIEW_WORKFLOW_TYPE = 'reviewWorkflow';
export const REVIEW_WORKFLOW_ID_PREFIX = 'review-';
