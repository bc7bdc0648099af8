/**
 * Issue 21, finding 3: the MCP proxy's admission of agent messages (src/mcp/admission.ts), a pure function. Its lists
 * of client requests and notifications are the SDK's schemas', so a new MCP version that adds one is noticed here.
 */
import { ClientNotificationSchema, ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { admit, CLIENT_NOTIFICATIONS, CLIENT_REQUESTS } from '../../src/mcp/admission';

const methodsOf = (union: { options: ReadonlyArray<{ shape: { method: { value: string } } }> }) =>
  union.options.map((o) => o.shape.method.value).sort();

describe('admit', () => {
  it('knows exactly the client requests and notifications of the SDK', () => {
    expect([...CLIENT_REQUESTS].sort()).toEqual(methodsOf(ClientRequestSchema));
    expect([...CLIENT_NOTIFICATIONS].sort()).toEqual(methodsOf(ClientNotificationSchema));
  });

  it('passes client requests, client notifications and answers the upstream awaits', () => {
    const awaited = new Set<string | number>(['s-1']);
    expect(admit({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }, awaited)).toEqual({
      pass: true,
    });
    expect(admit({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, awaited)).toEqual({
      pass: true,
    });
    expect(admit({ jsonrpc: '2.0', id: 's-1', result: { roots: [] } }, awaited)).toEqual({ pass: true });
    expect(admit({ jsonrpc: '2.0', id: 's-1', error: { code: -1, message: 'no' } }, awaited)).toEqual({ pass: true });
  });

  it('drops the rest, answering what has an id', () => {
    const none = new Set<string | number>();
    expect(admit({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'x' } }, none)).toMatchObject({
      pass: false,
      reason: 'not_a_client_notification',
      method: 'tools/call',
    });
    expect(admit({ jsonrpc: '2.0', id: 7, method: 'sampling/createMessage' }, none)).toMatchObject({
      pass: false,
      reason: 'unknown_method',
      answer: { id: 7, error: { code: -32601 } },
    });
    expect(admit({ jsonrpc: '2.0', id: 's-2', result: {} }, none)).toMatchObject({ reason: 'unexpected_response' });
    expect(admit({ jsonrpc: '1.0', id: 3, method: 'ping' }, none)).toMatchObject({
      reason: 'malformed',
      answer: { id: 3, error: { code: -32600 } },
    });
    expect(admit('ping', none)).toMatchObject({ reason: 'malformed' });
    expect(
      admit(
        [
          { jsonrpc: '2.0', id: 1, method: 'tools/call' },
          { jsonrpc: '2.0', method: 'tools/call' },
        ],
        none,
      ),
    ).toMatchObject({
      reason: 'batch',
      method: 'tools/call,tools/call',
      answers: [{ id: 1, error: { code: -32600 } }],
    });
  });
});
