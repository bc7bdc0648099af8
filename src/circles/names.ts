/**
 * Every name of the circle registry that crosses a process: its workflow type and default id, and
 * the Update and Query definitions. The workflow, the client library and tests import these.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
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

export const CIRCLE_REGISTRY_WORKFLOW_TYPE = 'circleRegistryWorkflow';

/** Activities of the registry (local, on the workflow worker). */
export interface CircleActivities {
  circleOperatorKeys(): Promise<string[]>;
}
/**
 * "The operator keys may have changed": sent by every workflow worker at start to the registries on
 * its task queue. It carries nothing: the registry re-reads the keys through its local activity, so
 * they still come only from a worker's configuration, and the reading is recorded in history.
 */
export const operatorKeysChangedSignal = defineSignal<[]>('circles.operatorKeysChanged');

/** One registry per namespace. Tests pass their own id so they never share one. */
export const CIRCLE_REGISTRY_WORKFLOW_ID = 'circle-registry';

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

export const registerTopLevelUpdate = defineUpdate<RegisteredAgent, [RegisterInput]>('circles.register');
export const spawnSubAgentUpdate = defineUpdate<RegisteredAgent, [SignedMembership]>('circles.spawn');
export const knockUpdate = defineUpdate<KnockResult, [SignedKnock]>('circles.knock');
export const retireUpdate = defineUpdate<RetireResult, [RetireInput]>('circles.retire');
export const allowPairUpdate = defineUpdate<PairResult, [PairInput]>('circles.allowPair');
export const revokePairUpdate = defineUpdate<PairResult, [PairInput]>('circles.revokePair');
export const requestCrossCircleUpdate = defineUpdate<BridgeRequest, [SignedBridgeRequest]>(
  'circles.requestCrossCircle',
);
export const decideCrossCircleUpdate = defineUpdate<BridgeRequest, [SignedBridgeDecision]>('circles.decideCrossCircle');

export const agentQuery = defineQuery<AgentRecord | null, [string]>('circles.agent');
/** Null when the requester is not registered. */
export const discoverQuery = defineQuery<DiscoveredAgent[] | null, [string]>('circles.discover');
export const treeQuery = defineQuery<RegistryTree, [{ circle_id?: string }]>('circles.tree');
export const eventsQuery = defineQuery<EventsView, [EventsFilter]>('circles.events');
export const bridgeQuery = defineQuery<BridgeRequest[], [string]>('circles.bridge');
export const statsQuery = defineQuery<RegistryStats>('circles.stats');
export const runInfoQuery = defineQuery<RegistryRunInfo>('circles.runInfo');
/** Everything, for audits and for checking that continue-as-new lost nothing. */
export const dumpQuery = defineQuery<RegistryDump>('circles.dump');
