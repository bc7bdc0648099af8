/**
 * The A2A front at the circle boundary: one HTTP server that serves an agent card and a JSON-RPC
 * endpoint per active top-level agent of the circle registry, and nothing for sub-agents. A caller
 * outside a circle can address only a top-level agent; every message is checked by the registry
 * (KNOCK, or the cross-circle bridge) before the agent sees it (see `gate.ts`).
 *
 *   GET  /agents                                   the top-level agents and their card URLs
 *   GET  /agents/<amid>/.well-known/agent-card.json that agent's card (404 for anyone else)
 *   POST /agents/<amid>                            A2A JSON-RPC (SendMessage, GetTask, CancelTask)
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { AGENT_CARD_PATH, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { toJsonRpcError } from '@a2a-js/sdk/errors';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type A2ARequestHandler,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import type { CircleRegistryClient } from '../client/circles';
import { AmidSchema } from '../contracts/identity';
import type { Logger } from '../contracts/logger';
import { agentCard, isReachable, topLevelAgents, type TopLevelAgent } from './cards';
import { KnockGate } from './gate';
import { credentialOf } from './message';
import { A2A_AGENTS_PATH, A2A_METADATA, agentUrl } from './names';

export interface A2AFrontOptions {
  registry: CircleRegistryClient;
  /** Listen address (default 127.0.0.1; port 0 picks a free one). */
  host?: string;
  port?: number;
  /** Base URL the cards name (default http://<host>:<port>); set it when a proxy terminates TLS. */
  publicUrl?: string;
  /** The agent behind each top-level AMID; an admitted message for one without it fails. */
  deliverTo?: (amid: string) => AgentExecutor | undefined;
  /** Card `version` (the package's). */
  version?: string;
  registryTimeoutMs?: number;
  /** Required: the command's logger (refused agents, every KNOCK and bridge request with its answer). */
  logger: Logger;
}

export interface A2AFront {
  /** The public base URL. */
  url: string;
  /** Where it listens. */
  address: AddressInfo;
  close(): Promise<void>;
}

type Guarded = Pick<
  A2ARequestHandler,
  | 'getAgentCard'
  | 'sendMessage'
  | 'getTask'
  | 'cancelTask'
  | 'getAuthenticatedExtendedAgentCard'
  | 'createTaskPushNotificationConfig'
  | 'getTaskPushNotificationConfig'
  | 'listTaskPushNotificationConfigs'
  | 'deleteTaskPushNotificationConfig'
  | 'listTasks'
>;

/**
 * The SDK's request handler with the front's rules in front of it: a message's shape and
 * credential are checked before a task exists; streaming, task listing (it would show other
 * callers' tasks) and push notifications are refused.
 */
function guardedHandler(inner: DefaultRequestHandler, target: string): A2ARequestHandler {
  const refused = (what: string): never => {
    throw new UnsupportedOperationError(`${what} is not offered by the agent-judge A2A front`);
  };
  const guarded: Guarded = {
    getAgentCard: () => inner.getAgentCard(),
    async sendMessage(params, context): Promise<Message | Task> {
      credentialOf(params.message, target);
      const metadata = params.message?.metadata;
      // The front alone says who sent a message, after the registry checked it.
      if (metadata) delete metadata[A2A_METADATA.verifiedFrom];
      return inner.sendMessage(params, context);
    },
    getTask: (params, context) => inner.getTask(params, context),
    cancelTask: (params, context) => inner.cancelTask(params, context),
    getAuthenticatedExtendedAgentCard: () => Promise.reject(new ExtendedAgentCardNotConfiguredError()),
    createTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
    getTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
    listTaskPushNotificationConfigs: () => Promise.reject(new PushNotificationNotSupportedError()),
    deleteTaskPushNotificationConfig: () => Promise.reject(new PushNotificationNotSupportedError()),
    listTasks: () => Promise.resolve(refused('ListTasks')),
  };
  return {
    ...guarded,
    // The JSON-RPC transport calls these inside its own try: a throw here is the caller's error.
    sendMessageStream: () => refused('streaming (SendStreamingMessage)'),
    resubscribe: () => refused('SubscribeToTask'),
  };
}

/** The JSON-RPC answer for a request addressed to anything but an active top-level agent. */
function notReachable(res: Response, amid: string, rpc: boolean): void {
  const message =
    `${amid} is not a top-level agent served by this front: only top-level agents are reachable over A2A ` +
    '(a sub-agent is reached through its parent)';
  if (rpc)
    res.status(404).json({ jsonrpc: '2.0', id: null, error: toJsonRpcError(new RequestMalformedError(message)) });
  else res.status(404).json({ error: message });
}

/** Starts the front; resolves once it listens. */
export async function startA2AFront(options: A2AFrontOptions): Promise<A2AFront> {
  const { registry } = options;
  const host = options.host ?? '127.0.0.1';
  let publicUrl = options.publicUrl ?? '';
  const version = options.version ?? '0.0.0';
  const perAgent = new Map<string, { card: RequestHandler; rpc: RequestHandler }>();

  const cardFor = (agent: TopLevelAgent): AgentCard => agentCard(agent, publicUrl, version);
  const endpointsFor = (agent: TopLevelAgent) => {
    let endpoints = perAgent.get(agent.amid);
    if (!endpoints) {
      const card = cardFor(agent);
      const gate = new KnockGate({
        registry,
        target: agent.amid,
        deliver: options.deliverTo?.(agent.amid),
        ...(options.registryTimeoutMs ? { registryTimeoutMs: options.registryTimeoutMs } : {}),
        logger: options.logger,
      });
      // One task store per agent: a task id handed out by one agent means nothing at another.
      const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), gate);
      const requestHandler = guardedHandler(inner, agent.amid);
      endpoints = {
        card: agentCardHandler({ agentCardProvider: () => Promise.resolve(card), cache: { maxAge: 60 } }),
        rpc: jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }),
      };
      perAgent.set(agent.amid, endpoints);
    }
    return endpoints;
  };

  const app = express();
  app.disable('x-powered-by');
  app.get(A2A_AGENTS_PATH, (_req, res, next) => {
    registry
      .tree()
      .then((tree) => {
        const agents = topLevelAgents(tree).map((a) => ({
          amid: a.amid,
          org: a.org,
          url: agentUrl(publicUrl, a.amid),
          card_url: `${agentUrl(publicUrl, a.amid)}${AGENT_CARD_PATH}`,
        }));
        res.json({ agents });
      })
      .catch(next);
  });
  app.use(`${A2A_AGENTS_PATH}/:amid`, (req: Request<{ amid: string }>, res, next) => {
    const amid = req.params.amid;
    const isCard = req.path === `/${AGENT_CARD_PATH}`;
    const isRpc = req.path === '/' && req.method === 'POST';
    if (!isCard && !isRpc) {
      res.status(404).json({ error: `no such endpoint: ${req.method} ${req.originalUrl}` });
      return;
    }
    if (!AmidSchema.safeParse(amid).success) {
      notReachable(res, JSON.stringify(amid), isRpc);
      return;
    }
    registry
      .agent(amid)
      .then((record) => {
        if (!isReachable(record)) {
          options.logger.info({ method: req.method, amid }, 'refused: not an active top-level agent');
          notReachable(res, amid, isRpc);
          return;
        }
        const endpoints = endpointsFor({ amid: record.amid, org: record.org });
        if (isCard) {
          req.url = '/';
          endpoints.card(req, res, next);
        } else endpoints.rpc(req, res, next);
      })
      .catch(next);
  });

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address() as AddressInfo; // listening on TCP, never a pipe
  if (!publicUrl) publicUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  return {
    url: publicUrl,
    address,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
