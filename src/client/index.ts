/**
 * `agent-judge/client`: what an actor runtime needs to submit proposals and follow them, without the worker, the
 * judge or the CLI. Everything here talks to Temporal through a `Client` the caller owns (see `connectClient`).
 */
export {
  clarify,
  decide,
  getOutcome,
  getStatus,
  listProposals,
  proposalWorkflowId,
  RefusedError,
  submitAndWait,
  submitProposal,
  waitUntilSettled,
  type ListedProposal,
  type SubmitOptions,
} from './proposals';
export {
  CapabilityRefusedError,
  digestOfAction,
  redeemCapability,
  type CapabilityAction,
  type RedeemCapabilityOptions,
} from './capabilities';
export { checkSubmissionLimits, type SubmissionLimits } from './limits';
export { LimitExceededError, LIMIT_NAMES, type LimitName } from '../contracts/errors';
export { actionDigest, mcpToolCallDigest } from '../contracts/capability';
export { verifyCapability } from '../identity/capability';
export { connect, connectClient, temporalTarget, type TemporalTarget } from './connection';
export { CircleRegistryClient, type CircleRegistryClientOptions, type RegistryRunInfo } from './circles';
