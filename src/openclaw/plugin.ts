/**
 * The agent-judge plugin for OpenClaw (docs/openclaw.md): every tool call the OpenClaw gateway makes goes through
 * agent-judge's resident gate before it runs. `before_tool_call` (registered without a matcher: exec, the file tools,
 * message sends, web, MCP and other plugins' tools alike) posts OpenClaw's event to `POST /hooks/openclaw`; the gate
 * maps it by the policy's `spec.hooks.openclaw.rules` and answers allow or block. A block (a REJECT, a CLARIFY, a call
 * still pending, a refusal) is OpenClaw's `{block: true, blockReason}`: the reason is what the model reads. An
 * approved call is performed by OpenClaw exactly once (the gate leased it to this call); `after_tool_call` reports
 * what happened, and the proposal records it.
 *
 * Fail closed: a gate that cannot be reached, a token that cannot be read, an answer that cannot be read, a timeout:
 * each blocks the call with the reason. OpenClaw itself blocks a call whose handler throws or times out.
 *
 * OpenClaw's own approval prompt (`requireApproval`) is never used: a pending call waits for agent-judge's approvers
 * (the policy's escalation, `agent-judge decide`, Discord), not for the person operating the agent, so the actor is
 * never its own judge (docs/openclaw.md#who-decides-a-held-call).
 *
 * Imports nothing but Node's own modules: the built file is the whole plugin (dist/openclaw/ with its manifest).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** What the plugin's config (`plugins.entries.agent-judge.config`) may say. */
export interface PluginConfig {
  /** The resident gate (default `http://127.0.0.1:8766`, the policy's `spec.hooks.gate.listen`). */
  gateUrl?: string;
  /** A file holding the agent's gate token (default `.agent-judge/hook-token` in `cwd`). */
  tokenFile?: string;
  /** The directory the agent's tools act in: relative paths resolve against it (default: OpenClaw's workspace). */
  cwd?: string;
  /** How long one call may wait for the gate (ms, default 60000): above the policy's `spec.hooks.holdFor`. */
  timeoutMs?: number;
}

/** OpenClaw's `before_tool_call` / `after_tool_call` event and context, as far as the plugin reads them. */
interface ToolEvent {
  toolName: string;
  params: Record<string, unknown>;
  toolCallId?: string;
  runId?: string;
  result?: unknown;
  error?: string;
}
interface ToolContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
  toolCallId?: string;
  abortSignal?: AbortSignal;
}
interface BeforeToolCallResult {
  block?: boolean;
  blockReason?: string;
}
/** The part of OpenClaw's plugin API the plugin uses (structural: no dependency on OpenClaw's packages). */
export interface OpenClawPluginApi {
  pluginConfig?: unknown;
  config?: { agents?: { defaults?: { workspace?: unknown } } };
  logger?: { info?: (msg: string) => void; warn?: (msg: string) => void };
  on(
    hook: 'before_tool_call',
    handler: (event: ToolEvent, ctx: ToolContext) => Promise<BeforeToolCallResult | undefined>,
    options?: { priority?: number; timeoutMs?: number },
  ): void;
  on(
    hook: 'after_tool_call',
    handler: (event: ToolEvent, ctx: ToolContext) => Promise<void>,
    options?: { priority?: number; timeoutMs?: number },
  ): void;
}

export const PLUGIN_ID = 'agent-judge';
const DEFAULT_GATE_URL = 'http://127.0.0.1:8766';
const DEFAULT_TIMEOUT_MS = 60_000;
/** OpenClaw's limit on one hook handler's budget. */
const MAX_TIMEOUT_MS = 600_000;

interface Settings {
  gateUrl: string;
  tokenFile: string;
  cwd: string;
  timeoutMs: number;
}

/** The plugin's settings from its config; throws naming the field when one is wrong. */
export function settingsOf(config: unknown, workspace: unknown): Settings {
  const c = (config ?? {}) as Record<string, unknown>;
  if (typeof c !== 'object' || Array.isArray(c)) throw new TypeError('agent-judge plugin config: expected an object');
  const str = (field: string): string | undefined => {
    const v = c[field];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.trim() === '') {
      throw new TypeError(`agent-judge plugin config: ${field} must be a non-empty string`);
    }
    return v;
  };
  const cwd = resolve(str('cwd') ?? (typeof workspace === 'string' && workspace !== '' ? workspace : process.cwd()));
  const timeout = c.timeoutMs;
  if (
    timeout !== undefined &&
    (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1000 || timeout > MAX_TIMEOUT_MS)
  ) {
    throw new TypeError(`agent-judge plugin config: timeoutMs must be an integer from 1000 to ${MAX_TIMEOUT_MS}`);
  }
  const gateUrl = str('gateUrl') ?? DEFAULT_GATE_URL;
  if (!/^http:\/\/[^/]+$/.test(gateUrl.replace(/\/$/, ''))) {
    throw new TypeError('agent-judge plugin config: gateUrl must be http://HOST:PORT (the resident gate, loopback)');
  }
  return {
    gateUrl: gateUrl.replace(/\/$/, ''),
    tokenFile: resolve(cwd, str('tokenFile') ?? '.agent-judge/hook-token'),
    cwd,
    timeoutMs: timeout ?? DEFAULT_TIMEOUT_MS,
  };
}

interface GateAnswer {
  decision: 'allow' | 'block';
  reason: string;
  person?: string;
}

/** One hook event to the gate; throws (with the reason) when there is no readable answer. */
async function ask(s: Settings, body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<GateAnswer> {
  const token = readFileSync(s.tokenFile, 'utf8').trim();
  if (token === '') throw new Error(`the token file ${s.tokenFile} is empty`);
  // Below OpenClaw's own budget for the handler, so the gate's reason reaches the model rather than a timeout.
  const budget = AbortSignal.timeout(Math.max(500, s.timeoutMs - 1000));
  let res: Response;
  try {
    res = await fetch(`${s.gateUrl}/hooks/openclaw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, budget]) : budget,
    });
  } catch (err) {
    // Node's fetch says only "fetch failed": name the gate and the cause (ECONNREFUSED, a timeout).
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new Error(
      `the agent-judge gate at ${s.gateUrl} cannot be reached (${why}); start it with agent-judge dev, or set ` +
        'the plugin config gateUrl to the gate dev announces',
    );
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error(text.trim().slice(0, 2000) || `the gate answered HTTP ${res.status}`);
  const answer = JSON.parse(text) as Partial<GateAnswer>;
  if ((answer.decision !== 'allow' && answer.decision !== 'block') || typeof answer.reason !== 'string') {
    throw new Error('the gate answered something unreadable');
  }
  return answer as GateAnswer;
}

function fields(event: ToolEvent, ctx: ToolContext, cwd: string) {
  const toolCallId = event.toolCallId ?? ctx.toolCallId;
  const runId = event.runId ?? ctx.runId;
  return {
    toolName: event.toolName,
    params: event.params ?? {},
    ...(toolCallId ? { toolCallId } : {}),
    ...(runId ? { runId } : {}),
    ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}),
    ...(ctx.sessionKey ? { sessionKey: ctx.sessionKey } : {}),
    ...(ctx.agentId ? { agentId: ctx.agentId } : {}),
    cwd,
  };
}

/** Registers the two hooks on OpenClaw's plugin API. */
export function register(api: OpenClawPluginApi): void {
  let settings: Settings | Error;
  try {
    settings = settingsOf(api.pluginConfig, api.config?.agents?.defaults?.workspace);
  } catch (err) {
    settings = err as Error;
  }
  const timeoutMs = settings instanceof Error ? DEFAULT_TIMEOUT_MS : settings.timeoutMs;

  api.on(
    'before_tool_call',
    async (event, ctx) => {
      if (settings instanceof Error) {
        return { block: true, blockReason: `agent-judge: ${settings.message}; the call was not allowed` };
      }
      try {
        const answer = await ask(
          settings,
          { hook: 'before_tool_call', ...fields(event, ctx, settings.cwd) },
          ctx.abortSignal,
        );
        if (answer.person) api.logger?.warn?.(answer.person);
        if (answer.decision === 'allow') {
          // The operator's log names the approved call's proposal (`agent-judge: approved (rule; proposal ...)`).
          if (answer.reason.includes('; proposal ')) api.logger?.info?.(`${answer.reason}: ${event.toolName}`);
          return undefined;
        }
        return { block: true, blockReason: answer.reason };
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        // The gate's own refusal already says so; anything else (no gate, no token, a timeout) is said here.
        const reason = why.startsWith('agent-judge: ') ? why : `agent-judge: ${why}; the call was not allowed`;
        return { block: true, blockReason: reason };
      }
    },
    // First of all plugins' handlers: a block is final, so no other plugin's rewrite or approval comes before it.
    { priority: 1_000_000, timeoutMs },
  );

  api.on(
    'after_tool_call',
    async (event, ctx) => {
      if (settings instanceof Error) return;
      try {
        await ask(
          settings,
          {
            hook: 'after_tool_call',
            ...fields(event, ctx, settings.cwd),
            ...(event.error !== undefined ? { error: String(event.error) } : {}),
            ...resultSummary(event.result),
          },
          undefined,
        );
      } catch (err) {
        // The tool already ran: its proposal ends `uncertain` at spec.mcp.performWithin ("forwarded, no outcome").
        api.logger?.warn?.(`agent-judge: the outcome of ${event.toolName} was not recorded: ${(err as Error).message}`);
      }
    },
    { timeoutMs },
  );
}

/**
 * How a tool's result says it ended, and nothing of its content: exec answers a command's non-zero exit as a result
 * (`details: {status: "completed", exitCode: 7}`), not as an error, so the gate needs these two fields to record it.
 */
export function resultSummary(result: unknown): { result?: { status?: string; exitCode?: number | null } } {
  const details = result !== null && typeof result === 'object' ? (result as { details?: unknown }).details : undefined;
  if (details === null || typeof details !== 'object') return {};
  const { status, exitCode } = details as { status?: unknown; exitCode?: unknown };
  const summary: { status?: string; exitCode?: number | null } = {};
  if (typeof status === 'string') summary.status = status.slice(0, 64);
  if ((typeof exitCode === 'number' && Number.isInteger(exitCode)) || exitCode === null) summary.exitCode = exitCode;
  return Object.keys(summary).length > 0 ? { result: summary } : {};
}

/** OpenClaw's plugin entry (`definePluginEntry`'s shape: id, name, description, register). */
const plugin = {
  id: PLUGIN_ID,
  name: 'agent-judge',
  description: 'Every tool call through agent-judge: a judge decides, people break ties, Temporal keeps the record.',
  register,
};
export default plugin;
