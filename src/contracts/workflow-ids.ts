/**
 * The proposal workflow id's prefix, in a module of its own with no imports: the CLI's `status` path
 * (src/wire-names.ts) needs the name without loading the digest's hash library.
 */

/** Every proposal workflow id starts with this, then 32 hex characters of its content digest. */
export const PROPOSAL_WORKFLOW_ID_PREFIX = 'proposal-';

/**
 * The proposal_id forms that name a proposal by its content: its workflow id itself, the MCP proxy's `mcp-<32 hex>`
 * form of it, or `call-<32 hex>`, the form every other runtime's gate gives its calls (src/gate/). A proposal so named
 * is unique because its workflow id is (no proposal_id reservation needed), and these forms are reserved: a submission
 * whose proposal_id has one of them but names other content is refused.
 */
const CONTENT_NAME_RE = /^(?:proposal|mcp|call)-([0-9a-f]{32})$/;

/** The proposal_id prefix a gate gives the calls of `runtime`: `mcp-` for the MCP proxy, `call-` for any other. */
export function callProposalIdPrefix(runtime: string): string {
  return runtime === 'mcp' ? 'mcp-' : 'call-';
}

/**
 * The rule a run's REJECT names when it was withdrawn because its chosen proposal_id is held by other content (the
 * reservation runs beside the run's start, not before it: docs/performance.md §6).
 */
export const PROPOSAL_ID_TAKEN_RULE = 'proposal_id.taken';

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
