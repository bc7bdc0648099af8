/**
 * The circle registry: one long-lived workflow per namespace holding the trust-circle tree and
 * deciding every KNOCK. Updates carry statements the agents signed; the registry verifies each
 * signature itself (pure-JS Ed25519, deterministic) against the keys it holds. All decisions live
 * in `RegistryState`; this file only wires handlers and rolls the run over before history grows.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  proxyLocalActivities,
  continueAsNew,
  log,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { z } from 'zod';
import { describeIssues } from '../contracts/zod-error';
import { FailureType } from '../contracts/lifecycle';
import {
  agentQuery,
  allowPairUpdate,
  bridgeQuery,
  decideCrossCircleUpdate,
  discoverQuery,
  dumpQuery,
  eventsQuery,
  knockUpdate,
  operatorKeysChangedSignal,
  registerTopLevelUpdate,
  requestCrossCircleUpdate,
  retireUpdate,
  revokePairUpdate,
  runInfoQuery,
  spawnSubAgentUpdate,
  statsQuery,
  treeQuery,
  type CircleRegistryInput,
} from '../circles/names';
import { AmidSchema } from '../contracts/identity';
import type { PairInput, RegisterInput, RetireInput } from '../circles/schemas';
import {
  EventsFilterSchema,
  PairInputSchema,
  RegisterInputSchema,
  RetireInputSchema,
  SignedBridgeDecisionSchema,
  SignedBridgeRequestSchema,
  SignedKnockSchema,
  SignedMembershipSchema,
  TreeFilterSchema,
} from '../circles/schemas';
import { RegistryState, type OperatorInput } from '../circles/state';
import type { Checked, Refusal } from '../contracts/refusal';
import type { OperatorAction } from '../circles/operator';
import type { CircleActivities } from '../circles/names';
import { refusalFailure } from './refusal';

export type { CircleRegistryInput };

/** Synchronous validator body: malformed input is refused before it reaches history or state. */
const { circleOperatorKeys: loadOperatorKeys } = proxyLocalActivities<CircleActivities>({ startToCloseTimeout: '10s' });

function validate(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues(what, parsed.error.issues), FailureType.BadInput);
}

/** A refusal becomes a non-retryable `CircleRefused` failure of the Update, its code the one detail. */
function unwrap<T>(checked: Checked<T>): T {
  if (checked.ok) return checked.value;
  return refused(checked.refusal);
}

function refused(r: Refusal): never {
  throw refusalFailure(r, '', FailureType.CircleRefused);
}

export async function circleRegistryWorkflow(input: CircleRegistryInput = {}): Promise<void> {
  const state = RegistryState.fromHandover(input.handover, input.config ?? {}, {
    newCircleId: uuid4,
    // The workflow logger is replay-aware: each event is logged once, when it happens.
    onEvent: (event) => log.warn(`circles governance event: ${event.kind} ${event.code}`, { ...event }),
  });
  const config = state.config;
  let updatesThisRun = 0;
  // Workflow time: deterministic, and the registry's clock for freshness checks.
  const now = () => {
    updatesThisRun++;
    return Date.now();
  };

  // Operator keys come from the worker's configuration (a local activity below), never a client.
  // Undefined while a reading is due: at the run's start, and after each "keys changed" signal.
  let operatorKeys: string[] | undefined;
  let keysChanged = false;
  // Checked in the validator (read-only: a forged or replayed action never reaches history); an
  // Update that arrives while the keys are being read passes the validator and is checked by its
  // handler once they are. The handler's check also records the signature's nonce, so a captured
  // operator action is accepted once.
  const operatorOnly = (action: OperatorAction, req: OperatorInput) => {
    if (operatorKeys === undefined) return;
    const refusal = state.checkOperator(action, req, operatorKeys, Date.now());
    if (refusal) refused(refusal);
  };

  const asOperator = async <T>(
    action: OperatorAction,
    req: OperatorInput,
    apply: (at: number) => Checked<T>,
  ): Promise<T> => {
    if (operatorKeys === undefined) await condition(() => operatorKeys !== undefined);
    const at = now();
    const refusal = state.authorizeOperator(action, req, operatorKeys as string[], at);
    if (refusal) refused(refusal);
    return unwrap(apply(at));
  };

  setHandler(registerTopLevelUpdate, (req) => asOperator('register', req, (at) => state.registerTopLevel(req, at)), {
    validator: (req: RegisterInput) => {
      validate(RegisterInputSchema, req, 'register');
      operatorOnly('register', req);
    },
  });
  setHandler(spawnSubAgentUpdate, (req) => unwrap(state.spawnSubAgent(req, now())), {
    validator: (req) => validate(SignedMembershipSchema, req, 'spawn'),
  });
  // KNOCK is an Update, not a Query: it needs an answer *and* it changes state (nonces, events).
  setHandler(knockUpdate, (req) => state.knock(req, now()), {
    validator: (req) => validate(SignedKnockSchema, req, 'knock'),
  });
  setHandler(retireUpdate, (req) => asOperator('retire', req, (at) => state.retire(req, at)), {
    validator: (req: RetireInput) => {
      validate(RetireInputSchema, req, 'retire');
      operatorOnly('retire', req);
    },
  });
  setHandler(allowPairUpdate, (req) => asOperator('allow-pair', req, (at) => state.allowPair(req, at)), {
    validator: (req: PairInput) => {
      validate(PairInputSchema, req, 'allow-pair');
      operatorOnly('allow-pair', req);
    },
  });
  setHandler(revokePairUpdate, (req) => asOperator('revoke-pair', req, () => state.revokePair(req)), {
    validator: (req: PairInput) => {
      validate(PairInputSchema, req, 'revoke-pair');
      operatorOnly('revoke-pair', req);
    },
  });
  setHandler(requestCrossCircleUpdate, (req) => unwrap(state.requestCrossCircle(req, now())), {
    validator: (req) => validate(SignedBridgeRequestSchema, req, 'request_cross_circle'),
  });
  setHandler(decideCrossCircleUpdate, (req) => unwrap(state.decideCrossCircle(req, now())), {
    validator: (req) => validate(SignedBridgeDecisionSchema, req, 'bridge decision'),
  });

  // Queries have no validators: each handler validates its ids itself, so a malformed id (such as
  // `__proto__`) is refused with a message naming the field instead of reaching a lookup.
  setHandler(agentQuery, (amid) => {
    validate(AmidSchema, amid, 'amid');
    return state.agent(amid);
  });
  setHandler(discoverQuery, (requester) => {
    validate(AmidSchema, requester, 'requester');
    return state.discover(requester);
  });
  setHandler(treeQuery, (opts) => {
    validate(TreeFilterSchema, opts ?? {}, 'tree');
    return state.tree(opts?.circle_id);
  });
  setHandler(eventsQuery, (filter) => {
    validate(EventsFilterSchema, filter ?? {}, 'events filter');
    return state.eventsView(filter ?? {});
  });
  setHandler(bridgeQuery, (amid) => {
    validate(AmidSchema, amid, 'amid');
    return state.bridgeFor(amid);
  });
  setHandler(statsQuery, () => state.statsView());
  setHandler(dumpQuery, () => state.dump());
  setHandler(runInfoQuery, () => ({
    run_id: workflowInfo().runId,
    history_length: workflowInfo().historyLength,
    updates_this_run: updatesThisRun,
    generation: state.statsView().generation,
    agents: state.agentCount(),
  }));

  // A worker (re)started with other keys says so. The signal carries no keys: anyone may send it,
  // and all it does is make the registry read them again from its worker's configuration. Operator
  // actions wait from this moment until the new keys are read, so none is judged by stale keys.
  setHandler(operatorKeysChangedSignal, () => {
    keysChanged = true;
    operatorKeys = undefined;
  });

  let keysRead = await loadOperatorKeys();
  // A signal that came with the run's first task leaves the keys to be read again below.
  if (!keysChanged) operatorKeys = keysRead;

  // Roll over well before the server's limits (2,000 Updates per run, 10,240-event warning).
  const rollOver = () =>
    updatesThisRun >= config.maxUpdatesPerRun ||
    workflowInfo().historyLength >= config.maxHistoryEvents ||
    workflowInfo().continueAsNewSuggested;
  for (;;) {
    // Drain the handlers before rolling over; keys are read then too, since an operator action
    // waiting for them could not finish otherwise.
    await condition(() => keysChanged || (rollOver() && allHandlersFinished()));
    if (!keysChanged) break;
    keysChanged = false;
    const keys = await loadOperatorKeys();
    // Another signal during the reading: read again rather than apply what may be stale.
    if (keysChanged) continue;
    if (keys.length !== keysRead.length || keys.some((k) => !keysRead.includes(k))) {
      log.warn(`circles governance event: operator keys changed (${keysRead.length} -> ${keys.length})`, {
        before: keysRead,
        after: keys,
      });
    }
    keysRead = keys;
    operatorKeys = keys;
  }
  state.nextGeneration();
  await continueAsNew<typeof circleRegistryWorkflow>({ config: input.config, handover: state.handover() });
}
