/**
 * The gate service's `/v1` API (docs/gate.md): the one door for agents in any language. Served by the resident gate
 * (`agent-judge gate`, and inside `agent-judge dev`) beside the hooks' endpoints, behind the same Host, Origin and
 * token checks. Every request is validated against the zod schemas of ./api.ts (bad input: 400 naming the field,
 * nothing started); every wait is bounded; the token alone decides the agent.
 */
import type { GateProvenance } from '../provenance';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import {
  AgentJudgeError,
  BadInputError,
  DuplicateProposalError,
  LimitExceededError,
  NotFoundError,
} from '../../contracts/errors';
import type { Logger } from '../../contracts/logger';
import type { McpHttpAgent } from '../../contracts/mcp';
import type { CompliancePolicy } from '../../contracts/policy';
import { describeIssues } from '../../contracts/zod-error';
import { RefusedError } from '../../client/proposals';
import { unreachableReason } from '../resolve';
import { CapabilityRefusedError, redeemCapability } from '../../client/capabilities';
import { unverifiedClaims } from '../../identity/capability';
import {
  CallRequestSchema,
  OutcomeRequestSchema,
  RedeemRequestSchema,
  WaitQuerySchema,
  type RedeemRequest,
} from './api';
import { CallDesk } from './calls';
import { parseJsonBody, readBody, requestAgent, sendError, sendJson } from './http';
import { openApiDocument } from './openapi';
import { ForbiddenError, ProposalDesk, type Followed } from './proposals';

/** The largest request body read (a proposal's own limit is 256 KiB; a call's arguments are bounded the same way). */
const MAX_BODY_BYTES = 1024 * 1024;
/** How long a proposal request waits when it names no `wait_ms` (ms). */
const DEFAULT_WAIT_MS = 10_000;

export interface GateServiceOptions {
  client: Client;
  taskQueue: string;
  policy: CompliancePolicy;
  /** Who may call: one bearer token per agent, kept as its SHA-256; the token decides the agent id. */
  agents: readonly McpHttpAgent[];
  holdMs: number;
  performMs: number;
  logger: Logger;
  /** The package's version, for the OpenAPI document. */
  version: string;
  /** The process's provenance, shared with the hooks' gates (docs/provenance.md); absent, no call is tainted. */
  provenance?: GateProvenance;
}

export class GateService {
  private readonly calls: CallDesk;
  private readonly proposals: ProposalDesk;

  constructor(private readonly o: GateServiceOptions) {
    this.calls = new CallDesk(o);
    this.proposals = new ProposalDesk(o);
  }

  /** Serves one `/v1/...` request (Host and Origin already checked by the server). */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (path === '/v1/openapi.json') {
      if (req.method !== 'GET') return sendError(res, 405, 'Method Not Allowed: GET /v1/openapi.json');
      return sendJson(res, 200, openApiDocument(this.o.version));
    }
    const agent = requestAgent(req, this.o.agents);
    if (agent === null) {
      return sendError(
        res,
        401,
        'Unauthorized: a valid bearer token is required (agent-judge hook token --agent @x)',
        'auth',
        {
          'www-authenticate': 'Bearer realm="agent-judge"',
        },
      );
    }
    try {
      await this.route(req, res, url, agent);
    } catch (err) {
      this.refuse(res, err);
    }
  }

  close(): void {
    this.calls.close();
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, agent: string): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? 'GET';
    let m: RegExpExecArray | null;
    if (path === '/v1/calls') {
      if (method !== 'POST') return sendError(res, 405, 'Method Not Allowed: POST /v1/calls');
      const request = await this.body(req, CallRequestSchema, 'call');
      const control = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) control.abort();
      });
      const answer = await this.calls.decide(agent, request, control.signal);
      if (answer !== null) sendJson(res, 200, answer);
      return;
    }
    if ((m = /^\/v1\/calls\/([A-Za-z0-9_-]{1,64})\/outcome$/.exec(path))) {
      if (method !== 'POST') return sendError(res, 405, 'Method Not Allowed: POST /v1/calls/{id}/outcome');
      const outcome = await this.body(req, OutcomeRequestSchema, 'outcome');
      const { proposal_id } = await this.calls.report(agent, m[1]!, outcome);
      return sendJson(res, 200, { recorded: true, proposal_id });
    }
    if (path === '/v1/proposals') {
      if (method !== 'POST') return sendError(res, 405, 'Method Not Allowed: POST /v1/proposals');
      const wait = this.waitOf(url);
      const body = await this.body(req, null, 'proposal');
      return this.followed(res, await this.proposals.submit(agent, body, wait));
    }
    if ((m = /^\/v1\/proposals\/([A-Za-z0-9._:-]{1,200})$/.exec(path))) {
      if (method !== 'GET') return sendError(res, 405, 'Method Not Allowed: GET /v1/proposals/{id}');
      return this.followed(res, await this.proposals.get(agent, m[1]!, this.waitOf(url)));
    }
    if ((m = /^\/v1\/proposals\/([A-Za-z0-9._:-]{1,200})\/clarification$/.exec(path))) {
      if (method !== 'POST') return sendError(res, 405, 'Method Not Allowed: POST /v1/proposals/{id}/clarification');
      const body = await this.body(req, null, 'clarification');
      return this.followed(res, await this.proposals.clarify(agent, m[1]!, body));
    }
    if (path === '/v1/capabilities/redeem') {
      if (method !== 'POST') return sendError(res, 405, 'Method Not Allowed: POST /v1/capabilities/redeem');
      const request = await this.body(req, RedeemRequestSchema, 'redemption');
      return sendJson(res, 200, { redeemed: true, redemption: await this.redeem(agent, request) });
    }
    sendError(res, 404, `Not Found: ${method} ${path} (the API is described at GET /v1/openapi.json)`);
  }

  /**
   * Spends the token once through its proposal's workflow. Only the token's own agent may: a token of another agent's
   * proposal is refused before anything is asked (its `sub` is read unverified here, then the signature, expiry,
   * audience and action are checked against the policy's issuers before Temporal, and again by the workflow).
   */
  private async redeem(agent: string, request: RedeemRequest) {
    if (unverifiedClaims(request.token)?.sub !== agent) {
      throw new CapabilityRefusedError(`capability refused: the token is not one of ${agent}'s proposals`, 'agent');
    }
    return redeemCapability(this.o.client, {
      token: request.token,
      action: { action_sha256: request.action_sha256 },
      audience: request.audience,
      redeemer: `gate:${agent}`,
      issuers: this.o.policy.spec.capabilities.issuers,
      ...(request.nonce ? { nonce: request.nonce } : {}),
    });
  }

  private followed(res: ServerResponse, f: Followed): void {
    sendJson(res, f.settled ? 200 : 202, f.outcome);
  }

  private waitOf(url: URL): number {
    const parsed = WaitQuerySchema.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success) throw new BadInputError(describeIssues('query', parsed.error.issues));
    return parsed.data.wait_ms ?? DEFAULT_WAIT_MS;
  }

  /** The JSON body, validated by `schema` when one is given (else the desk validates it). */
  private async body<S extends z.ZodType>(req: IncomingMessage, schema: S | null, what: string): Promise<z.output<S>> {
    const text = await readBody(req, MAX_BODY_BYTES);
    if (text === null) throw new BadInputError(`${what}: the body is larger than ${MAX_BODY_BYTES} bytes`);
    const parsed = parseJsonBody(text, what);
    if (!parsed.ok) throw new BadInputError(parsed.error);
    if (!schema) return parsed.value as z.output<S>;
    const checked = schema.safeParse(parsed.value);
    if (!checked.success) throw new BadInputError(describeIssues(what, checked.error.issues));
    return checked.data;
  }

  /** An error as its HTTP answer: the status says what kind, the text what exactly. Nothing internal leaks. */
  private refuse(res: ServerResponse, err: unknown): void {
    if (err instanceof ForbiddenError) return sendError(res, 403, err.message, 'agent');
    if (err instanceof LimitExceededError) {
      const retry = err.resetsAt ? Math.max(1, Math.ceil((Date.parse(err.resetsAt) - Date.now()) / 1000)) : null;
      return sendError(res, 429, err.message, `limits.${err.limit}`, retry ? { 'retry-after': String(retry) } : {});
    }
    if (err instanceof CapabilityRefusedError) return sendError(res, 409, err.message, `capability.${err.code}`);
    if (err instanceof DuplicateProposalError) return sendError(res, 409, err.message, 'duplicate');
    if (err instanceof RefusedError) return sendError(res, 409, err.message, 'refused');
    if (err instanceof NotFoundError) return sendError(res, 404, err.message, 'not-found');
    if (err instanceof BadInputError) return sendError(res, 400, err.message, 'bad-input');
    if (err instanceof AgentJudgeError) return sendError(res, 400, err.message);
    this.o.logger.error({ err: (err as Error).message }, 'gate service request failed');
    sendError(res, 503, unreachableReason(err, this.o.client), 'unavailable');
  }
}
