/**
 * Every value from a schema- or hash-building contracts module that workflow code uses at run time, in one place.
 * Workflow modules import these from here, never from those modules directly: a bundle made with
 * {@link workflowBundlerOptions} replaces this module with `schemas-across-runs.cjs`, which evaluates it once per
 * worker thread instead of once per workflow run (zod and the proposal schemas were most of a lightweight proposal's
 * worker CPU, see docs/performance.md). Elsewhere (tests, the compiled package, a bundle without those options) this
 * module is what it looks like: plain re-exports.
 */
export { safeParseProposal, searchableTarget, targetKey } from '../contracts/proposal';
export { proposalContentDigest, proposalWorkflowId } from '../contracts/digest';
export { ClarificationSchema, HumanDecisionSchema } from '../contracts/messages';
export { CallerOutcomeSchema } from '../contracts/caller-outcome';
export { applyActionEdits } from '../contracts/action-edit';
export {
  capabilityBinding,
  capabilityRequestFor,
  EXECUTOR_REDEEMER,
  issuedFor,
  policyDigest,
} from '../contracts/capability';
export {
  actionTypeLabel,
  decidedByLabel,
  earlierVerdictLabel,
  escalationReasonOf,
  executorLabel,
  isJudgedTier,
  meterName,
  METRICS,
} from '../contracts/metric-catalogue';
