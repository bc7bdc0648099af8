/**
 * The proposal workflow, one concept per file: workflow.ts wires it (handlers, activities, the decision loop),
 * messages.ts reads and registers its Updates, state.ts (with core.ts, escalation.ts, caller-window.ts and
 * capability.ts) decides, search-attributes.ts batches what visibility sees, activity-stubs.ts and failures.ts serve
 * the wiring.
 */
export { proposalWorkflow, type ProposalWorkflowInput } from './workflow';
export { ProposalState, refuseWithdrawalOf, capabilityBinding, type NextStep } from './state';
export {
  readUpdateInput,
  readCallerOutcome,
  readClarification,
  readDecision,
  readRedemption,
  readSettleLease,
  readWithdrawal,
} from './messages';
