/**
 * The KNOCK gate in front of one top-level agent: an A2A `AgentExecutor` that asks the circle
 * registry about every message before the agent sees it. A direct message passes only when the
 * registry allows its signed KNOCK; a sub-agent's cross-circle request is handed to the registry's
 * bridge and waits there for both parents. The registry records the governance events, as it
 * does for `circles knock` and `circles bridge request`: this file has no policy of its own.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { CircleRegistryClient } from '../client/circles';
import { CircleRefusedError } from '../circles/errors';
import type { Logger } from '../contracts/logger';
import { credentialOf, type Credential } from './message';
import { A2A_METADATA, A2A_TASK_METADATA } from './names';

export interface KnockGateOptions {
  registry: CircleRegistryClient;
  /** The addressed top-level agent. */
  target: string;
  /** What receives an admitted message: the agent itself (or a forwarder to it); none answers "failed". */
  deliver?: AgentExecutor;
  /** How long the registry may take to answer (default 10 s); no answer fails the task, closed. */
  registryTimeoutMs?: number;
  /** The front's logger: each KNOCK and bridge request, with the registry's answer. */
  logger: Logger;
}

function agentMessage(text: string, ctx: RequestContext): Message {
  return {
    messageId: randomUUID(),
    contextId: ctx.contextId,
    taskId: ctx.taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function taskOf(ctx: RequestContext, state: TaskState, text: string, metadata: Record<string, string>): Task {
  return {
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state, message: agentMessage(text, ctx), timestamp: new Date().toISOString() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata,
  };
}

async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer from the circle registry within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class KnockGate implements AgentExecutor {
  private readonly timeoutMs: number;
  constructor(private readonly options: KnockGateOptions) {
    this.timeoutMs = options.registryTimeoutMs ?? 10_000;
  }

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const credential: Credential = credentialOf(ctx.userMessage, this.options.target, false);
    if (credential.kind === 'bridge') return this.bridge(credential.signed, ctx, bus);
    const from = credential.signed.statement.from;
    const knock = await within(this.timeoutMs, 'KNOCK', this.options.registry.knockSigned(credential.signed));
    this.options.logger.info(
      { from, to: this.options.target, allowed: knock.allowed, code: knock.code },
      knock.allowed ? 'knock allowed' : 'knock denied',
    );
    if (!knock.allowed) {
      bus.publish(
        AgentEvent.task(
          taskOf(ctx, TaskState.TASK_STATE_REJECTED, `KNOCK denied (${knock.code}): ${knock.reason}`, {
            [A2A_TASK_METADATA.code]: knock.code,
          }),
        ),
      );
      return;
    }
    const deliver = this.options.deliver;
    if (!deliver) {
      bus.publish(
        AgentEvent.task(
          taskOf(
            ctx,
            TaskState.TASK_STATE_FAILED,
            `KNOCK allowed (${knock.code}), but ${this.options.target} has no endpoint behind this front`,
            { [A2A_TASK_METADATA.code]: knock.code },
          ),
        ),
      );
      return;
    }
    // The only sender identity the agent may trust: the one the registry just verified.
    ctx.userMessage.metadata = { ...(ctx.userMessage.metadata ?? {}), [A2A_METADATA.verifiedFrom]: from };
    await deliver.execute(ctx, bus);
  }

  private async bridge(
    signed: Extract<Credential, { kind: 'bridge' }>['signed'],
    ctx: RequestContext,
    bus: ExecutionEventBus,
  ): Promise<void> {
    const from = signed.statement.from;
    try {
      const request = await within(
        this.timeoutMs,
        'cross-circle request',
        this.options.registry.requestCrossCircleSigned(signed),
      );
      this.options.logger.info(
        { from, to: this.options.target, request_id: request.request_id, status: request.status },
        'cross-circle request made',
      );
      bus.publish(
        AgentEvent.task(
          taskOf(
            ctx,
            TaskState.TASK_STATE_SUBMITTED,
            `cross-circle request ${request.request_id} awaits parent ${request.source_parent}; ` +
              `${request.target_parent} reads it with circles bridge list once both parents let it through`,
            { [A2A_TASK_METADATA.code]: 'requested', [A2A_TASK_METADATA.bridgeRequestId]: request.request_id },
          ),
        ),
      );
    } catch (err) {
      if (!(err instanceof CircleRefusedError)) throw err;
      this.options.logger.info({ from, to: this.options.target, code: err.code }, 'cross-circle request refused');
      bus.publish(
        AgentEvent.task(
          taskOf(ctx, TaskState.TASK_STATE_REJECTED, `cross-circle request refused (${err.code}): ${err.message}`, {
            [A2A_TASK_METADATA.code]: err.code,
          }),
        ),
      );
    }
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    if (this.options.deliver) return this.options.deliver.cancelTask(taskId, bus);
  }
}
