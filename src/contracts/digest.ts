/**
 * The content fingerprint of a proposal: what its workflow id is made from, what a signed human
 * decision binds, and what a capability token (seed 000 §8) will bind. One function, pure
 * JavaScript (`@noble/hashes`), so the client that names the workflow and the workflow that checks
 * its own name compute the same bytes.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from './canonical-json';
import { toHex, utf8 } from './encoding';
import type { Proposal } from './proposal';
import { PROPOSAL_WORKFLOW_ID_PREFIX } from './workflow-ids';

export { PROPOSAL_WORKFLOW_ID_PREFIX };

/**
 * SHA-256 (64 lowercase hex characters) over the canonical JSON of everything but `proposal_id`:
 * two proposals that ask for the same thing in the same words have one digest, whatever they are
 * called, and any change of action, target, parameters, scope or justification changes it.
 */
export function proposalContentDigest(proposal: Proposal): string {
  const { proposal_id: _ignored, ...content } = proposal;
  return toHex(sha256(utf8(canonicalJson(content))));
}

/**
 * The workflow id of a proposal: a fingerprint of its content. Identical content maps to the same
 * id, so Temporal itself refuses a resubmission (seed 000 §3.3: the actor may not retry the same
 * proposal); any revision of scope or justification gets a new id. The workflow refuses to run
 * under any other id.
 */
export function proposalWorkflowId(proposal: Proposal): string {
  const digest = proposal.performer ? performedCallDigest(proposal) : proposalContentDigest(proposal);
  return `${PROPOSAL_WORKFLOW_ID_PREFIX}${digest.slice(0, 32)}`;
}

/**
 * The identity of a proposal its caller performs (a call through the MCP proxy): who, what action, the exact call
 * and how many identical calls finished before; NOT its justification, evidence or scope. The identical call
 * re-issued with `_agent_judge` filled in then reaches the same proposal (its clarification), a rejected call stays
 * refused whatever it says for itself, and only changed arguments make a new proposal. The runtime's session
 * (`session_id`) counts when present: the identical call in another session is another proposal, so a session-scoped
 * grant's approval of one session's call is never reached by the other session (absent, the digest is unchanged).
 */
function performedCallDigest(proposal: Proposal): string {
  const { agent_id, action_type, target, parameters, performer, revision_of, session_id } = proposal;
  return toHex(
    sha256(
      utf8(
        canonicalJson({
          agent_id,
          action_type,
          target,
          parameters,
          performer,
          revision_of,
          ...(session_id !== undefined ? { session_id } : {}),
        }),
      ),
    ),
  );
}
