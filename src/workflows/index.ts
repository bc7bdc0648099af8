/** Every workflow the workers run; the bundler starts here. Deterministic code only. */
import type { CircleRegistryInput } from '../circles/names';
import type { ReviewStatus } from '../contracts/review';
import type { GrantStatus } from '../contracts/grant';

export { proposalWorkflow } from './proposal';

/**
 * The circle registry, loaded when a registry run starts. The SDK evaluates a workflow's modules afresh for every new
 * run, so a static import would make every proposal pay for the registry's schemas and signature checks. The module
 * is in this bundle (webpackMode "eager": no separate chunk) and its top-level code runs only here; the import settles
 * within the first activation, before that activation's Updates are dispatched, so none is refused for lack of a
 * handler, and it adds no command to the history.
 */
export async function circleRegistryWorkflow(input: CircleRegistryInput = {}): Promise<void> {
  const registry = await import(/* webpackMode: "eager" */ './circle-registry');
  return registry.circleRegistryWorkflow(input);
}

export { historyArchiveWorkflow } from './history-archive';

/** A chosen proposal_id's reservation: no schemas, nothing to evaluate for proposals. */
export { proposalIdReservation } from './proposal-id-reservation';

/** The policy in force on this task queue (small, no schemas: a static import costs proposals nothing). */
export { policyInForceWorkflow } from './policy-in-force';

/**
 * An audit review (one per period). Loaded when a review run starts, like the registry: proposals never pay for its
 * schemas or the signature library it verifies marks with.
 */
export async function reviewWorkflow(input: unknown): Promise<ReviewStatus> {
  const review = await import(/* webpackMode: "eager" */ './review');
  return review.reviewWorkflow(input);
}

/**
 * A scoped grant (docs/grants.md). Loaded when a grant run starts, like the registry: proposals never pay for the
 * grant's schemas or the signature library.
 */
export async function grantWorkflow(input: unknown): Promise<GrantStatus> {
  const grant = await import(/* webpackMode: "eager" */ './grant');
  return grant.grantWorkflow(input);
}
