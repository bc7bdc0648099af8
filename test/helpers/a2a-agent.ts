/**
 * A real A2A agent on loopback, built with the SDK's own server (DefaultRequestHandler behind its
 * Express JSON-RPC handler): what stands behind the A2A front in the tests. It answers every
 * message with one text message and keeps what it received.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import express from 'express';
import { AGENT_CARD_PATH, Role, type AgentCard, type Message } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2A_METADATA } from '../../src/a2a/names';

export interface LoopbackAgent {
  url: string;
  received: Message[];
  close(): Promise<void>;
}

export async function startLoopbackAgent(name: string): Promise<LoopbackAgent> {
  const received: Message[] = [];
  const executor: AgentExecutor = {
    execute(ctx, bus) {
      received.push(ctx.userMessage);
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');
      const from = String((ctx.userMessage.metadata ?? {})[A2A_METADATA.verifiedFrom] ?? 'nobody');
      bus.publish(
        AgentEvent.message({
          messageId: `${name}-${received.length}`,
          contextId: ctx.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [
            {
              content: { $case: 'text', value: `${name} received "${text}" from ${from}` },
              metadata: undefined,
              filename: '',
              mediaType: 'text/plain',
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
      return Promise.resolve();
    },
    cancelTask: () => Promise.resolve(),
  };
  const app = express();
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name,
    description: `test agent ${name}`,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
