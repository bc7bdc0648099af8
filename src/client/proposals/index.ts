/**
 * The actor-runtime API: submit a proposal, follow it, clarify it, decide it. The CLI is a thin
 * layer over these functions; agent runtimes call them directly.
 *
 * One concept per file: submit.ts (with reservation.ts), follow.ts, decide.ts, visibility.ts; runs.ts holds what
 * they share.
 */
export { proposalWorkflowId } from '../../contracts/digest';
export { fairnessKeyFor, FAIRNESS_KEY_MAX_BYTES } from './fairness';
export { RefusedError } from './runs';
export { submitAndSettle, submitAndWait, submitProposal, type SubmitOptions } from './submit';
export { reserveProposalId, confirmProposalIdReservation } from './reservation';
export { findWorkflowId, getOutcome, getStatus, waitUntilSettled } from './follow';
export { clarify, decide, decisionBindingOf } from './decide';
export { listProposals, type ListedProposal } from './visibility';
