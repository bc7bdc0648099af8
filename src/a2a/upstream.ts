/**
 * Delivery to an agent's own A2A server (an "upstream"), for the `agent-judge a2a` command: an
 * admitted message is sent on with the SDK's client and the answer comes back as the front's.
 * The upstream should listen where only the front reaches it, or the front guards nothing.
 */
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import type { Message, Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';

export interface UpstreamOptions {
  /** How long the upstream may take to answer (default 5 minutes). */
  timeoutMs?: number;
}

/** An executor that forwards each admitted message to the A2A agent whose card is at `url`. */
export function upstreamExecutor(url: string, options: UpstreamOptions = {}): AgentExecutor {
  const timeoutMs = options.timeoutMs ?? 300_000;
  let client: Promise<Client> | undefined;
  const connect = (): Promise<Client> => {
    client ??= new ClientFactory().createFromUrl(url).catch((err: unknown) => {
      client = undefined;
      throw err;
    });
    return client;
  };
  return {
    async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
      const upstream = await connect();
      // A fresh task upstream: the front's task and context ids are the front's.
      const message: Message = { ...ctx.userMessage, taskId: '', contextId: '' };
      const answer = await upstream.sendMessage(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        { signal: AbortSignal.timeout(timeoutMs) },
      );
      if ('messageId' in answer) {
        bus.publish(AgentEvent.message({ ...answer, contextId: ctx.contextId, taskId: '' }));
      } else {
        const task: Task = { ...answer, id: ctx.taskId, contextId: ctx.contextId };
        bus.publish(AgentEvent.task(task));
      }
    },
    cancelTask(): Promise<void> {
      // The upstream's task is its own; the front's snapshot is final once published.
      return Promise.resolve();
    },
  };
}
