/**
 * Which of the agent's messages the MCP proxy lets through to the upstream (issue 21): only what the MCP
 * specification lets a client send. A request with an id and a client method (a `tools/call` is then judged), a
 * notification the specification defines for a client, or the answer to a request the upstream made (sampling,
 * elicitation, roots, ping). Anything else is dropped: a `tools/call` sent as a notification (no id) would reach the
 * upstream unjudged, and a generic JSON-RPC server performs it. Both fronts (stdio and Streamable HTTP) ask here.
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

type Id = string | number;

/** The requests a client may send (MCP 2025-11-25, the SDK's `ClientRequestSchema`). */
export const CLIENT_REQUESTS: ReadonlySet<string> = new Set([
  'ping',
  'initialize',
  'completion/complete',
  'logging/setLevel',
  'prompts/get',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'tools/call',
  'tools/list',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
]);

/** The notifications a client may send (MCP 2025-11-25, the SDK's `ClientNotificationSchema`). */
export const CLIENT_NOTIFICATIONS: ReadonlySet<string> = new Set([
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
]);

export { MCP_DROP_REASONS as DROP_REASONS, type McpDropReason as DropReason } from '../contracts/mcp-drop-reasons';
import type { McpDropReason as DropReason } from '../contracts/mcp-drop-reasons';

/** A JSON-RPC error response the agent gets for a dropped request (its id is known). */
export type ErrorAnswer = {
  jsonrpc: '2.0';
  id: Id;
  error: { code: number; message: string };
};

export type Admission =
  | { pass: true }
  | { pass: false; reason: DropReason; method: string | null; detail: string; answer?: ErrorAnswer };

/** A method name as it appears in a message to the agent or a log line: quoted, and cut (agent text). */
const quoted = (method: string) => JSON.stringify(method.length > 100 ? `${method.slice(0, 100)}…` : method);

const isId = (v: unknown): v is Id => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

function drop(reason: DropReason, method: string | null, detail: string, answerId?: Id, code?: number): Admission {
  const a: Admission = { pass: false, reason, method, detail };
  if (answerId !== undefined) {
    a.answer = { jsonrpc: '2.0', id: answerId, error: { code: code ?? ErrorCode.InvalidRequest, message: detail } };
  }
  return a;
}

/**
 * Whether one message from the agent may go on to the upstream. `awaited` holds the ids of the upstream's requests
 * the agent has not answered yet: only those answers pass. Pure: the caller logs, audits and answers.
 */
export function admit(message: unknown, awaited: ReadonlySet<Id>): Admission {
  if (Array.isArray(message)) return refuseBatch(message);
  if (message === null || typeof message !== 'object') {
    return drop('malformed', null, 'agent-judge: not a JSON-RPC 2.0 message');
  }
  const m = message as Record<string, unknown>;
  const method = typeof m.method === 'string' ? m.method : null;
  const hasId = 'id' in m && m.id !== undefined;
  if (m.jsonrpc !== '2.0' || (hasId && !isId(m.id)) || ('method' in m && method === null)) {
    return drop('malformed', method, 'agent-judge: not a JSON-RPC 2.0 message', isId(m.id) ? m.id : undefined);
  }
  if (method !== null && hasId) {
    if (CLIENT_REQUESTS.has(method)) return { pass: true };
    return drop(
      'unknown_method',
      method,
      `Method not found: ${quoted(method)} is not a request an MCP client sends (agent-judge relays only those)`,
      m.id as Id,
      ErrorCode.MethodNotFound,
    );
  }
  if (method !== null) {
    if (CLIENT_NOTIFICATIONS.has(method)) return { pass: true };
    return drop(
      'not_a_client_notification',
      method,
      `agent-judge: dropped the notification ${quoted(method)}: not a notification an MCP client sends` +
        (CLIENT_REQUESTS.has(method) ? ' (a request needs an id, and a tools/call is judged)' : ''),
    );
  }
  if (hasId && ('result' in m || 'error' in m) && awaited.has(m.id as Id)) return { pass: true };
  return drop(
    'unexpected_response',
    null,
    `agent-judge: dropped a response to ${hasId ? JSON.stringify(m.id) : 'no id'}: the upstream awaits no such answer`,
  );
}

/**
 * A batch is refused whole, nothing of it relayed: each element with an id gets an Invalid Request error (so a
 * client waiting on it hears why); notifications in it get nothing, as JSON-RPC has it.
 */
export function refuseBatch(batch: readonly unknown[]): Admission & { pass: false; answers: ErrorAnswer[] } {
  const detail = 'agent-judge: JSON-RPC batches are refused (MCP has none since 2025-06-18): send each message alone';
  const answers: ErrorAnswer[] = [];
  const methods: string[] = [];
  for (const e of batch) {
    const m = e !== null && typeof e === 'object' ? (e as Record<string, unknown>) : {};
    if (typeof m.method === 'string') methods.push(m.method);
    if (typeof m.method === 'string' && isId(m.id)) {
      answers.push({ jsonrpc: '2.0', id: m.id, error: { code: ErrorCode.InvalidRequest, message: detail } });
    }
  }
  return { pass: false, reason: 'batch', method: methods.length > 0 ? methods.join(',') : null, detail, answers };
}
