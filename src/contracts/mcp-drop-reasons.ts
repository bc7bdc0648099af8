/** Names only, no schemas: the metric catalogue (which workflow code loads) reads them. */

/** Why an agent message was dropped (closed set: audit lines and logs name it). */
export const MCP_DROP_REASONS = [
  /** A JSON-RPC batch (an array): MCP since 2025-06-18 has none, and each element would need judging on its own. */
  'batch',
  /** A notification (no id) whose method is not a client notification, e.g. `tools/call` without an id. */
  'not_a_client_notification',
  /** A request with an id whose method is not a client request: answered -32601 without reaching the upstream. */
  'unknown_method',
  /** A response (no method) to no request the upstream is waiting on. */
  'unexpected_response',
  /** Not a JSON-RPC 2.0 message of any kind. */
  'malformed',
] as const;
export type McpDropReason = (typeof MCP_DROP_REASONS)[number];
