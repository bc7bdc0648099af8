/**
 * The resident gate: coding agents' hooks decided by a long-lived process on loopback, so a hook call pays neither
 * process start-up nor a Temporal connection. `POST /hooks/<runtime>` takes the runtime's own hook input as the body
 * and answers with the runtime's own hook output (so Claude Code's `http` hook type points straight at it; the
 * command hook `agent-judge hook <runtime>` forwards stdin here). Authenticated per agent as the MCP HTTP front is
 * (src/gate/http-auth.ts: a bearer token per agent, kept in the policy as its SHA-256; the token decides the agent id),
 * Host checked against DNS rebinding, browsers' requests (an Origin header) refused.
 *
 * One gate (src/gate/) per agent and runtime. A forwarded call's lease is kept until the runtime's post-tool hook
 * reports what happened (by session and tool-use id), or until `spec.mcp.performWithin`, when the proposal itself
 * records "forwarded, no outcome".
 */
import { GateProvenance } from '../gate/provenance';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { sha256 } from '@noble/hashes/sha2.js';
import { durationMs } from '../contracts/duration';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import { BUILTIN_SERVER, GATE_RUNTIMES, isGateRuntime, type GateRuntime } from '../contracts/hooks';
import type { Logger } from '../contracts/logger';
import type { CompliancePolicy } from '../contracts/policy';
import type { McpHttpAgent } from '../contracts/mcp';
import { Gate, type GateAnswer, type Lease } from '../gate';
import { appendChained } from '../audit/chain';
import { completeHookCall, completionContextOf, type CompletionContext } from '../gate/complete';
import { isInside, realPath } from '../guards/paths';
import { bearerToken } from '../gate/http-auth';
import { projectDirProblem, type HookedProject, type ProjectRegistry } from './projects';
import { hookAdapter } from './runtimes';
import { GateService } from '../gate/service';
import { readBody, requestAgent, requestProblem } from '../gate/service/http';
import { packageVersion } from '../package-root';
import type { HookReply, PostOutcome } from './adapter';

/** The largest hook input read (a Write of a large file is bounded by the proposal's own limit long before). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Leases waiting for their post-tool report, at most (oldest dropped first: their proposals then end uncertain). */
const MAX_LEASES = 10_000;

/** The response header carrying the exit code a command hook should exit with (0, or 2 to block). */
export const EXIT_CODE_HEADER = 'x-agent-judge-exit-code';

export interface HookGateOptions {
  host: string;
  port: number;
  policy: CompliancePolicy;
  /** Who may call: the policy's `spec.hooks.gate.agents`, or the dev token's agent. */
  agents: readonly McpHttpAgent[];
  temporal: { client: Client; taskQueue: string };
  /** Relative hook roots resolve against this (where the gate runs). */
  baseDir: string;
  /** Hash-chained log of the calls decided without a proposal (no-judge, refused). */
  auditLog: string;
  /** The command's logger: failed requests, and outcomes or audit lines that could not be recorded. */
  logger: Logger;
  /**
   * Hooked projects (src/hooks/projects.ts): when set, the agents above may register projects, and a project's own
   * token is accepted for `projectAgent`, judged with that project's roots.
   */
  projects?: { registry: ProjectRegistry; agent: string; stateDirs: readonly string[] };
}

/** A call decided without a proposal, as its audit line records it. */
export interface HookAuditRecord {
  kind: 'hook_no_judge' | 'hook_refused';
  agent: string;
  runtime: GateRuntime;
  tool: string;
  argument_digest: string;
  rule: string | null;
  reason?: string;
  session_id?: string;
  call_id?: string;
  at: string;
}

interface HeldLease {
  lease: Lease;
  timer: NodeJS.Timeout;
}

function reply(res: ServerResponse, r: HookReply): void {
  if (r.exitCode === 2) {
    res.writeHead(422, { 'content-type': 'text/plain; charset=utf-8', [EXIT_CODE_HEADER]: '2' });
    res.end(r.stderr ?? 'agent-judge: blocked');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', [EXIT_CODE_HEADER]: '0' });
  res.end(JSON.stringify(r.stdout ?? {}));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function unauthorized(res: ServerResponse): void {
  plain(res, 401, 'Unauthorized: a valid bearer token is required (agent-judge hook token)', {
    'www-authenticate': 'Bearer realm="agent-judge"',
  });
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(text);
}

export class HookGateServer {
  private server: Server | undefined;
  private readonly gates = new Map<string, Gate>();
  private readonly leases = new Map<string, HeldLease>();
  private readonly completion: CompletionContext;
  private readonly projectCompletions = new Map<string, CompletionContext>();
  private readonly holdMs: number;
  private readonly performMs: number;
  private auditQueue: Promise<void> = Promise.resolve();
  private port = 0;
  private readonly api: GateService;
  /** One per process: the sessions of every agent and runtime, hooks and /v1 alike (docs/provenance.md). */
  private readonly provenance: GateProvenance;

  constructor(private readonly o: HookGateOptions) {
    const h = o.policy.spec.hooks;
    this.completion = completionContextOf(o.policy, o.baseDir);
    this.holdMs = durationMs(h.holdFor);
    this.performMs = durationMs(o.policy.spec.mcp.performWithin);
    this.provenance = new GateProvenance(o.policy.spec.provenance, undefined, (call, markers) =>
      o.logger.warn(
        { agent: call.agentId, runtime: call.runtime, tool: call.tool, markers },
        'a tool result carries text addressed to a model: the session is marked',
      ),
    );
    this.api = new GateService({
      provenance: this.provenance,
      client: o.temporal.client,
      taskQueue: o.temporal.taskQueue,
      policy: o.policy,
      agents: o.agents,
      holdMs: this.holdMs,
      performMs: this.performMs,
      logger: o.logger,
      version: packageVersion(),
    });
  }

  /** Listens; resolves to the base URL (`http://127.0.0.1:PORT`). */
  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.o.logger.error({ err: (err as Error).message }, 'request failed');
        plain(res, 500, 'agent-judge: internal error; the call was not allowed', { [EXIT_CODE_HEADER]: '2' });
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    return `http://${this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host}:${this.port}`;
  }

  /** Stops listening; held calls are answered as refused (never allowed); leases left are never reported. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const held of this.leases.values()) clearTimeout(held.timer);
    this.leases.clear();
    this.api.close();
    if (server) {
      const closing = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closing;
    }
    await this.auditQueue;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gate');
    if (url.pathname.startsWith('/v1/')) {
      // The runtime-neutral API (src/gate/service/): the same Host and Origin checks, its own token check and answers.
      const problem = requestProblem(req, this.port);
      if (problem) return plain(res, 403, problem);
      return this.api.handle(req, res, url);
    }
    if (url.pathname === '/hooks/whoami' || url.pathname === '/hooks/projects') return this.manage(req, res, url);
    const m = /^\/hooks\/([a-z-]+)$/.exec(url.pathname);
    if (!m || !isGateRuntime(m[1]!)) return plain(res, 404, `Not Found: POST /hooks/${GATE_RUNTIMES.join('|')}`);
    if (req.method !== 'POST') return plain(res, 405, 'Method Not Allowed', { allow: 'POST' });
    // DNS rebinding (a page that rebinds a name to loopback sends its own Host); hooks never send an Origin.
    const problem = requestProblem(req, this.port);
    if (problem) return plain(res, 403, problem);
    const caller = this.caller(req);
    if (caller === null) return unauthorized(res);
    const { agent, project } = caller;
    const runtime = m[1];
    const adapter = hookAdapter(runtime);
    const text = await readBody(req, MAX_BODY_BYTES);
    if (text === null) return reply(res, adapter.block(`the hook input is larger than ${MAX_BODY_BYTES} bytes`));
    let event;
    try {
      event = adapter.read(JSON.parse(text));
    } catch (err) {
      return reply(res, adapter.block(`the hook input cannot be read (${(err as Error).message})`));
    }
    if (event.kind === 'ignored') return reply(res, adapter.acknowledge());
    const leaseKey = `${agent}|${runtime}|${project?.dir ?? ''}|${event.key}`;
    if (event.kind === 'post') {
      // What came back enters the session's provenance (an untrusted tool's result), whether or not it was judged.
      if (event.performed) {
        const { tool, sessionId, result } = event.performed;
        this.gateFor(agent, runtime).recordResult(
          { runtime, server: BUILTIN_SERVER, tool, session: { sessionId } },
          result,
        );
      }
      await this.reportOutcome(leaseKey, event.outcome, event.detail);
      return reply(res, adapter.acknowledge());
    }

    const control = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) control.abort();
    });
    if (project && !this.cwdInside(event.call.cwd, project)) {
      const why =
        `this hook was installed for ${project.dir}; the call's working directory ${event.call.cwd ?? '(none)'} ` +
        'lies outside it (run agent-judge hook install in that folder to hook it)';
      this.audit(agent, runtime, event.call, { kind: 'refused', reason: why, proposal: null });
      return reply(res, adapter.block(why));
    }
    const answer = await this.gateFor(agent, runtime, project).decide(event.call, { signal: control.signal });
    if (answer.kind === 'cancelled') return;
    if (answer.kind === 'forward' && answer.lease) this.hold(leaseKey, answer.lease);
    if ((answer.kind === 'forward' && !answer.lease) || answer.kind === 'refused') {
      this.audit(agent, runtime, event.call, answer);
    }
    const defer = url.searchParams.get('defer') === '1';
    reply(
      res,
      adapter.render(answer, { deferWhenHeld: defer, terminalApproves: this.o.policy.spec.hooks.terminalApproves }),
    );
  }

  /** Who calls: an agent of the policy (or the dev token), or a hooked project's token; null when neither. */
  private caller(req: IncomingMessage): { agent: string; project: HookedProject | null } | null {
    const agent = requestAgent(req, this.o.agents);
    if (agent !== null) return { agent, project: null };
    const token = bearerToken(req.headers.authorization);
    const project = token !== null && this.o.projects ? this.o.projects.registry.byToken(token) : null;
    return project && this.o.projects ? { agent: this.o.projects.agent, project } : null;
  }

  private cwdInside(cwd: string | undefined, project: HookedProject): boolean {
    if (cwd === undefined) return false;
    try {
      return isInside(realPath(cwd, project.dir), project.dir);
    } catch {
      return false;
    }
  }

  /** `GET /hooks/whoami` (who the gate is, to a caller with a token) and `POST /hooks/projects` (register one). */
  private async manage(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const problem = requestProblem(req, this.port);
    if (problem) return plain(res, 403, problem);
    const caller = this.caller(req);
    if (caller === null) return unauthorized(res);
    if (url.pathname === '/hooks/whoami') {
      if (req.method !== 'GET') return plain(res, 405, 'Method Not Allowed', { allow: 'GET' });
      return json(res, 200, {
        service: 'agent-judge gate',
        version: packageVersion(),
        agent: caller.agent,
        project: caller.project?.dir ?? null,
        registers_projects: this.o.projects !== undefined && caller.project === null,
      });
    }
    if (req.method !== 'POST') return plain(res, 405, 'Method Not Allowed', { allow: 'POST' });
    // A project's own token never registers: an agent holding it must not widen its roots.
    if (!this.o.projects || caller.project !== null) {
      return plain(res, 403, "Forbidden: projects are registered with the gate's dev token (agent-judge hook install)");
    }
    const text = await readBody(req, 64 * 1024);
    let dir: unknown;
    try {
      dir = (JSON.parse(text ?? '') as { dir?: unknown }).dir;
    } catch {
      dir = undefined;
    }
    if (typeof dir !== 'string' || dir.length === 0 || dir.length > 4096 || dir.includes('\0')) {
      return plain(res, 400, 'Bad Request: dir: expected the absolute path of the project folder');
    }
    const why = projectDirProblem(dir, {
      stateDirs: this.o.projects.stateDirs,
      protect: this.o.policy.spec.hooks.files.protect.map((p) => p.toLowerCase()),
    });
    if (why) return plain(res, 400, `Bad Request: dir: ${why}`);
    const registered = this.o.projects.registry.register(dir);
    this.o.logger.info({ project: registered.dir, created: registered.created }, 'project hooked');
    return json(res, 200, { dir: registered.dir, token_file: registered.tokenFile, created: registered.created });
  }

  private completionFor(project: HookedProject | null): CompletionContext {
    if (!project) return this.completion;
    let ctx = this.projectCompletions.get(project.dir);
    if (!ctx) {
      ctx = completionContextOf(this.o.policy, project.dir);
      this.projectCompletions.set(project.dir, ctx);
    }
    return ctx;
  }

  private gateFor(agent: string, runtime: GateRuntime, project: HookedProject | null = null): Gate {
    const key = `${agent}|${runtime}|${project?.dir ?? ''}`;
    const completion = this.completionFor(project);
    let gate = this.gates.get(key);
    if (!gate) {
      gate = new Gate({
        client: this.o.temporal.client,
        taskQueue: this.o.temporal.taskQueue,
        rules: this.o.policy.spec.hooks[runtime],
        // Every agent's limits, checked here whatever runtime it uses (issue 38): not the agent's own choice.
        limits: { policy: this.o.policy },
        performer: { agentId: agent, redeemer: `hook:${runtime}` },
        holdMs: this.holdMs,
        refine: (mapping, call) => completeHookCall(mapping, call, completion),
        appliesEdits: hookAdapter(runtime).changesInput === true,
        provenance: this.provenance,
      });
      this.gates.set(key, gate);
    }
    return gate;
  }

  private hold(key: string, lease: Lease): void {
    const previous = this.leases.get(key);
    if (previous) clearTimeout(previous.timer);
    const timer = setTimeout(() => this.leases.delete(key), this.performMs);
    timer.unref();
    this.leases.set(key, { lease, timer });
    if (this.leases.size > MAX_LEASES) {
      const [oldest] = this.leases.keys();
      if (oldest !== undefined) {
        clearTimeout(this.leases.get(oldest)!.timer);
        this.leases.delete(oldest);
      }
    }
  }

  private async reportOutcome(key: string, outcome: PostOutcome, detail?: string): Promise<void> {
    const held = this.leases.get(key);
    if (!held) return; // a no-judge call, or one this gate did not lease: nothing to report
    this.leases.delete(key);
    clearTimeout(held.timer);
    await held.lease
      .report(outcome, detail)
      .catch((err: Error) =>
        this.o.logger.error({ workflow_id: held.lease.workflowId, err: err.message }, 'could not record the outcome'),
      );
  }

  private audit(
    agent: string,
    runtime: GateRuntime,
    call: { tool: string; arguments: Record<string, unknown>; session?: { sessionId?: string; callId?: string } },
    answer: Extract<GateAnswer, { kind: 'forward' | 'refused' }>,
  ): void {
    const record: HookAuditRecord = {
      kind: answer.kind === 'forward' ? 'hook_no_judge' : 'hook_refused',
      agent,
      runtime,
      tool: call.tool,
      argument_digest: toHex(sha256(utf8(canonicalJson(call.arguments)))),
      rule: answer.kind === 'forward' ? answer.rule : null,
      ...(answer.kind === 'refused' ? { reason: answer.reason.slice(0, 1000) } : {}),
      ...(call.session?.sessionId ? { session_id: call.session.sessionId } : {}),
      ...(call.session?.callId ? { call_id: call.session.callId } : {}),
      at: new Date().toISOString(),
    };
    // Off the call's latency, in call order (the append takes a lock).
    this.auditQueue = this.auditQueue.then(() =>
      appendChained(this.o.auditLog, record).then(
        () => undefined,
        (err: Error) =>
          this.o.logger.error({ file: this.o.auditLog, err: err.message }, 'could not append to the audit log'),
      ),
    );
  }

  /** Resolves once every audit line started so far is written. */
  flushAudit(): Promise<void> {
    return this.auditQueue;
  }
}
