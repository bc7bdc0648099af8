/**
 * The gate service's `/v1` API on the real dev server and workers, driven as an agent in any language would: plain
 * HTTP with a bearer token. What the agent reads back (status, answer kind, the exact arguments to perform, the error
 * naming the field and the rule) and what the proposal records are asserted; the OpenAPI document is checked to
 * describe exactly what the server answers.
 */
import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { remoteGate } from '../../src/gate/remote';
import { proposalsVisible } from '../helpers/visibility';
import type { LiveGrants } from '../../src/activities/live-grants';
import { connectClient } from '../../src/client/connection';
import { findTemporalCli } from '../../src/devserver/temporal-cli';
import { startDevServer } from '../../src/devserver/server';
import { startGateService, startSystemWithGrants, type TestGateService } from '../helpers/gate-service';
import { grantIdenticalCalls, onlyUseOf } from '../helpers/grants';
import { silentLogger } from '../helpers/logger';
import type { TestSystem } from '../helpers/system';

let sys: TestSystem;
let grants: LiveGrants;
let stopSystem: () => Promise<void>;
let gate: TestGateService;

beforeAll(async () => {
  ({
    sys,
    grants,
    stop: stopSystem,
  } = await startSystemWithGrants({
    escalation: { approvers: ['scott'], timeout: '10m' },
    limits: { proposals: { perAgent: 3, window: '10m' } },
    mcp: {
      rules: [
        { name: 'api.read', server: 'agents', tool: 'read_note', tier: 'no-judge' },
        {
          name: 'api.note',
          server: 'agents',
          tool: 'write_memory',
          actionType: 'memory_write',
          parameters: { content: '$.text' },
        },
      ],
    },
  }));
  gate = await startGateService(sys, ['@alice', '@mallory', '@flood', '@granted']);
});
afterAll(async () => {
  await gate?.close();
  await stopSystem?.();
});

async function api(
  path: string,
  body: unknown,
  agent: string | null = '@alice',
  method = 'POST',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${gate.url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(agent ? { authorization: `Bearer ${gate.tokens[agent]}` } : {}),
    },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('POST /v1/calls', () => {
  it('refuses a request without a valid token, and one whose body is malformed, naming the field', async () => {
    const anonymous = await api('/v1/calls', { server: 'agents', tool: 'read_note', arguments: {} }, null);
    expect(anonymous.status).toBe(401);
    const missing = await api('/v1/calls', { server: 'agents', arguments: {} });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/call\.tool/);
    const deep = await api('/v1/calls', {
      server: 'agents',
      tool: 'x',
      arguments: JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`) as unknown,
    });
    expect(deep.status).toBe(400);
    expect(deep.json.error).toMatch(/nested more than 64 levels/);
    const reserved = await api('/v1/calls', { runtime: 'claude-code', server: 'agents', tool: 'x', arguments: {} });
    expect(reserved.status).toBe(400);
    expect(reserved.json.error).toMatch(/call\.runtime.*reserved/);
  });

  it('a no-judge call is forwarded at once with its own arguments and no lease', async () => {
    const r = await api('/v1/calls', { server: 'agents', tool: 'read_note', arguments: { path: 'a.md' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ kind: 'forward', rule: 'api.read', arguments: { path: 'a.md' }, lease: null, text: null });
  });

  it('held, approved with edits: the forward carries the edited arguments; its outcome is recorded once', async () => {
    const call = { server: 'agents', tool: 'deploy', arguments: { path: '/etc/passwd' }, hold_ms: 1000 };
    const held = await api('/v1/calls', call);
    expect(held.json).toMatchObject({ kind: 'pending', waiting_for: 'human' });
    expect(held.json.text).toMatch(/waiting for a person/);
    await decide(sys.client, held.json.proposal_id as string, {
      decision: 'approve',
      approver: 'scott',
      edits: [{ path: 'parameters.arguments.path', value: '/tmp/safe.txt' }],
    });
    const approved = await api('/v1/calls', call);
    expect(approved.json).toMatchObject({ kind: 'forward', arguments: { path: '/tmp/safe.txt' } });
    expect(approved.json.text).toMatch(/ran as edited.*\/tmp\/safe\.txt/);
    const lease = approved.json.lease as { id: string; edits: unknown[] };
    expect(lease.edits).toHaveLength(1);
    // Another agent cannot report this agent's lease.
    expect((await api(`/v1/calls/${lease.id}/outcome`, { outcome: 'ok' }, '@mallory')).status).toBe(404);
    const reported = await api(`/v1/calls/${lease.id}/outcome`, { outcome: 'tool_error', detail: 'exit 1' });
    expect(reported).toEqual({ status: 200, json: { recorded: true, proposal_id: held.json.proposal_id } });
    expect((await api(`/v1/calls/${lease.id}/outcome`, { outcome: 'ok' })).status).toBe(404);
    const status = await getStatus(sys.client, held.json.proposal_id as string);
    expect(status.caller).toMatchObject({ outcome: 'tool_error', detail: 'exit 1' });
    expect(status.proposal.agent_id).toBe('@alice');
  });

  it('a denied call is refused: no arguments to run, no lease; the identical call is refused again', async () => {
    // No rule names this tool: a person decides, and rejects it.
    const call = { server: 'agents', tool: 'drop_table', arguments: { table: `t${Date.now()}` }, hold_ms: 1000 };
    const held = await api('/v1/calls', call, '@mallory');
    expect(held.json).toMatchObject({ kind: 'pending', waiting_for: 'human' });
    await decide(sys.client, held.json.proposal_id as string, {
      decision: 'reject',
      approver: 'scott',
      reason: 'not that table',
    });
    for (let i = 0; i < 2; i++) {
      const denied = await api('/v1/calls', call, '@mallory');
      expect(denied.status).toBe(200);
      expect(denied.json).toMatchObject({
        kind: 'deny',
        proposal_id: held.json.proposal_id,
        reason: expect.stringMatching(/not that table/) as string,
      });
      // A denial carries nothing a caller could perform: no arguments, no lease to report on.
      expect(denied.json).not.toHaveProperty('arguments');
      expect(denied.json).not.toHaveProperty('lease');
    }
    const status = await getStatus(sys.client, held.json.proposal_id as string);
    expect(status).toMatchObject({ status: 'rejected', verdict: { verdict: 'REJECT' } });
    // Never leased for forwarding.
    expect(status.caller?.forwarded_at ?? null).toBeNull();
  });

  it('remoteGate answers as the in-process gate does, and fails closed when the service is out of reach', async () => {
    const remote = remoteGate({ url: gate.url, token: gate.tokens['@alice']! });
    const a = await remote.decide({ runtime: 'api', server: 'agents', tool: 'read_note', arguments: { path: 'b.md' } });
    expect(a).toMatchObject({ kind: 'forward', rule: 'api.read', lease: null, arguments: { path: 'b.md' } });
    const nowhere = remoteGate({ url: 'http://127.0.0.1:9', token: 'ajt_x', timeoutMs: 2000 });
    const b = await nowhere.decide({ runtime: 'api', server: 'agents', tool: 'read_note', arguments: {} });
    expect(b).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/could not be reached/) as string });
    const wrongToken = remoteGate({ url: gate.url, token: 'ajt_wrong' });
    const c = await wrongToken.decide({ runtime: 'api', server: 'agents', tool: 'read_note', arguments: {} });
    expect(c).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/401/) as string });
  });

  it("an agent's limit refuses its calls by name; another agent is not refused", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) {
      // The limit counts with visibility, which lags the starts: the fourth call comes once the three are listed.
      if (i === 3) await proposalsVisible(sys, '@flood', 3);
      answers.push(
        (await api('/v1/calls', { server: 'agents', tool: 'deploy', arguments: { n: i }, hold_ms: 1000 }, '@flood'))
          .json,
      );
    }
    expect(
      answers.slice(0, 3).map((a) => a.kind),
      JSON.stringify(answers[0]),
    ).toEqual(['pending', 'pending', 'pending']);
    expect(answers[3]).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(
        /^limit proposals_per_agent: @flood submitted 3 proposals .*\(spec\.limits\.proposals\.perAgent is 3\)/,
      ) as string,
    });
    const other = await api('/v1/calls', { server: 'agents', tool: 'read_note', arguments: {} }, '@mallory');
    expect(other.json.kind).toBe('forward');
    // The same limit holds for the agent's hook calls: one agent, one count, whatever door it uses.
    const hook = await fetch(`${gate.url}/hooks/claude-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gate.tokens['@flood']}` },
      body: JSON.stringify({
        session_id: 's',
        transcript_path: '/nonexistent',
        cwd: sys.baseDir,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'mcp__deploy__run',
        tool_input: { service: 'api' },
        tool_use_id: 'tu-1',
      }),
    });
    const out = (
      (await hook.json()) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } }
    ).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    expect(out.permissionDecisionReason).toMatch(
      /limit proposals_per_agent: @flood .*spec\.limits\.proposals\.perAgent/,
    );
  });
});

describe('POST /v1/calls: grants, and Temporal down', () => {
  it("a grant for one session covers the identical call there, not another session's nor another agent's", async () => {
    const call = { server: 'agents', tool: 'deploy', arguments: { service: `s-${Date.now()}` }, hold_ms: 1000 };
    const [one, two] = [
      { ...call, session_id: 'session-1' },
      { ...call, session_id: 'session-2' },
    ];
    const held = await api('/v1/calls', one, '@granted');
    expect(held.json).toMatchObject({ kind: 'pending', waiting_for: 'human' });
    const firstId = held.json.proposal_id as string;
    await decide(sys.client, firstId, { decision: 'approve', approver: 'scott' });
    const grantId = await grantIdenticalCalls(sys, grants, firstId, { thisSession: true });
    const approved = await api('/v1/calls', one, '@granted');
    expect(approved.json).toMatchObject({ kind: 'forward', lease: { proposal_id: firstId } });
    const lease = (approved.json.lease as { id: string }).id;
    expect((await api(`/v1/calls/${lease}/outcome`, { outcome: 'ok' }, '@granted')).status).toBe(200);

    // The identical call in the same session: the grant covers it, forwarded at once with its arguments.
    const again = await api('/v1/calls', one, '@granted');
    expect(again.json).toMatchObject({ kind: 'forward', arguments: call.arguments });
    const againId = (again.json.lease as { workflow_id: string }).workflow_id;
    expect(againId).not.toBe(held.json.workflow_id);
    // In another session, or from another agent in the same session: not what the grant says, held for a person.
    for (const [body, agent] of [
      [two, '@granted'],
      [one, '@mallory'],
    ] as const) {
      const elsewhere = await api('/v1/calls', body, agent);
      expect(elsewhere.json, agent).toMatchObject({ kind: 'pending', waiting_for: 'human' });
    }
    expect(await onlyUseOf(sys, grantId)).toMatchObject({
      workflow_id: againId,
      proposal: { agent_id: '@granted', session_id: 'session-1' },
    });
  });

  it('with Temporal down behind the service, a judged call is refused: no arguments, no lease', async () => {
    // A dev server of this test, stopped under a gate service that was serving.
    const server = await startDevServer({ cliPath: findTemporalCli({ logger: silentLogger }), headless: true });
    // A call to a stopped Temporal fails after three tries, not the SDK's ten: the same refusal, sooner.
    const client = await connectClient({ address: server.address, namespace: server.namespace, attempts: 3 });
    const down = await startGateService({ ...sys, client }, ['@alice']);
    try {
      const call = { server: 'agents', tool: 'write_memory', arguments: { text: 'x' }, hold_ms: 1000 };
      await server.stop();
      const r = await (
        await fetch(`${down.url}/v1/calls`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${down.tokens['@alice']}` },
          body: JSON.stringify(call),
        })
      ).json();
      expect(r).toMatchObject({
        kind: 'refused',
        reason: expect.stringMatching(/cannot reach its judge \(Temporal at /) as string,
      });
      expect(r).not.toHaveProperty('arguments');
      expect(r).not.toHaveProperty('lease');
    } finally {
      await down.close();
      await client.connection.close();
      await server.stop();
    }
  });
});

describe('/v1/proposals', () => {
  it('a proposal naming another agent is refused; without agent_id it is the token agent’s', async () => {
    const proposal = {
      action_type: 'memory_write',
      target: {},
      parameters: { content: 'remember the milk' },
      justification: 'the user asked to remember it',
      cited_evidence: [],
      scope_claim: {},
    };
    const forged = await api('/v1/proposals', { ...proposal, agent_id: '@alice' }, '@mallory');
    expect(forged.status).toBe(403);
    expect(forged.json.error).toMatch(/agent_id.*token/);
    const own = await api('/v1/proposals?wait_ms=20000', proposal, '@mallory');
    expect(own.status).toBe(200);
    expect(own.json).toMatchObject({ status: 'executed', verdict: { verdict: 'APPROVE' } });
    const id = own.json.proposal_id as string;
    expect((await api(`/v1/proposals/${id}`, null, '@mallory', 'GET')).json.status).toBe('executed');
    // Another agent's proposal reads as not found.
    expect((await api(`/v1/proposals/${id}`, null, '@alice', 'GET')).status).toBe(404);
    const again = await api('/v1/proposals', proposal, '@mallory');
    expect(again.status).toBe(409);
  });
});

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1 describing every route, and its schemas accept what the server answers', async () => {
    const res = await fetch(`${gate.url}/v1/openapi.json`);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, object> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/calls',
      '/v1/calls/{id}/outcome',
      '/v1/capabilities/redeem',
      '/v1/proposals',
      '/v1/proposals/{id}',
      '/v1/proposals/{id}/clarification',
    ]);
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, name);
    const answer = (await api('/v1/calls', { server: 'agents', tool: 'read_note', arguments: { p: 1 } })).json;
    expect(ajv.validate('CallAnswer', answer), JSON.stringify(ajv.errors)).toBe(true);
    const pending = (await api('/v1/calls', { server: 'agents', tool: 'deploy', arguments: { q: 1 }, hold_ms: 1000 }))
      .json;
    expect(ajv.validate('CallAnswer', pending), JSON.stringify(ajv.errors)).toBe(true);
    expect(ajv.validate('CallRequest', { server: 'agents', tool: 't', arguments: {} })).toBe(true);
    expect(ajv.validate('CallRequest', { server: 'agents', arguments: {} })).toBe(false);
  });
});
