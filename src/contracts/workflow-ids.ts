/**
 * The proposal workflow id's prefix, in a module of its own with no imports: the CLI's `status` path
 * (src/wire-names.ts) needs the name without loading the digest's hash library.
 */

/** Every proposal workflow id starts with this, then 32 hex characters of its content digest. */
export const PROPOSAL_WORKFLOW_ID_PREFIX = 'proposal-';
