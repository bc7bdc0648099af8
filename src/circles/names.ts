/**
 * Every name of the circle registry that crosses a process: its workflow type and default id, and
 * the Update and Query definitions. The workflow, the client library and tests import these.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { CIRCLE_MESSAGES } from '../wire-names';
import type { RegistryConfig } from './config';
import type {
  EventsFilter,
  PairInput,
  RegisterInput,
  RetireInput,
  SignedBridgeDecision,
  SignedBridgeRequest,
  SignedKnock,
  SignedMembership,
} from './schemas';
import type { EventsView, PairResult, RegistryDump, RegistryHandover, RegistryTree, RetireResult } from './state';
import type { AgentRecord, BridgeRequest, DiscoveredAgent, KnockResult, RegisteredAgent, RegistryStats } from './types';

export { CIRCLE_REGISTRY_WORKFLOW_ID, CIRCLE_REGISTRY_WORKFLOW_TYPE } from '../wire-names';

/** Activities of the registry (local, on the workflow worker). */
export interface CircleActivities {
  circleOperatorKeys(): Promise<string[]>;
}
/**
 * "The operator keys may have changed": sent by every workflow worker at start to the registries on
 * its task queue. It carries nothing: the registry re-reads the keys through its local activity, so
 * they still come only from a worker's configuration, and the reading is recorded in history.
 */
export const operatorKeysChangedSignal = defineSignal<[]>(CIRCLE_MESSAGES.operatorKeysChanged);

/** Workflow input; a continued run receives the handover of its predecessor. */
export interface CircleRegistryInput {
  config?: Partial<RegistryConfig>;
  handover?: RegistryHandover;
}

/** Progress of the current run, for operators and the continue-as-new tests. */
export interface RegistryRunInfo {
  run_id: string;
  history_length: number;
  updates_this_run: number;
  generation: number;
  agents: number;
}

export const registerTopLevelUpdate = defineUpdate<RegisteredAgent, [RegisterInput]>(CIRCLE_MESSAGES.register);
export const spawnSubAgentUpdate = defineUpdate<RegisteredAgent, [SignedMembership]>(CIRCLE_MESSAGES.spawn);
export const knockUpdate = defineUpdate<KnockResult, [SignedKnock]>(CIRCLE_MESSAGES.knock);
export const retireUpdate = defineUpdate<RetireResult, [RetireInput]>(CIRCLE_MESSAGES.retire);
export const allowPairUpdate = defineUpdate<PairResult, [PairInput]>(CIRCLE_MESSAGES.allowPair);
export const revokePairUpdate = defineUpdate<PairResult, [PairInput]>(CIRCLE_MESSAGES.revokePair);
export const requestCrossCircleUpdate = defineUpdate<BridgeRequest, [SignedBridgeRequest]>(
  CIRCLE_MESSAGES.requestCrossCircle,
);
export const decideCrossCircleUpdate = defineUpdate<BridgeRequest, [SignedBridgeDecision]>(
  CIRCLE_MESSAGES.decideCrossCircle,
);

export const agentQuery = defineQuery<AgentRecord | null, [string]>(CIRCLE_MESSAGES.agent);
/** Null when the requester is not registered. */
export const discoverQuery = defineQuery<DiscoveredAgent[] | null, [string]>(CIRCLE_MESSAGES.discover);
export const treeQuery = defineQuery<RegistryTree, [{ circle_id?: string }]>(CIRCLE_MESSAGES.tree);
export const eventsQuery = defineQuery<EventsView, [EventsFilter]>(CIRCLE_MESSAGES.events);
export const bridgeQuery = defineQuery<BridgeRequest[], [string]>(CIRCLE_MESSAGES.bridge);
export const statsQuery = defineQuery<RegistryStats>(CIRCLE_MESSAGES.stats);
export const runInfoQuery = defineQuery<RegistryRunInfo>(CIRCLE_MESSAGES.runInfo);
/** Everything, for audits and for checking that continue-as-new lost nothing. */
export const dumpQuery = defineQuery<RegistryDump>(CIRCLE_MESSAGES.dump);
