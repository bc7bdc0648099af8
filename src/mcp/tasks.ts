/**
 * MCP Tasks (MCP 2025-11-25, utilities/tasks) for judged calls (issue 23): a client that declared `tasks` in its
 * `initialize` and sends a task-augmented `tools/call` gets a task instead of "pending: call again later". The task's
 * id is derived from the call's proposal workflow id, its state follows the proposal, and a small local record (the
 * call as it goes upstream, written before the task is answered) lets a restarted proxy answer `tasks/get` and
 * `tasks/result` for it and still perform an approved call, exactly once (the gate's lease). This file holds the
 * pure parts: ids, the records, the status mapping, the capability and `tools/list` edits; src/mcp/task-calls.ts and
 * proxy.ts run them.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8 } from '../contracts/encoding';
import type { ProposalRecord } from '../contracts/status';
import type { AgentStatement, GateRules } from '../gate';
import { matchRule } from '../gate';
import type { ToolDefinition } from './tools';

/** Every task the proxy itself answers has an id with this prefix; any other task id is the upstream's, relayed. */
export const TASK_ID_PREFIX = 'agent-judge/task/';
/** A task with no proposal behind it (refused before any was made): kept in memory only, already failed. */
const LOCAL_PREFIX = `${TASK_ID_PREFIX}local/`;

/** The `ttl` a task gets when the client asks for none (ms). */
export const DEFAULT_TASK_TTL_MS = 60 * 60 * 1000;
/** The longest `ttl` a task gets, whatever the client asks (ms). */
export const MAX_TASK_TTL_MS = 24 * 60 * 60 * 1000;
/** How often the client is asked to poll `tasks/get` (ms). */
export const TASK_POLL_INTERVAL_MS = 1000;
/** Tasks not yet finished per session (per relay); one more task-augmented call is refused with a JSON-RPC error. */
export const MAX_LIVE_TASKS = 32;
/** Tasks a session remembers in memory (finished ones are dropped oldest first; their records stay on disk). */
export const MAX_REMEMBERED_TASKS = 1000;
/** A finished call's upstream result is kept in its record up to this size (bytes of JSON); larger, it is omitted. */
const MAX_RECORDED_RESULT = 1024 * 1024;

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The Task object of the MCP specification. */
export interface McpTask {
  taskId: string;
  status: TaskStatus;
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval?: number;
  statusMessage?: string;
}

/** What a restarted proxy needs to answer for a task and to perform its approved call (written before the answer). */
export interface TaskRecord {
  task_id: string;
  workflow_id: string;
  proposal_id: string;
  /** The identical-call sequence of the proposal: a resumed task follows this proposal only, never a later one. */
  sequence: number;
  agent: string;
  server: string;
  tool: string;
  tool_definition_hash: string;
  /** The arguments as the upstream receives them (without `_agent_judge`). */
  arguments: Record<string, unknown>;
  /** What the agent said for itself under `_agent_judge` (a clarification for the same proposal). */
  agent_statement: AgentStatement;
  /** The `tools/call` params as they go upstream: the arguments above, without `task` and the progress token. */
  request_params: Record<string, unknown>;
  created_at: string;
  last_updated_at: string;
  ttl_ms: number;
  status: TaskStatus;
  status_message: string | null;
  /** The `tasks/result` answer once the task is finished (omitted when larger than 1 MiB). */
  result?: Record<string, unknown>;
}

export const taskIdOf = (workflowId: string): string => `${TASK_ID_PREFIX}${workflowId}`;
export const localTaskId = (): string => `${LOCAL_PREFIX}${randomUUID()}`;
export const isOwnTaskId = (id: unknown): id is string => typeof id === 'string' && id.startsWith(TASK_ID_PREFIX);
export const isTerminal = (s: TaskStatus): boolean => s === 'completed' || s === 'failed' || s === 'cancelled';

/** The `ttl` a task gets: what the client asked, at least the policy's hold, at most {@link MAX_TASK_TTL_MS}. */
export function taskTtlMs(requested: unknown, holdMs: number): number {
  const asked = typeof requested === 'number' && Number.isFinite(requested) ? requested : DEFAULT_TASK_TTL_MS;
  return Math.min(MAX_TASK_TTL_MS, Math.max(holdMs, Math.floor(asked)));
}

/** Whether a `tools/call` asks for a task (`params.task` is an object). */
export function isTaskAugmented(params: Record<string, unknown> | undefined): boolean {
  const t = params?.task;
  return t !== null && typeof t === 'object' && !Array.isArray(t);
}

/** The task as the specification's `Task` object. */
export function taskOf(
  r: Pick<TaskRecord, 'task_id' | 'status' | 'ttl_ms' | 'created_at' | 'last_updated_at' | 'status_message'>,
): McpTask {
  return {
    taskId: r.task_id,
    status: r.status,
    ttl: r.ttl_ms,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    pollInterval: TASK_POLL_INTERVAL_MS,
    ...(r.status_message ? { statusMessage: r.status_message } : {}),
  };
}

/**
 * While the task is not finished: what its proposal is waiting for, as the task's `statusMessage`. The status stays
 * `working` throughout: `input_required` means the requestor must answer a request through `tasks/result`
 * (elicitation, sampling), and a person deciding in Slack or the CLI is no input the client can give.
 */
export function workingMessage(s: ProposalRecord): string {
  const id = `proposal ${s.proposal_id}`;
  switch (s.status) {
    case 'pending':
      return `held by agent-judge: the judge is deciding (${id})`;
    case 'awaiting_human':
      return (
        `held by agent-judge: waiting for a person to decide` +
        `${s.deadlines.human ? ` until ${s.deadlines.human}` : ''} (${id})`
      );
    case 'awaiting_clarification':
      return `held by agent-judge: the judge asks for more (${id})`;
    case 'approved':
      return `approved: agent-judge performs the call once (${id})`;
    default:
      return `${s.status} (${id})`;
  }
}

/** Where a session's task records live: one small JSON file per task, written whole (tmp file, then rename). */
export class TaskRecords {
  constructor(private readonly dir: string) {}

  private file(taskId: string): string {
    return join(this.dir, `${toHex(sha256(utf8(taskId))).slice(0, 40)}.json`);
  }

  /** Written synchronously: the record is on disk before the task is answered. */
  write(r: TaskRecord): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    let stored: TaskRecord = r;
    if (r.result !== undefined && JSON.stringify(r.result).length > MAX_RECORDED_RESULT) {
      const { result: _omitted, ...rest } = r;
      stored = rest;
    }
    const target = this.file(r.task_id);
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(stored)}\n`, { mode: 0o600 });
    renameSync(tmp, target);
  }

  /** The record of `taskId`, or null (none, unreadable, or not this agent's and server's). */
  read(taskId: string, agent: string, server: string): TaskRecord | null {
    let r: TaskRecord;
    try {
      r = JSON.parse(readFileSync(this.file(taskId), 'utf8')) as TaskRecord;
    } catch {
      return null;
    }
    if (r.task_id !== taskId || r.agent !== agent || r.server !== server) return null;
    return r;
  }
}

/**
 * The relayed `initialize` result with the proxy's own task support merged in (`tasks.list`, `tasks.cancel`,
 * `tasks.requests.tools.call`); whatever the upstream declared itself is kept.
 */
export function withTaskCapabilities(result: Record<string, unknown>): Record<string, unknown> {
  const caps = (result.capabilities ?? {}) as Record<string, unknown>;
  const tasks = (caps.tasks ?? {}) as Record<string, unknown>;
  const requests = (tasks.requests ?? {}) as Record<string, unknown>;
  const tools = (requests.tools ?? {}) as Record<string, unknown>;
  return {
    ...result,
    capabilities: {
      ...caps,
      tasks: {
        ...tasks,
        list: tasks.list ?? {},
        cancel: tasks.cancel ?? {},
        requests: { ...requests, tools: { ...tools, call: tools.call ?? {} } },
      },
    },
  };
}

/**
 * A `tools/list` result (already augmented with `_agent_judge`) where every judged tool (no `no-judge` rule) says
 * `execution.taskSupport: optional`, unless the upstream required tasks for it; no-judge tools keep the upstream's.
 */
export function withTaskSupport(
  result: Record<string, unknown>,
  rules: GateRules,
  server: string,
): Record<string, unknown> {
  const tools = Array.isArray(result.tools) ? (result.tools as ToolDefinition[]) : [];
  return {
    ...result,
    tools: tools.map((t) => {
      if (matchRule(rules, server, t.name)?.rule?.tier === 'no-judge') return t;
      const execution = (t.execution ?? {}) as Record<string, unknown>;
      if (execution.taskSupport === 'required') return t;
      return { ...t, execution: { ...execution, taskSupport: 'optional' } };
    }),
  };
}
