/**
 * The conformance guarantees (docs/gate.md, "Conformance: guarantees × adapters") through both fronts of the MCP
 * proxy: `agent-judge mcp` over stdio and `agent-judge mcp --http`, each a process of the built CLI driven by the real
 * MCP SDK client, in front of server-filesystem from npm, the run's real Temporal server and workers started here.
 * Each case runs through each front; what happened is checked on disk and in the proposal's record.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveGrants } from '../../src/activities/live-grants';
import { decide, getStatus } from '../../src/client/proposals';
import type { ActionEdit } from '../../src/contracts/action-edit';
import { newAgentToken, tokenSha256 } from '../../src/gate/http-auth';
import { startSystemWithGrants } from '../helpers/gate-service';
import { grantIdenticalCalls, onlyUseOf } from '../helpers/grants';
import {
  callTool,
  connectProxy,
  EVIDENCE,
  FS_SERVER,
  mcpEnvOf,
  mcpJudge,
  mcpSpec,
  proxyArgs,
  scott,
  textOf,
  until,
  verdictOf,
  type CallResult,
  type ConnectedProxy,
  type McpEnv,
} from '../helpers/mcp';
import { connectHttp, startHttpProxy, type HttpProxy } from '../helpers/mcp-http';
import { proposalsVisible } from '../helpers/visibility';

const ENGINEERING = newAgentToken();
const RESEARCH = newAgentToken();
const FRONTS = ['stdio', 'http'] as const;
type Front = (typeof FRONTS)[number];

let env: McpEnv;
let grants: LiveGrants;
let stopSystem: () => Promise<void>;
const proxies: ConnectedProxy[] = [];
const httpProxies: HttpProxy[] = [];
const clients: Client[] = [];
/** `@engineering`'s MCP client on each front. */
const engineering = {} as Record<Front, Client>;
/** `@research`'s, on the HTTP front. */
let research: Client;

/** `agent-judge mcp --http` with `policyFile`, in front of server-filesystem. */
async function httpFront(policyFile: string): Promise<HttpProxy> {
  const args = proxyArgs({ ...env, policyFile }, []).slice(2, -1);
  args.splice(args.indexOf('--agent'), 2);
  const proxy = await startHttpProxy([...args, '--', process.execPath, FS_SERVER, env.baseDir], env.baseDir);
  httpProxies.push(proxy);
  return proxy;
}

async function stdioFront(target: Partial<McpEnv> = {}): Promise<Client> {
  const proxy = await connectProxy({ ...env, ...target });
  proxies.push(proxy);
  return proxy.agent;
}

async function httpClient(url: string, token: string, name?: string): Promise<Client> {
  const client = await connectHttp(url, token, name);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const spec = mcpSpec({
    holdFor: '3s',
    mkdirActionType: 'guarantees_mkdir',
    http: {
      agents: [
        { agent: '@engineering', tokenSha256: tokenSha256(ENGINEERING) },
        { agent: '@research', tokenSha256: tokenSha256(RESEARCH) },
      ],
    },
  });
  let sys;
  ({ sys, grants, stop: stopSystem } = await startSystemWithGrants(spec, { judge: mcpJudge(spec) }));
  env = mcpEnvOf(sys);
  engineering.stdio = await stdioFront();
  const http = await httpFront(env.policyFile);
  engineering.http = await httpClient(http.url, ENGINEERING);
  research = await httpClient(http.url, RESEARCH, 'research-agent');
}, 120_000);
afterAll(async () => {
  for (const c of [...clients, ...proxies.map((p) => p.agent)]) await c.close().catch(() => undefined);
  for (const p of httpProxies) await p.stop();
  await stopSystem?.();
});

const why = { justification: 'the weekly report', cited_evidence: EVIDENCE };

/** A call held for a person (PENDING): its proposal id. */
async function held(client: Client, tool: string, args: Record<string, unknown>): Promise<string> {
  const r = await callTool(client, tool, { ...args, _agent_judge: why });
  expect(verdictOf(r), textOf(r)).toMatchObject({ outcome: 'PENDING', status: 'awaiting_human' });
  return String(verdictOf(r)!.proposal_id);
}

/** scott's signed approval (with `edits`, when given). */
const approve = (proposalId: string, edits?: ActionEdit[]) =>
  decide(
    env.sys.client,
    proposalId,
    { decision: 'approve', approver: 'scott', via: 'cli', ...(edits ? { edits } : {}) },
    { key: scott },
  );

/** The proposal's record once the proxy has reported its outcome (it reports right after answering the agent). */
const reported = (proposalId: string) =>
  until('the outcome recorded', async () => {
    const s = await getStatus(env.sys.client, proposalId);
    return s.caller?.outcome ? s : undefined;
  });

const file = (front: Front, name: string) => join(env.workspace, `${front}-${name}-${randomUUID().slice(0, 8)}.md`);

describe('the MCP proxy, through each front (stdio and Streamable HTTP)', () => {
  it('an approval with edits: the re-call runs exactly the edited arguments, and the agent is told', async () => {
    for (const front of FRONTS) {
      const client = engineering[front];
      const [source, asked, edited] = [file(front, 'src'), file(front, 'asked'), file(front, 'edited')];
      writeFileSync(source, 'draft\n');
      // move_file is no rule's: an MCP tool call a person decides, whose arguments a person may edit.
      const args = { source, destination: asked };
      const proposalId = await held(client, 'move_file', args);
      await approve(proposalId, [{ path: 'parameters.arguments.destination', value: edited }]);
      const again = await callTool(client, 'move_file', args);
      expect(again.isError, `${front}: ${textOf(again)}`).toBeFalsy();
      expect(again.content?.[0]?.text).toMatch(/approved this call with edits.*parameters\.arguments\.destination/s);
      // Moved where the person said, never where the agent asked.
      expect(readFileSync(edited, 'utf8')).toBe('draft\n');
      expect([existsSync(asked), existsSync(source)]).toEqual([false, false]);
      expect(await reported(proposalId)).toMatchObject({
        status: 'executed',
        caller: { outcome: 'ok' },
        edited: { changes: [{ path: 'parameters.arguments.destination', from: asked, to: edited }] },
      });
    }
  });

  it("a grant covers the identical call and nothing else: not other content, not another agent's call", async () => {
    for (const front of FRONTS) {
      const client = engineering[front];
      const path = file(front, 'granted');
      const args = { path, content: '# granted\n' };
      const proposalId = await held(client, 'write_file', args);
      await approve(proposalId);
      const grantId = await grantIdenticalCalls(env.sys, grants, proposalId, { key: scott });
      expect((await callTool(client, 'write_file', args)).isError).toBeFalsy();
      await reported(proposalId);
      rmSync(path);

      // The identical call again: the grant covers it, forwarded at once.
      const again = await callTool(client, 'write_file', { ...args, _agent_judge: why });
      expect(again.isError, `${front}: ${textOf(again)}`).toBeFalsy();
      expect(readFileSync(path, 'utf8')).toBe('# granted\n');
      // Other content, or (over HTTP) another agent's identical call: held for a person, nothing written.
      await held(client, 'write_file', { path, content: '# widened\n' });
      if (front === 'http') await held(research, 'write_file', args);
      expect(readFileSync(path, 'utf8')).toBe('# granted\n');
      expect(await onlyUseOf(env.sys, grantId)).toMatchObject({ proposal: { agent_id: '@engineering' } });
    }
  });

  it('an approved call the upstream answers with an error: recorded tool_error, the agent reads it', async () => {
    for (const front of FRONTS) {
      const client = engineering[front];
      const args = { source: file(front, 'missing'), destination: file(front, 'nowhere') };
      const proposalId = await held(client, 'move_file', args);
      await approve(proposalId);
      const failed = await callTool(client, 'move_file', args);
      expect(failed.isError, front).toBe(true);
      expect(textOf(failed)).toMatch(/ENOENT|no such file/i);
      expect(await reported(proposalId)).toMatchObject({ status: 'failed', caller: { outcome: 'tool_error' } });
    }
  });

  it('an agent cannot act as another: an agent id in _agent_judge is refused, the proposal is its own', async () => {
    for (const front of FRONTS) {
      const client = engineering[front];
      const path = file(front, 'whoami');
      const claim = await callTool(client, 'write_file', {
        path,
        content: 'x',
        _agent_judge: { ...why, agent_id: '@admin' },
      });
      expect(claim.isError).toBe(true);
      expect(textOf(claim)).toMatch(/_agent_judge.*agent_id/s);
      // An argument of the tool's own that claims an agent is only an argument: the proposal is the proxy's agent's.
      const proposalId = await held(client, 'move_file', { source: path, destination: path, agent_id: '@admin' });
      expect((await getStatus(env.sys.client, proposalId)).proposal.agent_id).toBe('@engineering');
      expect(existsSync(path)).toBe(false);
    }
  });

  it('a limit refuses by its name: past the proposal limit the call is refused, nothing written', async () => {
    for (const front of FRONTS) {
      const agent = `@limited-${front}-${randomUUID().slice(0, 8)}`;
      const token = newAgentToken();
      const { spec } = env.sys.policy;
      const policyFile = join(env.baseDir, `policy-${agent.slice(1)}.json`);
      const policy = {
        ...env.sys.policy,
        spec: {
          ...spec,
          limits: { ...spec.limits, proposals: { perAgent: 2, window: '10m' } },
          mcp: { ...spec.mcp, http: { ...spec.mcp.http, agents: [{ agent, tokenSha256: tokenSha256(token) }] } },
        },
      };
      writeFileSync(policyFile, JSON.stringify(policy));
      const client =
        front === 'stdio'
          ? await stdioFront({ policyFile, agent })
          : await httpClient((await httpFront(policyFile)).url, token);
      const answers: CallResult[] = [];
      const paths = [0, 1, 2].map((i) => file(front, `l${i}`));
      for (const [i, path] of paths.entries()) {
        // The limit counts with visibility, which lags the starts: the last call comes once the others are listed.
        if (i === 2) await proposalsVisible(env.sys, agent, 2);
        answers.push(await callTool(client, 'write_file', { path, content: 'x', _agent_judge: why }));
      }
      expect(paths.filter((p) => existsSync(p))).toEqual([]);
      expect(answers.slice(0, 2).map((a) => verdictOf(a)?.outcome)).toEqual(['PENDING', 'PENDING']);
      expect(answers[2]!.isError).toBe(true);
      expect(textOf(answers[2]!)).toMatch(
        new RegExp(
          `limit proposals_per_agent: ${agent} submitted 2 proposals .*\\(spec\\.limits\\.proposals\\.perAgent is 2\\)`,
        ),
      );
    }
  });
});
