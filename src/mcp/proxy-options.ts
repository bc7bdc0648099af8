/** What an MCP judge proxy (proxy.ts) is made with: its two transports, its settings, and where it reports. */
import type { ProvenanceSettings } from '../contracts/provenance';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Client } from '@temporalio/client';
import type { SubmissionLimits } from '../client/limits';
import type { Logger } from '../contracts/logger';
import type { McpSettings } from '../contracts/mcp';
import type { McpCounters } from '../metrics/mcp';

export interface ProxyOptions {
  /** Speaks to the agent: stdio, or one session of the Streamable HTTP front. */
  front: Transport;
  /** Speaks to the upstream MCP server: a stdio child or a Streamable HTTP session (upstream.ts). */
  upstream: Transport;
  settings: McpSettings;
  /**
   * `spec.provenance` (docs/provenance.md): the upstream's results enter this proxy's session (one agent connection)
   * when the upstream is untrusted, and a later consequential call carrying their values is tainted. Absent: none.
   */
  provenance?: ProvenanceSettings;
  /** The upstream's name in rules and audit lines. */
  server: string;
  agentId: string;
  /** Where proposals go, and the per-agent limits they are held to (`spec.limits` of the proxy's policy). */
  temporal: { client: Client; taskQueue: string; limits?: SubmissionLimits };
  /** The hash-chained log of pass-through (no-judge) calls. */
  auditLog: string;
  /** The command's logger (the HTTP front's carries the session); what the proxy drops or cannot do is said here. */
  logger: Logger;
  /**
   * The proxy cannot go on (a tool collides with `_agent_judge`, the upstream exited or went away): the process ends
   * with this code (the `--http` front ends that one session instead).
   */
  onFatal: (message: string, exitCode: number) => void;
  /**
   * A call is about to be judged by the workers (not a no-judge pass-through): the CLI repeats its warning here
   * while this proxy's policy differs from the workers' (src/client/policy-in-force.ts).
   */
  onJudgedCall?: (tool: string) => void;
  /** Counts what the proxy refuses (`agent-judge mcp --metrics`). */
  counters?: McpCounters;
  /** Where MCP task records are kept (default: `mcp-tasks/` next to the audit log, i.e. in the state directory). */
  taskDir?: string;
}
