/**
 * The MCP judge proxy as a message-level relay between an agent (the front transport) and one upstream MCP server:
 * every message passes through unchanged in both directions (initialize and capabilities, resources, prompts,
 * sampling, elicitation, roots, logging, progress, list-changed, pagination, cancellation) except `tools/list`
 * results (each tool gains the optional `_agent_judge` argument) and `tools/call` requests, which are mapped by
 * `spec.mcp` and judged before anything reaches the upstream. Fails closed: a call is forwarded only when it is
 * no-judge by the policy, or its proposal is approved (or in shadow mode) and this proxy holds the claim to perform
 * it; any error on the way is a refusal, never a forward.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, RELATED_TASK_META_KEY, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import type { SubmissionLimits } from '../client/limits';
import { dirname, join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import { BadInputError } from '../contracts/errors';
import { claimWindowMs, holdForMs, type McpSettings } from '../contracts/mcp';
import { appendChained } from '../audit/chain';
import { appendDropped } from '../audit/mcp-log';
import type { McpCounters } from '../metrics/mcp';
import { Gate, type GateAnswer, type GateToolCall, type Lease } from '../gate';
import { describeChanges, type ActionChange } from '../contracts/action-edit';
import { statusOfRun } from '../client/performer';
import { admit, refuseBatch, type Admission, type ErrorAnswer } from './admission';
import { refusedAnswer, renderGateAnswer, type CallAnswer } from './answers';
import {
  isOwnTaskId,
  isTaskAugmented,
  isTerminal,
  localTaskId,
  MAX_LIVE_TASKS,
  MAX_REMEMBERED_TASKS,
  TaskRecords,
  taskIdOf,
  taskOf,
  taskTtlMs,
  withTaskCapabilities,
  withTaskSupport,
  workingMessage,
  type TaskRecord,
  type TaskStatus,
} from './tasks';
import { MCP_REDEEMER, MCP_RUNTIME, type ToolCall } from './mapping';
import { judgeFailure } from './judged-call';
import {
  augmentToolsList,
  splitArguments,
  type AgentJudgeArgument,
  toolDefinitionHash,
  ToolNameCollisionError,
  type ToolDefinition,
} from './tools';
import { oneLine, UpstreamGoneError } from './upstream';

type Id = string | number;
type Msg = Record<string, unknown> & { id?: Id; method?: string; params?: Record<string, unknown> };

/** How long an ended upstream's forwarded calls get to answer and record their outcome before the proxy exits. */
const FORWARDED_WAIT_MS = 5000;

/** Resolves when `p` settles or after `ms`, whichever comes first (a bounded wait; never rejects). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
}

export interface ProxyOptions {
  /** Speaks to the agent: stdio, or one session of the Streamable HTTP front. */
  front: Transport;
  /** Speaks to the upstream MCP server: a stdio child or a Streamable HTTP session (upstream.ts). */
  upstream: Transport;
  settings: McpSettings;
  /** The upstream's name in rules and audit lines. */
  server: string;
  agentId: string;
  /** Where proposals go, and the per-agent limits they are held to (`spec.limits` of the proxy's policy). */
  temporal: { client: Client; taskQueue: string; limits?: SubmissionLimits };
  /** The hash-chained log of pass-through (no-judge) calls. */
  auditLog: string;
  /** One line on stderr. */
  log: (line: string) => void;
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

/** A pass-through (no-judge) call as its audit line records it. */
export interface PassThroughRecord {
  kind: 'mcp_pass_through';
  agent: string;
  server: string;
  tool: string;
  tool_definition_hash: string;
  argument_digest: string;
  rule: string;
  outcome: 'ok' | 'tool_error' | 'upstream_failure' | 'cancelled';
  started_at: string;
  finished_at: string;
  upstream_ms: number;
}

interface Forwarded {
  resolve: (response: Msg) => void;
  reject: (err: Error) => void;
}

/** One MCP task this session knows (src/mcp/tasks.ts): its record, and the runner following it here, if any. */
interface LiveTask {
  record: TaskRecord;
  /** Aborts the runner (tasks/cancel, the agent or the upstream went away). */
  control: AbortController;
  /** A runner in this process follows the proposal (false for a task read back from its record, until resumed). */
  running: boolean;
  /** The call went upstream: too late to cancel. */
  performing: boolean;
  /** Resolves when the task is finished. */
  done: Promise<void>;
  finish: () => void;
  /** Kept in memory only (refused before any proposal): no record. */
  local: boolean;
}

/** A call ready for the gate and the upstream, or why it is refused before any proposal. */
type Prepared =
  | { refusal: CallAnswer }
  | { call: ToolCall; agent: AgentJudgeArgument; upstreamParams: Record<string, unknown> };

export class McpJudgeProxy {
  private readonly tools = new Map<string, ToolDefinition>();
  private toolsComplete = false;
  private readonly toolsListRequests = new Set<Id>();
  /** Calls being judged or held: a cancellation aborts them before anything is forwarded. */
  private readonly held = new Map<Id, AbortController>();
  /** Calls forwarded to the upstream, waiting for its response. */
  private readonly forwarded = new Map<Id, Forwarded>();
  /** The proxy's own requests to the upstream (tools/list for its cache). */
  private readonly own = new Map<Id, Forwarded>();
  /** Progress values already sent for a held call's token: the upstream's own progress is shifted past them. */
  private readonly progressOffset = new Map<string | number, number>();
  /** The agent's requests the upstream is working on, oldest first (what the upstream's own messages relate to). */
  private readonly inFlight = new Set<Id>();
  /** Progress tokens of the agent's requests, to the request: progress goes on that request's HTTP stream. */
  private readonly progressRequest = new Map<string | number, Id>();
  private ownSeq = 0;
  private closed = false;
  private auditQueue: Promise<void> = Promise.resolve();
  /** Why the upstream went away, when its transport said (an HTTP upstream); a stdio upstream just exits. */
  private upstreamGone: string | undefined;
  private upstreamEnded = false;
  /** Forwarded calls still answering the agent and reporting their outcome. */
  private readonly forwarding = new Set<Promise<unknown>>();
  /** Requests answered with an error when the upstream ended: a later answer to them is dropped. */
  private readonly answeredAtEnd = new Set<Id>();
  /** The upstream's requests to the agent (sampling, elicitation, roots, ping) not answered yet: their answers pass. */
  private readonly awaited = new Set<Id>();

  /** Maps, judges, holds and leases each judged call (src/gate/); one per proxy, so it remembers identical calls. */
  private readonly gate: Gate;

  /** The agent declared `tasks` in its initialize (client capabilities): task-augmented judged calls become tasks. */
  private clientTasks = false;
  private initializeId: Id | undefined;
  /** The upstream declared `tasks` itself: its own tasks are listed too, and relayed by id. */
  private upstreamTasks = false;
  /** This session's own MCP tasks, by task id (oldest first). */
  private readonly tasks = new Map<string, LiveTask>();
  private readonly taskRecords: TaskRecords;

  constructor(private readonly o: ProxyOptions) {
    this.gate = new Gate({
      client: o.temporal.client,
      taskQueue: o.temporal.taskQueue,
      limits: o.temporal.limits,
      rules: o.settings,
      performer: { agentId: o.agentId, redeemer: MCP_REDEEMER },
      holdMs: holdForMs(o.settings),
      claimWindowMs: claimWindowMs(o.settings),
    });
    this.taskRecords = new TaskRecords(o.taskDir ?? join(dirname(o.auditLog), 'mcp-tasks'));
  }

  async start(): Promise<void> {
    this.o.front.onmessage = (m) => this.fromAgent(m);
    this.o.upstream.onmessage = (m) => this.fromUpstream(m);
    this.o.upstream.onclose = () => this.upstreamClosed();
    this.o.upstream.onerror = (e) => {
      if (e instanceof UpstreamGoneError) this.upstreamGone = e.message;
      else this.o.log(`upstream: ${oneLine(e)}`); // the SDK's parse errors span many lines
    };
    this.o.front.onerror = (e) => this.o.log(`agent side: ${e.message}`);
    await this.o.upstream.start();
    await this.o.front.start();
  }

  /** The agent went away: nothing held is ever forwarded; the upstream is closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.held.values()) c.abort();
    // A task's runner stops; its record stays, so the next proxy for this agent takes the task up again.
    for (const t of this.tasks.values()) if (!t.performing) t.control.abort();
    await this.flushAudit();
    await this.o.upstream.close().catch(() => undefined);
    await this.o.front.close().catch(() => undefined);
  }

  // --- agent -> upstream ------------------------------------------------------------------------

  private fromAgent(m: Msg): void {
    // Before anything else: only what MCP lets a client send goes on (a tools/call without an id is never relayed).
    const admission = admit(m, this.awaited);
    if (!admission.pass) return this.drop(admission);
    if (m.method === undefined) this.awaited.delete(m.id as Id);
    if (m.method !== undefined && m.id !== undefined) {
      if (m.method === 'initialize') {
        this.initializeId = m.id;
        const tasks = (m.params?.capabilities as Record<string, unknown> | undefined)?.tasks;
        this.clientTasks = tasks !== null && typeof tasks === 'object';
      }
      if (m.method === 'tools/call') {
        if (this.clientTasks && isTaskAugmented(m.params)) void this.handleTaskCall(m);
        else void this.handleCall(m);
        return;
      }
      if (this.clientTasks && this.isOwnTaskRequest(m)) {
        void this.handleTaskRequest(m);
        return;
      }
      if (m.method === 'tools/list') this.toolsListRequests.add(m.id);
      this.track(m);
      this.toUpstream(m);
      return;
    }
    if (m.method === 'notifications/cancelled') {
      const id = m.params?.requestId as Id | undefined;
      const held = id === undefined ? undefined : this.held.get(id);
      if (held) {
        // Not forwarded yet: it never will be. The upstream never heard of this id.
        held.abort();
        return;
      }
    }
    this.toUpstream(m);
    if (m.method === 'notifications/initialized') void this.checkToolsAtStart();
  }

  /** A JSON-RPC batch from the agent (the stdio front hands it here unparsed by the SDK): refused whole. */
  refuseBatch(batch: unknown[]): void {
    const refusal = refuseBatch(batch);
    this.drop(refusal, refusal.answers);
  }

  /** A message that does not reach the upstream: one log line, one audit line, and an error if it had an id. */
  private drop(a: Admission & { pass: false }, answers: ErrorAnswer[] = a.answer ? [a.answer] : []): void {
    this.o.log(`dropped a message from the agent, not relayed (${a.reason}): ${a.detail}`);
    this.o.counters?.dropped(a.reason);
    for (const answer of answers) this.toAgent(answer);
    const record = {
      kind: 'mcp_dropped' as const,
      agent: this.o.agentId,
      server: this.o.server,
      reason: a.reason,
      method: a.method,
      answered: answers.length > 0,
      at: new Date().toISOString(),
    };
    this.auditQueue = this.auditQueue.then(() => appendDropped(this.o.auditLog, record, this.o.log));
  }

  /** Remembers an agent request relayed upstream until its response comes back. */
  private track(m: Msg): void {
    const id = m.id as Id;
    this.inFlight.add(id);
    const token = (m.params?._meta as { progressToken?: string | number } | undefined)?.progressToken;
    if (token !== undefined) this.progressRequest.set(token, id);
  }

  private untrack(id: Id): void {
    this.inFlight.delete(id);
    for (const [token, request] of this.progressRequest) if (request === id) this.progressRequest.delete(token);
  }

  private toUpstream(m: Msg): void {
    this.o.upstream.send(m as JSONRPCMessage).catch((e: Error) => {
      // Once the upstream has ended, the proxy's last line says why.
      if (!this.upstreamEnded) this.o.log(`could not send to upstream: ${e.message}`);
      // A request that never reached the upstream gets an error now instead of no answer at all.
      if (m.method !== undefined && m.id !== undefined && this.inFlight.has(m.id)) {
        this.untrack(m.id);
        this.toAgent({
          jsonrpc: '2.0',
          id: m.id,
          error: { code: -32603, message: `agent-judge: the upstream MCP server could not be reached (${e.message})` },
        });
      }
    });
  }

  /**
   * To the agent. `related` names the agent request a message belongs to: the Streamable HTTP front sends it on
   * that request's stream (stdio ignores it); if that stream is gone, on the session's own stream instead.
   */
  private toAgent(m: Msg, related?: Id): void {
    if (this.closed) return;
    if (m.method === undefined && m.id !== undefined && this.answeredAtEnd.has(m.id)) return;
    const fail = (e: Error) => this.o.log(`could not send to the agent: ${e.message}`);
    if (related === undefined) {
      this.o.front.send(m as JSONRPCMessage).catch(fail);
      return;
    }
    this.o.front
      .send(m as JSONRPCMessage, { relatedRequestId: related })
      .catch(() => this.o.front.send(m as JSONRPCMessage).catch(fail));
  }

  /** The agent request an upstream notification or request most likely belongs to (stdio does not say). */
  private relatedTo(m: Msg): Id | undefined {
    if (m.method === 'notifications/progress') {
      return this.progressRequest.get(m.params?.progressToken as string | number);
    }
    let newest: Id | undefined;
    for (const id of this.inFlight) newest = id;
    return newest;
  }

  // --- upstream -> agent ------------------------------------------------------------------------

  private fromUpstream(m: Msg): void {
    const isResponse = m.method === undefined && m.id !== undefined;
    if (isResponse) {
      const id = m.id as Id;
      const own = this.own.get(id);
      if (own) {
        this.own.delete(id);
        own.resolve(m);
        return;
      }
      this.untrack(id);
      const fwd = this.forwarded.get(id);
      if (fwd) {
        this.forwarded.delete(id);
        fwd.resolve(m);
        return;
      }
      if (id === this.initializeId && this.clientTasks && m.result) {
        // The agent takes tasks: the proxy's own task support joins the upstream's capabilities (none removed).
        const result = m.result as Record<string, unknown>;
        this.upstreamTasks = Boolean((result.capabilities as Record<string, unknown> | undefined)?.tasks);
        this.toAgent({ ...m, result: withTaskCapabilities(result) });
        return;
      }
      if (this.toolsListRequests.delete(id) && m.result) {
        try {
          this.remember(m.result as Record<string, unknown>);
          const augmented = augmentToolsList(m.result as Record<string, unknown>);
          this.toAgent({
            ...m,
            result: this.clientTasks ? withTaskSupport(augmented, this.o.settings, this.o.server) : augmented,
          });
        } catch (err) {
          this.fatal(err as Error, m.id);
        }
        return;
      }
    }
    if (m.method !== undefined && m.id !== undefined) this.awaited.add(m.id);
    // The upstream gave up on one of its requests: an answer to it is no longer awaited.
    if (m.method === 'notifications/cancelled') this.awaited.delete(m.params?.requestId as Id);
    if (m.method === 'notifications/tools/list_changed') {
      this.tools.clear();
      this.toolsComplete = false;
    }
    if (m.method === 'notifications/progress' && m.params) {
      const offset = this.progressOffset.get(m.params.progressToken as string | number);
      if (offset !== undefined) {
        const p = m.params as { progress: number; total?: number };
        const shifted: Record<string, unknown> = { ...m.params, progress: p.progress + offset + 1 };
        if (typeof p.total === 'number') shifted.total = p.total + offset + 1;
        this.toAgent({ ...m, params: shifted }, this.relatedTo(m));
        return;
      }
    }
    this.toAgent(m, isResponse ? undefined : this.relatedTo(m));
  }

  private upstreamClosed(): void {
    if (this.upstreamEnded) return;
    this.upstreamEnded = true;
    const why = this.upstreamGone ?? 'the upstream MCP server exited';
    const forwarded = new Set(this.forwarded.keys());
    for (const f of [...this.forwarded.values(), ...this.own.values()]) f.reject(new Error(why));
    this.forwarded.clear();
    this.own.clear();
    if (this.closed) return;
    // Nothing the agent still waits for may hang until its own timeout. Forwarded calls answer and report their
    // outcome themselves (upstream_failure); relayed requests get an error now; held calls are refused and cancelled,
    // so they are never forwarded (as when the agent cancels them).
    for (const id of this.inFlight) {
      if (forwarded.has(id)) continue;
      this.toAgent({ jsonrpc: '2.0', id, error: { code: -32603, message: `agent-judge: ${why}` } });
      this.answeredAtEnd.add(id);
    }
    this.inFlight.clear();
    this.progressRequest.clear();
    this.awaited.clear();
    for (const [id, control] of this.held) {
      this.answer(id, refusedAnswer(`${why}; the call was not forwarded`));
      this.answeredAtEnd.add(id);
      control.abort();
    }
    // Task runners stop before performing anything; the records stay for a proxy with a live upstream.
    for (const t of this.tasks.values()) if (!t.performing) t.control.abort();
    // The forwarded calls' answers and outcome reports go out before the proxy ends.
    void settledWithin(Promise.allSettled([...this.forwarding]), FORWARDED_WAIT_MS).then(() => {
      if (!this.closed) this.o.onFatal(`agent-judge mcp: ${why}`, 1);
    });
  }

  private fatal(err: Error, id?: Id): void {
    const exitCode = err instanceof BadInputError ? 2 : 1;
    if (id !== undefined) this.toAgent({ jsonrpc: '2.0', id, error: { code: -32603, message: err.message } });
    this.o.onFatal(`agent-judge mcp: ${err.message}`, exitCode);
  }

  // --- tool definitions -------------------------------------------------------------------------

  private remember(result: Record<string, unknown>): void {
    const tools = Array.isArray(result.tools) ? (result.tools as ToolDefinition[]) : [];
    for (const t of tools) if (typeof t.name === 'string') this.tools.set(t.name, t);
  }

  private ownRequest(method: string, params: Record<string, unknown>): Promise<Msg> {
    const id = `agent-judge/${++this.ownSeq}`;
    return new Promise((resolve, reject) => {
      this.own.set(id, { resolve, reject });
      this.o.upstream.send({ jsonrpc: '2.0', id, method, params }).catch(reject);
    });
  }

  /** Every page of the upstream's tools/list, into the cache; refuses a tool that collides with `_agent_judge`. */
  private async loadAllTools(): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await this.ownRequest('tools/list', cursor ? { cursor } : {});
      if (!r.result) throw new Error(`the upstream refused tools/list: ${JSON.stringify(r.error)}`);
      const result = r.result as Record<string, unknown>;
      augmentToolsList(result); // throws on a collision
      this.remember(result);
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    this.toolsComplete = true;
  }

  /** At start (once the agent has initialized): a tool that collides with `_agent_judge` stops the proxy. */
  private async checkToolsAtStart(): Promise<void> {
    try {
      await this.loadAllTools();
    } catch (err) {
      if (err instanceof ToolNameCollisionError) this.fatal(err);
      else this.o.log(`could not list the upstream's tools: ${(err as Error).message}`);
    }
  }

  private async toolNamed(name: string): Promise<ToolDefinition | undefined> {
    if (!this.tools.has(name) && !this.toolsComplete) await this.loadAllTools();
    return this.tools.get(name);
  }

  // --- tools/call -------------------------------------------------------------------------------

  private answer(id: Id, result: CallAnswer | Record<string, unknown>): void {
    this.toAgent({ jsonrpc: '2.0', id, result });
  }

  private async handleCall(m: Msg): Promise<void> {
    const id = m.id as Id;
    const params = m.params ?? {};
    const name = typeof params.name === 'string' ? params.name : '';
    const progressToken = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
    const control = new AbortController();
    this.held.set(id, control);
    try {
      const prepared = await this.prepare(params);
      if ('refusal' in prepared) return this.answer(id, prepared.refusal);
      const { call, agent } = prepared;
      const upstreamRequest: Msg = { ...m, params: prepared.upstreamParams };
      let progress = 0;
      // The gate maps, judges, holds and leases (src/gate/); this proxy only renders its answer or performs the call.
      const decision = await this.gate.decide(
        { runtime: MCP_RUNTIME, ...call, agent, session: { callId: String(id) } },
        {
          signal: control.signal,
          onHeld:
            progressToken === undefined
              ? undefined
              : () => {
                  progress += 1;
                  this.progressOffset.set(progressToken, progress);
                  this.toAgent(
                    {
                      jsonrpc: '2.0',
                      method: 'notifications/progress',
                      params: { progressToken, progress, message: 'held by agent-judge: the call is being decided' },
                    },
                    id,
                  );
                },
        },
      );
      if (decision.kind === 'cancelled') return; // a cancelled request gets no response
      // A judged call (a proposal was concerned): the caller warns when this proxy's policy is not the workers'.
      if (decision.kind !== 'refused' && !(decision.kind === 'forward' && decision.lease === null)) {
        this.o.onJudgedCall?.(name);
      }
      if (decision.kind !== 'forward') return this.answer(id, renderGateAnswer(decision));
      if (decision.lease === null) {
        return await this.whileForwarding(this.passThrough(upstreamRequest, call, decision.rule));
      }
      await this.whileForwarding(this.forwardApproved(upstreamRequest, decision.lease, control.signal));
    } catch (err) {
      if (control.signal.aborted) return;
      this.answer(id, refusedAnswer(judgeFailure(err, this.o.temporal.client)));
    } finally {
      this.held.delete(id);
      if (progressToken !== undefined) this.progressOffset.delete(progressToken);
    }
  }

  /** The call's arguments checked and split, its tool's definition found; or why it is refused. */
  private async prepare(params: Record<string, unknown>): Promise<Prepared> {
    const name = typeof params.name === 'string' ? params.name : '';
    let split;
    try {
      split = splitArguments(params.arguments);
    } catch (err) {
      return { refusal: refusedAnswer((err as Error).message) };
    }
    const tool = await this.toolNamed(name);
    if (!tool) return { refusal: refusedAnswer(`the upstream lists no tool named ${JSON.stringify(name)}`) };
    const call: ToolCall = {
      server: this.o.server,
      tool: name,
      toolDefinitionHash: toolDefinitionHash(tool),
      arguments: split.upstream,
    };
    return { call, agent: split.agentJudge, upstreamParams: { ...params, arguments: split.upstream } };
  }

  /** A forwarded call, until its answer and outcome are out: an upstream that went away waits for it. */
  private async whileForwarding<T>(call: Promise<T>): Promise<T> {
    this.forwarding.add(call);
    try {
      return await call;
    } finally {
      this.forwarding.delete(call);
    }
  }

  /** Sends one request upstream and waits for its response. */
  private forward(request: Msg): Promise<Msg> {
    const id = request.id as Id;
    this.track(request);
    return new Promise((resolve, reject) => {
      this.forwarded.set(id, { resolve, reject });
      this.o.upstream.send(request as JSONRPCMessage).catch((e: Error) => {
        this.forwarded.delete(id);
        this.untrack(id);
        reject(e);
      });
    });
  }

  /**
   * THE one place an approved call goes upstream, exactly once: the gate leased it to this proxy (the claim is taken
   * on the proposal, the capability token redeemed with it); the outcome is reported back, after the agent has its
   * answer.
   */
  private async forwardApproved(request: Msg, lease: Lease, signal: AbortSignal): Promise<void> {
    const id = request.id as Id;
    if (signal.aborted || this.closed) {
      await lease.report('not_performed', 'the client cancelled the call after it was claimed');
      return;
    }
    this.held.delete(id); // forwarded from here on: a cancellation goes to the upstream as it is
    let outcome: 'ok' | 'tool_error' | 'performer_failure';
    let detail: string | undefined;
    // Approved with edits (docs/edits.md): the upstream gets exactly the edited arguments, the token was redeemed for.
    const edited = lease.edited;
    const sent: Msg = edited
      ? { ...request, params: { ...(request.params ?? {}), arguments: edited.arguments } }
      : request;
    try {
      const response = await this.forward(sent);
      this.toAgent(edited ? withEditNote(response, edited.changes) : response);
      if (response.error) {
        outcome = 'performer_failure';
        detail = JSON.stringify(response.error).slice(0, 2000);
      } else outcome = (response.result as { isError?: boolean } | undefined)?.isError ? 'tool_error' : 'ok';
    } catch (err) {
      outcome = 'performer_failure';
      detail = (err as Error).message;
      this.answer(id, refusedAnswer(`the upstream failed after the call was forwarded: ${detail}`));
    }
    await lease
      .report(outcome, detail)
      .catch((err: Error) => this.o.log(`could not record the outcome on ${lease.workflowId}: ${err.message}`));
  }

  /**
   * A no-judge call: forwarded at once, no workflow, one hash-chained audit line. The line is appended right after
   * the agent has the result (the append takes a lock and costs ~1 ms: it is kept off the call's latency); the
   * appends are chained one after the other, in call order.
   */
  private async passThrough(request: Msg, call: ToolCall, rule: string): Promise<void> {
    const started = Date.now();
    this.held.delete(request.id as Id);
    let outcome: PassThroughRecord['outcome'];
    try {
      const response = await this.forward(request);
      this.toAgent(response);
      outcome = response.error
        ? 'upstream_failure'
        : (response.result as { isError?: boolean } | undefined)?.isError
          ? 'tool_error'
          : 'ok';
    } catch (err) {
      outcome = 'upstream_failure';
      this.answer(request.id as Id, refusedAnswer(`the upstream failed: ${(err as Error).message}`));
    }
    const finished = Date.now();
    const record: PassThroughRecord = {
      kind: 'mcp_pass_through',
      agent: this.o.agentId,
      server: call.server,
      tool: call.tool,
      tool_definition_hash: call.toolDefinitionHash,
      argument_digest: toHex(sha256(utf8(canonicalJson(call.arguments)))),
      rule,
      outcome,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(finished).toISOString(),
      upstream_ms: finished - started,
    };
    this.auditQueue = this.auditQueue.then(() =>
      appendChained(this.o.auditLog, record).then(
        () => undefined,
        (err: Error) => this.o.log(`could not append to the audit log ${this.o.auditLog}: ${err.message}`),
      ),
    );
    await this.auditQueue;
  }

  // --- MCP tasks (src/mcp/tasks.ts, docs/mcp.md#mcp-tasks) ---------------------------------------

  /** tasks/get, tasks/result, tasks/cancel with one of the proxy's own task ids, and every tasks/list. */
  private isOwnTaskRequest(m: Msg): boolean {
    if (m.method === 'tasks/list') return true;
    if (m.method === 'tasks/get' || m.method === 'tasks/result' || m.method === 'tasks/cancel') {
      return isOwnTaskId(m.params?.taskId);
    }
    return false;
  }

  private taskError(id: Id, message: string, code: number = ErrorCode.InvalidParams): void {
    this.toAgent({ jsonrpc: '2.0', id, error: { code, message } });
  }

  /** Remembers a task in this session (finished ones beyond the bound are forgotten here; their records stay). */
  private keepTask(record: TaskRecord, local = false): LiveTask {
    let finish: () => void = () => undefined;
    const done = new Promise<void>((r) => (finish = r));
    const t: LiveTask = {
      record,
      control: new AbortController(),
      running: false,
      performing: false,
      done,
      finish,
      local,
    };
    if (isTerminal(record.status)) finish();
    this.tasks.delete(record.task_id);
    this.tasks.set(record.task_id, t);
    if (this.tasks.size > MAX_REMEMBERED_TASKS) {
      for (const [taskId, old] of this.tasks) {
        if (!isTerminal(old.record.status)) continue;
        this.tasks.delete(taskId);
        break;
      }
    }
    return t;
  }

  private saveTask(t: LiveTask): void {
    if (t.local) return;
    try {
      this.taskRecords.write(t.record);
    } catch (err) {
      this.o.log(`could not write the record of task ${t.record.task_id}: ${(err as Error).message}`);
    }
  }

  /** The task is finished: its record says how, with what `tasks/result` answers; the agent is told. */
  private finishTask(
    t: LiveTask,
    status: TaskStatus,
    answer: { result?: Record<string, unknown>; error?: { code: number; message: string } },
    message?: string,
    /** Tell the agent (`notifications/tasks/status`); not for a task it has not been answered yet. */
    notify = true,
  ): void {
    if (isTerminal(t.record.status)) return;
    const text = (answer.result?.content as Array<{ text?: string }> | undefined)?.map((c) => c.text ?? '').join('\n');
    t.record = {
      ...t.record,
      status,
      status_message: message ?? (status === 'completed' ? null : (text ?? answer.error?.message ?? null)),
      last_updated_at: new Date().toISOString(),
      ...(answer.result ? { result: answer.result } : {}),
      ...(answer.error ? { result: { error: answer.error } } : {}),
    };
    this.saveTask(t);
    t.finish();
    if (notify) this.toAgent({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...taskOf(t.record) } });
  }

  /**
   * A task-augmented `tools/call` from an agent that takes tasks: answered with a CreateTaskResult as soon as the
   * call's proposal is known (started, or the identical call's open one found), after its record is on disk. The
   * runner then follows the proposal until it is decided or the task's ttl ends, and performs an approval once.
   */
  private async handleTaskCall(m: Msg): Promise<void> {
    const id = m.id as Id;
    const params = m.params ?? {};
    let live = 0;
    for (const t of this.tasks.values()) if (!isTerminal(t.record.status)) live += 1;
    if (live >= MAX_LIVE_TASKS) {
      return this.taskError(
        id,
        `agent-judge: this session already has ${MAX_LIVE_TASKS} unfinished tasks; wait for one, or cancel one ` +
          '(tasks/cancel), before the next task-augmented call',
        ErrorCode.InvalidRequest,
      );
    }
    const control = new AbortController();
    this.held.set(id, control);
    const ttl = taskTtlMs((params.task as { ttl?: unknown }).ttl, holdForMs(this.o.settings));
    const now = () => new Date().toISOString();
    /** A task already finished when it is answered (refused before, or decided without, a proposal to follow). */
    const finishedTask = (answer: CallAnswer, workflowId?: string, proposalId = '', sequence = 0) => {
      const record = this.newRecord(workflowId, proposalId, sequence, ttl, params, null);
      const t = this.keepTask(record, workflowId === undefined);
      this.finishTask(t, 'failed', { result: answer as unknown as Record<string, unknown> }, undefined, false);
      this.answer(id, { task: taskOf(t.record) });
    };
    try {
      const prepared = await this.prepare(params);
      if ('refusal' in prepared) return finishedTask(prepared.refusal);
      const { call, agent } = prepared;
      const gateCall: GateToolCall = { runtime: MCP_RUNTIME, ...call, agent, session: { callId: String(id) } };
      const upstreamParams = withoutTaskParams(prepared.upstreamParams);
      let task: LiveTask | undefined;
      let joined: LiveTask | undefined;
      const onProposal = (p: { workflowId: string; proposalId: string; sequence: number }): boolean => {
        if (task) return true;
        const existing = this.tasks.get(taskIdOf(p.workflowId));
        if (existing && !isTerminal(existing.record.status) && existing.running) {
          joined = existing; // the identical call's task: the same proposal, one runner
          return false;
        }
        const record = this.newRecord(p.workflowId, p.proposalId, p.sequence, ttl, upstreamParams, {
          call,
          agent,
        });
        record.created_at = now();
        task = this.keepTask(record);
        task.running = true;
        task.control = control;
        this.saveTask(task); // on disk before the agent hears of the task
        this.held.delete(id); // answered: a cancellation of the request no longer touches the task
        this.answer(id, { task: taskOf(task.record) });
        return true;
      };
      const answer = await this.gate.decide(gateCall, { signal: control.signal, onProposal });
      if (joined) return this.answer(id, { task: taskOf(joined.record) });
      if (answer.kind === 'cancelled' && !task) return; // a cancelled request gets no response
      if (answer.kind !== 'refused' && !(answer.kind === 'forward' && answer.lease === null)) {
        this.o.onJudgedCall?.(call.tool);
      }
      if (!task) {
        if (answer.kind === 'forward' && answer.lease === null) {
          // no-judge: today's pass-through, the request unchanged (an upstream that takes tasks answers with its own)
          return await this.whileForwarding(
            this.passThrough({ ...m, params: prepared.upstreamParams }, call, answer.rule),
          );
        }
        if (answer.kind === 'forward') {
          const sequence = answer.lease!.status.proposal.performer?.sequence ?? 0;
          onProposal({ workflowId: answer.lease!.workflowId, proposalId: answer.lease!.proposalId, sequence });
        } else if (answer.kind === 'deny' || answer.kind === 'clarify') {
          return finishedTask(renderGateAnswer(answer), answer.workflowId, answer.proposalId);
        } else if (answer.kind !== 'cancelled') {
          return finishedTask(renderGateAnswer(answer));
        }
      }
      if (task) await this.runTask(task, gateCall, answer);
    } catch (err) {
      if (control.signal.aborted) return;
      if (this.held.has(id)) finishedTask(refusedAnswer(judgeFailure(err, this.o.temporal.client)));
    } finally {
      this.held.delete(id);
    }
  }

  private newRecord(
    workflowId: string | undefined,
    proposalId: string,
    sequence: number,
    ttl: number,
    requestParams: Record<string, unknown>,
    c: { call: ToolCall; agent: AgentJudgeArgument } | null,
  ): TaskRecord {
    const at = new Date().toISOString();
    return {
      task_id: workflowId === undefined ? localTaskId() : taskIdOf(workflowId),
      workflow_id: workflowId ?? '',
      proposal_id: proposalId,
      sequence,
      agent: this.o.agentId,
      server: this.o.server,
      tool: c?.call.tool ?? (typeof requestParams.name === 'string' ? requestParams.name : ''),
      tool_definition_hash: c?.call.toolDefinitionHash ?? '',
      arguments: c?.call.arguments ?? {},
      agent_statement: c?.agent ?? {},
      request_params: c ? requestParams : {},
      created_at: at,
      last_updated_at: at,
      ttl_ms: ttl,
      status: 'working',
      status_message: null,
    };
  }

  /**
   * Follows a task's proposal until it is decided (each round holds as a call would, `holdFor`), the task's ttl ends,
   * or it is cancelled; an approval leased to this proxy is performed once, by `performTask`.
   */
  private async runTask(t: LiveTask, call: GateToolCall, first?: GateAnswer): Promise<void> {
    const deadline = Date.parse(t.record.created_at) + t.record.ttl_ms;
    let answer = first;
    t.running = true;
    try {
      for (;;) {
        answer ??= await this.gate.decide(call, { signal: t.control.signal, sequence: t.record.sequence });
        if (answer.kind === 'cancelled' || isTerminal(t.record.status)) return; // tasks/cancel, or the proxy ends
        if (answer.kind === 'forward') {
          if (answer.lease === null) {
            return this.finishTask(t, 'failed', {
              result: refusedAnswer('the policy no longer judges this call; call it again') as unknown as Msg,
            });
          }
          return await this.whileForwarding(this.performTask(t, answer.lease));
        }
        if (answer.kind === 'pending') {
          if (Date.now() >= deadline) {
            return this.finishTask(
              t,
              'failed',
              { result: renderGateAnswer(answer) as unknown as Msg },
              `the task's ttl ended before the decision: not performed. Proposal ${answer.proposalId} stays open; ` +
                'the identical call after the decision is performed once if approved.',
            );
          }
          t.record.status_message = `held by agent-judge: waiting for ${
            answer.waitingFor === 'human' ? 'a person to decide' : 'the judge'
          } (proposal ${answer.proposalId})`;
          answer = undefined;
          continue;
        }
        return this.finishTask(t, 'failed', { result: renderGateAnswer(answer) as unknown as Msg });
      }
    } catch (err) {
      if (!t.control.signal.aborted) {
        this.finishTask(t, 'failed', {
          result: refusedAnswer(judgeFailure(err, this.o.temporal.client)) as unknown as Msg,
        });
      }
    } finally {
      t.running = false;
    }
  }

  /**
   * THE one place a task's approved call goes upstream, exactly once (as `forwardApproved` for a plain call): under
   * the proxy's own request id, without `task` (the upstream performs it as an ordinary call); its result becomes the
   * task's, then the outcome is reported.
   */
  private async performTask(t: LiveTask, lease: Lease): Promise<void> {
    if (t.control.signal.aborted || this.closed || isTerminal(t.record.status)) {
      await lease
        .report('not_performed', 'the task was cancelled after the call was claimed')
        .catch((err: Error) => this.o.log(`could not record the outcome on ${lease.workflowId}: ${err.message}`));
      return;
    }
    t.performing = true;
    let outcome: 'ok' | 'tool_error' | 'performer_failure';
    let detail: string | undefined;
    // Approved with edits (docs/edits.md): the upstream gets exactly the edited arguments, as for a plain call.
    const edited = lease.edited;
    const params = edited ? { ...t.record.request_params, arguments: edited.arguments } : t.record.request_params;
    try {
      const answered = await this.ownRequest('tools/call', params);
      const response = edited ? withEditNote(answered, edited.changes) : answered;
      if (response.error) {
        outcome = 'performer_failure';
        detail = JSON.stringify(response.error).slice(0, 2000);
        this.finishTask(t, 'failed', { error: response.error as { code: number; message: string } });
      } else {
        const result = (response.result ?? {}) as Record<string, unknown>;
        outcome = result.isError ? 'tool_error' : 'ok';
        this.finishTask(t, outcome === 'ok' ? 'completed' : 'failed', { result });
      }
    } catch (err) {
      outcome = 'performer_failure';
      detail = (err as Error).message;
      this.finishTask(t, 'failed', {
        result: refusedAnswer(`the upstream failed after the call was forwarded: ${detail}`) as unknown as Msg,
      });
    }
    await lease
      .report(outcome, detail)
      .catch((err: Error) => this.o.log(`could not record the outcome on ${lease.workflowId}: ${err.message}`));
  }

  /**
   * The task of `taskId` for this agent and server: from this session, or read back from its record (a task of an
   * earlier proxy or session). An unfinished task nobody follows is taken up again from its proposal: one already
   * performed answers from the recorded outcome; otherwise a runner follows it (and performs an approval once).
   */
  private async taskFor(taskId: string): Promise<LiveTask | undefined> {
    let t = this.tasks.get(taskId);
    if (!t) {
      const record = this.taskRecords.read(taskId, this.o.agentId, this.o.server);
      if (!record) return undefined;
      t = this.keepTask(record);
    }
    if (isTerminal(t.record.status) || t.running || t.local) return t;
    const status = await statusOfRun(this.o.temporal.client, t.record.workflow_id).catch(() => null);
    if (status?.caller?.outcome) {
      const { outcome, detail } = status.caller;
      const text =
        `performed once by agent-judge (outcome ${outcome}${detail ? `: ${detail}` : ''}); the upstream's answer ` +
        'was not kept (the proxy stopped before it was recorded). Proposal ' +
        status.proposal_id;
      this.finishTask(t, outcome === 'ok' ? 'completed' : 'failed', {
        result: { content: [{ type: 'text', text }], isError: outcome !== 'ok' },
      });
      return t;
    }
    if (status) t.record.status_message = workingMessage(status);
    const tool = await this.toolNamed(t.record.tool).catch(() => undefined);
    if (!tool || toolDefinitionHash(tool) !== t.record.tool_definition_hash) {
      this.finishTask(t, 'failed', {
        result: refusedAnswer(
          `the upstream's tool ${JSON.stringify(t.record.tool)} is gone or its definition changed since the task ` +
            'was created; call it again',
        ) as unknown as Msg,
      });
      return t;
    }
    const call: GateToolCall = {
      runtime: MCP_RUNTIME,
      server: this.o.server,
      tool: t.record.tool,
      toolDefinitionHash: t.record.tool_definition_hash,
      arguments: t.record.arguments,
      agent: t.record.agent_statement,
    };
    t.control = new AbortController();
    void this.runTask(t, call);
    return t;
  }

  private async handleTaskRequest(m: Msg): Promise<void> {
    const id = m.id as Id;
    if (m.method === 'tasks/list') return this.listTasks(m);
    const taskId = m.params?.taskId as string;
    const control = new AbortController();
    this.held.set(id, control);
    try {
      const t = await this.taskFor(taskId);
      if (control.signal.aborted) return;
      if (!t) return this.taskError(id, `Task not found: ${taskId}`);
      switch (m.method) {
        case 'tasks/get': {
          if (!isTerminal(t.record.status) && t.record.workflow_id) {
            const status = await statusOfRun(this.o.temporal.client, t.record.workflow_id).catch(() => null);
            if (status && !isTerminal(t.record.status)) t.record.status_message = workingMessage(status);
          }
          return this.answer(id, { ...taskOf(t.record) });
        }
        case 'tasks/cancel': {
          if (isTerminal(t.record.status)) {
            return this.taskError(id, `Cannot cancel task in terminal status: ${t.record.status}`);
          }
          if (t.performing) {
            return this.taskError(id, 'the call was already forwarded to the upstream once; it cannot be cancelled');
          }
          t.control.abort();
          this.finishTask(
            t,
            'cancelled',
            { result: refusedAnswer('the client cancelled the task') as unknown as Msg },
            'cancelled by the client: not performed. agent-judge does not withdraw the proposal: it stays open ' +
              'for its approver, and an approval is performed only if the identical call comes again.',
          );
          return this.answer(id, { ...taskOf(t.record) });
        }
        case 'tasks/result': {
          // Waits for the end, bounded by the task's ttl and one more hold (the runner's last round).
          const left = Date.parse(t.record.created_at) + t.record.ttl_ms + holdForMs(this.o.settings) - Date.now();
          const aborted = new Promise<void>((r) => control.signal.addEventListener('abort', () => r(), { once: true }));
          await Promise.race([t.done, aborted, new Promise((r) => setTimeout(r, Math.max(0, left)).unref())]);
          if (control.signal.aborted) return; // a cancelled request gets no response
          if (!isTerminal(t.record.status)) {
            return this.taskError(id, `task ${taskId} is not finished yet; ask again`, ErrorCode.InternalError);
          }
          const result = t.record.result ?? {
            content: [{ type: 'text', text: t.record.status_message ?? t.record.status }],
            isError: t.record.status !== 'completed',
          };
          if (result.error) {
            return this.toAgent({ jsonrpc: '2.0', id, error: result.error });
          }
          const meta = (result._meta ?? {}) as Record<string, unknown>;
          return this.answer(id, { ...result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } });
        }
      }
    } catch (err) {
      if (!control.signal.aborted) this.taskError(id, (err as Error).message, ErrorCode.InternalError);
    } finally {
      this.held.delete(id);
    }
  }

  /** This session's tasks, then (first page only) the upstream's own when it has tasks; a cursor is the upstream's. */
  private async listTasks(m: Msg): Promise<void> {
    const id = m.id as Id;
    if (this.upstreamTasks && m.params?.cursor !== undefined) {
      this.track(m);
      this.toUpstream(m);
      return;
    }
    const ours = [...this.tasks.values()].filter((t) => !t.local).map((t) => taskOf(t.record));
    if (!this.upstreamTasks) return this.answer(id, { tasks: ours });
    const r = await this.ownRequest('tasks/list', {}).catch(() => null);
    const theirs = (r?.result ?? {}) as Record<string, unknown>;
    const tasks: unknown[] = Array.isArray(theirs.tasks) ? (theirs.tasks as unknown[]) : [];
    this.answer(id, { ...theirs, tasks: [...ours, ...tasks] });
  }

  /** Resolves once every audit line started so far is written (the proxy waits for it before exiting). */
  flushAudit(): Promise<void> {
    return this.auditQueue;
  }
}

/**
 * The upstream's answer to a call approved with edits, with a first text item telling the agent what ran instead of
 * what it sent (the edits, each path before and after). An error answer is passed as it is.
 */
function withEditNote(response: Msg, changes: readonly ActionChange[]): Msg {
  const result = response.result as { content?: unknown[] } | undefined;
  if (!result || !Array.isArray(result.content)) return response;
  const text =
    'agent-judge: a person approved this call with edits; it ran as edited, not as sent: ' + describeChanges(changes);
  return { ...response, result: { ...result, content: [{ type: 'text', text }, ...result.content] } };
}

/** The `tools/call` params as the proxy sends them upstream for a task: no `task`, no progress token. */
function withoutTaskParams(params: Record<string, unknown>): Record<string, unknown> {
  const { task: _task, _meta, ...rest } = params;
  const meta = { ...((_meta ?? {}) as Record<string, unknown>) };
  delete meta.progressToken;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}
