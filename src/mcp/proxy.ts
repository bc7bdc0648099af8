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
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import type { SubmissionLimits } from '../client/limits';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import { BadInputError } from '../contracts/errors';
import { holdForMs, type McpSettings } from '../contracts/mcp';
import { appendChained } from '../audit/chain';
import { appendDropped } from '../audit/mcp-log';
import type { McpCounters } from '../metrics/mcp';
import { Gate, type Lease } from '../gate';
import { describeChanges, type ActionChange } from '../contracts/action-edit';
import { admit, refuseBatch, type Admission, type ErrorAnswer } from './admission';
import { refusedAnswer, renderGateAnswer, type CallAnswer } from './answers';
import { MCP_REDEEMER, MCP_RUNTIME, type ToolCall } from './mapping';
import { judgeFailure } from './judged-call';
import {
  augmentToolsList,
  splitArguments,
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

  constructor(private readonly o: ProxyOptions) {
    this.gate = new Gate({
      client: o.temporal.client,
      taskQueue: o.temporal.taskQueue,
      limits: o.temporal.limits,
      rules: o.settings,
      performer: { agentId: o.agentId, redeemer: MCP_REDEEMER },
      holdMs: holdForMs(o.settings),
    });
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
      if (m.method === 'tools/call') {
        void this.handleCall(m);
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
      if (this.toolsListRequests.delete(id) && m.result) {
        try {
          this.remember(m.result as Record<string, unknown>);
          this.toAgent({ ...m, result: augmentToolsList(m.result as Record<string, unknown>) });
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
      let split;
      try {
        split = splitArguments(params.arguments);
      } catch (err) {
        return this.answer(id, refusedAnswer((err as Error).message));
      }
      const tool = await this.toolNamed(name);
      if (!tool) return this.answer(id, refusedAnswer(`the upstream lists no tool named ${JSON.stringify(name)}`));
      const call: ToolCall = {
        server: this.o.server,
        tool: name,
        toolDefinitionHash: toolDefinitionHash(tool),
        arguments: split.upstream,
      };
      const upstreamRequest: Msg = { ...m, params: { ...params, arguments: split.upstream } };
      let progress = 0;
      // The gate maps, judges, holds and leases (src/gate/); this proxy only renders its answer or performs the call.
      const decision = await this.gate.decide(
        { runtime: MCP_RUNTIME, ...call, agent: split.agentJudge, session: { callId: String(id) } },
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
