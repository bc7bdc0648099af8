/**
 * The trust-circle API for agent runtimes and operators: one method per registry operation.
 * Statements are signed here, with the caller's own key, and verified again by the registry
 * workflow; the client never asks the registry to trust it. The first call on a namespace starts
 * the registry (start-if-missing), so there is no separate setup step.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, type QueryDefinition, type UpdateDefinition } from '@temporalio/common';
import { BadInputError } from '../contracts/errors';
import { FailureType } from '../contracts/lifecycle';
import { grpcCode, GrpcStatus } from './grpc';
import { DEFAULT_TASK_QUEUES } from '../names';
import { describeIssues } from '../contracts/zod-error';
import type { RegistryConfig } from '../circles/config';
import { CircleRefusedError } from '../circles/errors';
import { AmidSchema, KeyFileSchema, PublicKeySchema, type KeyFile } from '../contracts/identity';
import { amidFromPublicKey } from '../identity/verify';
import { newNonce, signBytes } from '../identity/keys';
import { signStatement } from '../circles/sign';
import { operatorSigningBytes, type OperatorAction } from '../circles/operator';
import {
  agentQuery,
  allowPairUpdate,
  bridgeQuery,
  CIRCLE_REGISTRY_WORKFLOW_ID,
  CIRCLE_REGISTRY_WORKFLOW_TYPE,
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
  type RegistryRunInfo,
} from '../circles/names';
import {
  CircleIdSchema,
  SignedBridgeDecisionSchema,
  SignedBridgeRequestSchema,
  SignedKnockSchema,
  SignedMembershipSchema,
  type BridgeDecisionStatement,
  type MembershipStatement,
  type SignedBridgeDecision,
  type SignedBridgeRequest,
  type SignedKnock,
  type SignedMembership,
} from '../circles/schemas';
import type { EventsView, PairResult, RegistryDump, RegistryTree, RetireResult } from '../circles/state';
import type {
  AgentRecord,
  BridgeRequest,
  DiscoveredAgent,
  KnockResult,
  RegisteredAgent,
  RegistryStats,
} from '../circles/types';
import type { z } from 'zod';

export interface CircleRegistryClientOptions {
  client: Client;
  /** Default `circle-registry` (one per namespace); tests use their own. */
  workflowId?: string;
  /** Where the registry runs if this call has to start it (default: the workflow task queue). */
  taskQueue?: string;
  /** Registry tunables, used only when this client starts the registry. */
  config?: Partial<RegistryConfig>;
  /** Operator key file: when set, operator actions (register, retire, pairs) are signed with it. */
  operatorKey?: KeyFile;
  /**
   * Updates this client keeps in flight at once (default 8). The server refuses more than 10 per
   * workflow run, and a storm of refusals and retries stalls the run's workflow tasks; queueing
   * here is cheaper.
   */
  maxInFlight?: number;
}

/** A counting semaphore: at most `limit` holders at once, the rest wait in order. */
class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new BadInputError(describeIssues(what, parsed.error.issues));
  return parsed.data;
}

/**
 * Errors worth retrying, by gRPC status: RESOURCE_EXHAUSTED (more than 10 Updates in flight on the
 * run) and UNAVAILABLE (among others "workflow update was aborted": the run closed for
 * continue-as-new before accepting the Update, so it was not applied).
 */
function isTransient(err: unknown): boolean {
  const code = grpcCode(err);
  return code === GrpcStatus.RESOURCE_EXHAUSTED || code === GrpcStatus.UNAVAILABLE;
}

/**
 * Tells every running registry on `taskQueue` that its operator keys may have changed, so it reads
 * them again from its worker's configuration within seconds instead of at its next continue-as-new.
 * Workflow workers call this at start. The signal carries no keys. Returns the registries told.
 */
export async function announceOperatorKeys(client: Client, taskQueue: string): Promise<string[]> {
  const told: string[] = [];
  const query =
    `WorkflowType = '${CIRCLE_REGISTRY_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' ` +
    `AND TaskQueue = '${taskQueue.replace(/['\\]/g, '')}'`;
  for await (const wf of client.workflow.list({ query })) {
    try {
      await client.workflow.getHandle(wf.workflowId).signal(operatorKeysChangedSignal);
      told.push(wf.workflowId);
    } catch (err) {
      // Closed (continued as new) since the listing: its next run reads the keys at its start.
      if (grpcCode(err) !== GrpcStatus.NOT_FOUND && !(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return told;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A handle on one namespace's circle registry. Cheap to create; reuse it to skip the start check.
 */
export class CircleRegistryClient {
  readonly client: Client;
  readonly workflowId: string;
  readonly taskQueue: string;
  private readonly config?: Partial<RegistryConfig>;
  private started: Promise<void> | undefined;
  private readonly gate: Gate;

  constructor(options: CircleRegistryClientOptions) {
    this.client = options.client;
    this.workflowId = options.workflowId ?? CIRCLE_REGISTRY_WORKFLOW_ID;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow;
    this.config = options.config;
    this.operatorKey = options.operatorKey;
    this.gate = new Gate(Math.max(1, Math.min(10, options.maxInFlight ?? 8)));
  }

  private readonly operatorKey?: KeyFile;

  /** The input with an operator signature when this client holds an operator key. */
  private asOperator<T extends object>(action: OperatorAction, input: T): T {
    if (!this.operatorKey) return input;
    const signedAt = Date.now();
    const nonce = newNonce();
    const signature = signBytes(operatorSigningBytes(action, input, signedAt, nonce), this.operatorKey.private_key);
    return { ...input, operator: { public_key: this.operatorKey.public_key, signed_at: signedAt, nonce, signature } };
  }

  private handle(): WorkflowHandle {
    return this.client.workflow.getHandle(this.workflowId);
  }

  /** Starts the registry unless it is already running (idempotent, safe from many processes). */
  async ensureStarted(): Promise<void> {
    this.started ??= this.client.workflow
      .start(CIRCLE_REGISTRY_WORKFLOW_TYPE, {
        workflowId: this.workflowId,
        taskQueue: this.taskQueue,
        args: [{ config: this.config } satisfies CircleRegistryInput],
        workflowIdConflictPolicy: 'USE_EXISTING',
      })
      .then(
        () => undefined,
        (err: unknown) => {
          this.started = undefined;
          throw err;
        },
      );
    return this.started;
  }

  private async update<Ret, Arg>(
    def: UpdateDefinition<Ret, [Arg]>,
    arg: Arg,
    updateId: string = randomUUID(),
  ): Promise<Ret> {
    await this.ensureStarted();
    for (let attempt = 0; ; attempt++) {
      try {
        // The same update id on every attempt: an attempt the server already took is not applied twice.
        return await this.gate.run(() => this.handle().executeUpdate(def, { args: [arg], updateId }));
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) throw mapFailure(err);
        if (attempt < 30 && isTransient(err)) {
          await sleep(Math.min(250, 5 * 2 ** attempt));
          continue;
        }
        throw err;
      }
    }
  }

  private async query<Ret, Args extends unknown[]>(def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    await this.ensureStarted();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.handle().query(def, ...args);
      } catch (err) {
        if (attempt < 10 && isTransient(err)) {
          await sleep(Math.min(250, 10 * 2 ** attempt));
          continue;
        }
        throw err;
      }
    }
  }

  /** Operator action: registers a top-level agent, which gets a new circle. */
  async registerTopLevel(input: { public_key: string; org?: string }): Promise<RegisteredAgent> {
    const publicKey = parse(PublicKeySchema, input.public_key, 'public_key');
    return this.update(
      registerTopLevelUpdate,
      this.asOperator('register', { public_key: publicKey, ...(input.org ? { org: input.org } : {}) }),
    );
  }

  /**
   * Spawns a sub-agent: the parent signs the membership statement locally with its key file.
   * The circle id defaults to the parent's registered circle (override only to test spoofing).
   */
  async spawnSubAgent(input: {
    parentKey: KeyFile;
    childPublicKey: string;
    circleId?: string;
    time?: number;
  }): Promise<RegisteredAgent> {
    const parentKey = parse(KeyFileSchema, input.parentKey, 'parent key');
    const childPublicKey = parse(PublicKeySchema, input.childPublicKey, 'public_key');
    let circleId = input.circleId;
    if (!circleId) {
      const parent = await this.agent(parentKey.amid);
      if (!parent) throw new CircleRefusedError(`parent ${parentKey.amid} is not a registered agent`, 'unknown-parent');
      circleId = parent.circle_id;
    }
    const statement: MembershipStatement = {
      child_amid: amidFromPublicKey(childPublicKey),
      child_public_key: childPublicKey,
      circle_id: circleId,
      parent_amid: parentKey.amid,
      time: input.time ?? Date.now(),
    };
    return this.spawnSigned({ statement, signature: signStatement('membership', statement, parentKey.private_key) });
  }

  /** Submits a membership statement someone else signed (e.g. handed over by the parent). */
  async spawnSigned(signed: SignedMembership): Promise<RegisteredAgent> {
    return this.update(spawnSubAgentUpdate, parse(SignedMembershipSchema, signed, 'spawn'));
  }

  /** KNOCKs `to` as the owner of `key`; the answer says allowed or denied, and why. */
  async knock(input: { key: KeyFile; to: string; time?: number; nonce?: string }): Promise<KnockResult> {
    const key = parse(KeyFileSchema, input.key, 'key');
    const statement = {
      from: key.amid,
      to: parse(AmidSchema, input.to, 'to'),
      time: input.time ?? Date.now(),
      nonce: input.nonce ?? newNonce(),
    };
    return this.knockSigned({ statement, signature: signStatement('knock', statement, key.private_key) });
  }

  /** Submits an already signed KNOCK (what a relay would do). */
  async knockSigned(signed: SignedKnock): Promise<KnockResult> {
    // A random Update id per call, never one derived from the nonce: the server answers a repeated
    // Update id with the first result, which would hand a replayer the original "allowed".
    return this.update(knockUpdate, parse(SignedKnockSchema, signed, 'knock'));
  }

  /** The peers `requester` may see; throws when it is not registered. */
  async discover(requester: string): Promise<DiscoveredAgent[]> {
    const amid = parse(AmidSchema, requester, 'requester');
    const agents = await this.query(discoverQuery, amid);
    if (agents === null) throw new CircleRefusedError(`agent ${amid} is not registered`, 'unknown-agent');
    return agents;
  }

  async agent(amid: string): Promise<AgentRecord | null> {
    return this.query(agentQuery, parse(AmidSchema, amid, 'amid'));
  }

  async tree(circleId?: string): Promise<RegistryTree> {
    return this.query(treeQuery, circleId ? { circle_id: parse(CircleIdSchema, circleId, 'circle_id') } : {});
  }

  /** Operator action: retires the agent and its whole sub-tree; returns every AMID retired. */
  async retire(amid: string, reason?: string): Promise<RetireResult> {
    return this.update(
      retireUpdate,
      this.asOperator('retire', { amid: parse(AmidSchema, amid, 'amid'), ...(reason ? { reason } : {}) }),
    );
  }

  async allowPair(a: string, b: string): Promise<PairResult> {
    return this.update(
      allowPairUpdate,
      this.asOperator('allow-pair', { a: parse(AmidSchema, a, 'first amid'), b: parse(AmidSchema, b, 'second amid') }),
    );
  }

  async revokePair(a: string, b: string): Promise<PairResult> {
    return this.update(
      revokePairUpdate,
      this.asOperator('revoke-pair', { a: parse(AmidSchema, a, 'first amid'), b: parse(AmidSchema, b, 'second amid') }),
    );
  }

  /** Governance events at or after `since` (epoch ms); the totals are exact over the registry's life. */
  async events(filter: { since?: number; limit?: number } = {}): Promise<EventsView> {
    return this.query(eventsQuery, filter);
  }

  /** A sub-agent's `request_cross_circle(target, message)`: goes to its parent first. */
  async requestCrossCircle(input: { key: KeyFile; to: string; message: string }): Promise<BridgeRequest> {
    const key = parse(KeyFileSchema, input.key, 'key');
    const statement = { from: key.amid, to: input.to, message: input.message, time: Date.now(), nonce: newNonce() };
    const signed = parse(
      SignedBridgeRequestSchema,
      { statement, signature: signStatement('bridge-request', statement, key.private_key) },
      'request_cross_circle',
    );
    return this.update(requestCrossCircleUpdate, signed);
  }

  /**
   * A parent's decision on a cross-circle request: forward / decline (sender's parent), deliver /
   * decline (target's parent).
   */
  async decideCrossCircle(input: {
    key: KeyFile;
    requestId: string;
    decision: BridgeDecisionStatement['decision'];
    reason?: string;
  }): Promise<BridgeRequest> {
    const key = parse(KeyFileSchema, input.key, 'key');
    const statement: BridgeDecisionStatement = {
      request_id: input.requestId,
      by: key.amid,
      decision: input.decision,
      ...(input.reason ? { reason: input.reason } : {}),
      time: Date.now(),
      nonce: newNonce(),
    };
    const signed: SignedBridgeDecision = parse(
      SignedBridgeDecisionSchema,
      { statement, signature: signStatement('bridge-decision', statement, key.private_key) },
      'bridge decision',
    );
    return this.update(decideCrossCircleUpdate, signed);
  }

  /** Submits a signed cross-circle request as is. */
  async requestCrossCircleSigned(signed: SignedBridgeRequest): Promise<BridgeRequest> {
    return this.update(requestCrossCircleUpdate, parse(SignedBridgeRequestSchema, signed, 'request_cross_circle'));
  }

  /** Cross-circle requests `amid` sent, must decide, or received. */
  async bridgeFor(amid: string): Promise<BridgeRequest[]> {
    return this.query(bridgeQuery, parse(AmidSchema, amid, 'amid'));
  }

  async stats(): Promise<RegistryStats> {
    return this.query(statsQuery);
  }

  async runInfo(): Promise<RegistryRunInfo> {
    return this.query(runInfoQuery);
  }

  /** Everything the registry holds (for audits; large with many agents). */
  async dump(): Promise<RegistryDump> {
    return this.query(dumpQuery);
  }
}

/** Maps an Update's failure to the project's errors: malformed input is bad input, a refusal is a refusal. */
function mapFailure(err: WorkflowUpdateFailedError): Error {
  const cause = err.cause;
  if (cause instanceof ApplicationFailure) {
    if (cause.type === FailureType.BadInput) return new BadInputError(cause.message);
    if (cause.type === FailureType.CircleRefused) {
      const code: unknown = cause.details?.[0];
      return new CircleRefusedError(cause.message, typeof code === 'string' ? code : 'refused');
    }
  }
  return err;
}

export type { RegistryRunInfo };
