/**
 * The Python package (python/: the gate service's client and the LangChain/LangGraph, OpenAI Agents SDK and Pydantic
 * AI adapters) against the REAL gate service over the real dev server and workers: this file starts agent-judge and
 * runs the package's pytest suite (python/tests) from the venv the test setup installs (scripts/test-tools.mjs,
 * `.agent-judge/python`), each framework real and driven by its own scripted model. The person who decides is a
 * small control endpoint calling `decide` (and `getStatus` for what the proposal recorded), granting identical calls
 * (the system's live-grant index is the test's own) and waiting for visibility; a second gate service over the same
 * system allows PROPOSAL_LIMIT proposals per agent (one fresh agent per adapter's limit test). Asserted from pytest's
 * JUnit report: every test ran and passed, none skipped, and each adapter's cases are there.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, getStatus } from '../../src/client/proposals';
import { actionDigest, type CapabilityClaims } from '../../src/contracts/capability';
import {
  capabilityClaims,
  generateCapabilityKey,
  loadCapabilityKey,
  signCapability,
  type CapabilityKey,
} from '../../src/identity/capability-key';
import { randomUUID } from 'node:crypto';
import type { LiveGrants } from '../../src/activities/live-grants';
import { grantStatus } from '../../src/client/grants';
import { PROPOSAL_LIMIT, startGateService, startSystemWithGrants, type TestGateService } from '../helpers/gate-service';
import { grantIdenticalCalls } from '../helpers/grants';
import type { TestSystem } from '../helpers/system';
import { proposalsVisible } from '../helpers/visibility';
import { toolPath } from '../helpers/tools';

const ROOT = resolve(__dirname, '..', '..');

let sys: TestSystem;
let grants: LiveGrants;
let stopSystem: () => Promise<void>;
let gate: TestGateService;
/** A gate service whose policy allows PROPOSAL_LIMIT proposals per agent: one fresh agent per adapter's test. */
let limited: TestGateService;
const LIMITED_AGENTS = Object.fromEntries(
  ['langchain', 'openai_agents', 'pydantic_ai', 'crewai'].map((a) => [a, `@limited-${randomUUID().slice(0, 8)}`]),
);
let control: Server;
let controlUrl: string;
/** A capability key the Python tests' own tokens are signed with (`/capability/mint`), and one no policy lists. */
let minting: { key: CapabilityKey; publicKey: string; unlisted: CapabilityKey };

/**
 * What the Python capability tests ask the TypeScript side: tokens signed by agent-judge's own issuer code
 * (`signCapability`) for claims they choose (expired, another audience, malformed claims), agent-judge's digests of
 * generated actions, and the running system's issuers.
 */
function capabilityControl(path: string, b: Record<string, unknown>): unknown {
  if (path === '/capability/mint') {
    const claims: CapabilityClaims = {
      ...capabilityClaims(
        {
          workflow_id: 'call-python-capability',
          sub: '@agent',
          aud: 'executor:issue_comment',
          action_sha256: 'a'.repeat(64),
          policy_sha256: 'b'.repeat(64),
          ttl_ms: 60_000,
        },
        new Date(),
      ),
      ...(b.claims as Partial<CapabilityClaims> | undefined),
    };
    const key = b.unlisted ? minting.unlisted : minting.key;
    return { token: signCapability(claims, key), issuers: { [minting.key.kid]: minting.publicKey }, claims };
  }
  if (path === '/capability/digests') {
    return (b.actions as Parameters<typeof actionDigest>[0][]).map(actionDigest);
  }
  if (path === '/capability/issuers') return sys.policy.spec.capabilities.issuers;
  return undefined;
}

/** The person deciding, and `agent-judge status`, over HTTP for the Python tests. */
function startControl(): Promise<string> {
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
  };
  control = createServer((req, res) => {
    void (async () => {
      try {
        const b = await body(req);
        const id = String(b.proposal_id);
        let out: unknown;
        if (req.url === '/decide') {
          out = await decide(sys.client, id, {
            decision: b.decision,
            approver: 'scott',
            ...(b.edits ? { edits: b.edits } : {}),
          });
        } else if (req.url === '/status') {
          out = await getStatus(sys.client, id);
        } else if (req.url === '/grant') {
          // The person grants calls identical to this proposal's (any session of its agent), once the index lists it.
          out = { grant_id: await grantIdenticalCalls(sys, grants, id) };
        } else if (req.url === '/grant/uses') {
          const { uses } = await grantStatus(sys.client, String(b.grant_id));
          out = await Promise.all(uses.map((u) => getStatus(sys.client, u.workflow_id)));
        } else if (req.url === '/visible') {
          // The limit counts with visibility, which lags the starts.
          await proposalsVisible(sys, String(b.agent), Number(b.count));
          out = {};
        } else if (req.url?.startsWith('/capability/')) {
          out = capabilityControl(req.url, b);
        }
        if (out === undefined) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
      }
    })();
  });
  return new Promise((ok) =>
    control.listen(0, '127.0.0.1', () => ok(`http://127.0.0.1:${(control.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  // A system whose live-grant index is the test's own: the grant tests wait until it lists a person's grant.
  ({
    sys,
    grants,
    stop: stopSystem,
  } = await startSystemWithGrants({
    escalation: { approvers: ['scott'], timeout: '10m' },
    mcp: {
      rules: [
        { name: 'agents.read', server: 'agents', tool: 'read_note', tier: 'no-judge' },
        {
          name: 'agents.comment',
          server: 'agents',
          tool: 'comment',
          actionType: 'issue_comment',
          target: { repo: 'a/b', issue: 1 },
          parameters: { body: '$.body' },
        },
        // A full-judge-review proposal citing no evidence: the judge asks to clarify (evidence.missing).
        {
          name: 'agents.pr',
          server: 'agents',
          tool: 'open_pr',
          actionType: 'forgejo_pr_create',
          target: { repo: 'a/b', branch: '$.branch', base: 'main' },
          parameters: { files_changed: ['src/a.ts'], estimated_diff_lines: 3 },
        },
      ],
    },
  }));
  gate = await startGateService(sys, ['@agent']);
  limited = await startGateService(sys, Object.values(LIMITED_AGENTS), {
    limits: { proposals: { perAgent: PROPOSAL_LIMIT, window: '10m' } },
  });
  const listed = generateCapabilityKey('python-tests');
  minting = {
    key: await loadCapabilityKey(`${listed.kid}:${listed.private_key}`),
    publicKey: listed.public_key,
    unlisted: await loadCapabilityKey(`${listed.kid}:${generateCapabilityKey().private_key}`),
  };
  controlUrl = await startControl();
});
afterAll(async () => {
  await new Promise((ok) => (control ? control.close(ok) : ok(undefined)));
  await gate?.close();
  await limited?.close();
  await stopSystem?.();
});

interface Case {
  classname: string;
  name: string;
  failure: string | null;
  skipped: boolean;
}

/** pytest's JUnit XML, as cases (enough of the format for pytest's own output). */
function casesOf(xml: string): Case[] {
  const cases: Case[] = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(m[1]!)?.[1] ?? '';
    const inner = m[3] ?? '';
    const failure = /<(failure|error)\b[^>]*?(?:message="([^"]*)")?[^>]*>([\s\S]*?)<\/\1>/.exec(inner);
    cases.push({
      classname: attr('classname'),
      name: attr('name'),
      failure: failure ? `${failure[2] ?? ''}\n${failure[3] ?? ''}`.slice(0, 4000) : null,
      skipped: /<skipped\b/.test(inner),
    });
  }
  return cases;
}

/** pytest in `python` (a venv's interpreter) over `paths`, against the gate service and the control endpoint. */
function runPytest(python: string, paths: string[]): Promise<{ code: number | null; output: string; cases: Case[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-pytest-'));
  const junit = join(dir, 'junit.xml');
  // Not spawnSync: the gate service and the control endpoint answer from this process while pytest runs.
  const child = spawn(
    python,
    [
      '-m',
      'pytest',
      ...paths,
      '-q',
      '-p',
      'no:cacheprovider',
      `--junitxml=${junit}`,
      '-o',
      'junit_family=xunit2',
      // While working on one adapter: AGENT_JUDGE_PYTEST_K=langchain runs only its tests (the counts below then fail).
      ...(process.env.AGENT_JUDGE_PYTEST_K ? ['-k', process.env.AGENT_JUDGE_PYTEST_K] : []),
    ],
    {
      cwd: join(ROOT, 'python'),
      env: {
        ...process.env,
        AGENT_JUDGE_TEST_URL: gate.url,
        AGENT_JUDGE_TEST_TOKEN: gate.tokens['@agent']!,
        AGENT_JUDGE_TEST_CONTROL: controlUrl,
        AGENT_JUDGE_TEST_LIMITED: JSON.stringify({
          url: limited.url,
          limit: PROPOSAL_LIMIT,
          agents: Object.fromEntries(
            Object.entries(LIMITED_AGENTS).map(([k, agent]) => [k, { agent, token: limited.tokens[agent] }]),
          ),
        }),
        PYTHONDONTWRITEBYTECODE: '1',
        // No framework phones home: tracing and telemetry off, and no key that could reach a real model.
        OPENAI_AGENTS_DISABLE_TRACING: '1',
        LANGSMITH_TRACING: 'false',
        OPENAI_API_KEY: 'sk-test-not-used',
        CREWAI_TRACING_ENABLED: 'false',
        CREWAI_DISABLE_TELEMETRY: 'true',
        OTEL_SDK_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((ok, fail) => {
    child.on('error', fail);
    child.on('close', (code) => {
      let xml = '';
      try {
        xml = readFileSync(junit, 'utf8');
      } catch {
        // pytest did not get as far as writing its report: the output says why.
      }
      rmSync(dir, { recursive: true, force: true });
      ok({ code, output, cases: casesOf(xml) });
    });
  });
}

describe('the Python package against the real gate service', () => {
  it('passes its pytest suite: the client, the OpenAPI models, and every adapter with its real framework', async () => {
    // CrewAI runs in its own venv (below): its pins conflict with the other frameworks'.
    const { code, output, cases } = await runPytest(toolPath('python'), ['tests', '--ignore=tests/test_crewai.py']);
    expectAllPassed(code, output, cases);
    // Each module's cases ran (a module that failed to import would be one error, not its tests).
    const byModule = (m: string) => cases.filter((c) => c.classname.startsWith(`tests.${m}`)).length;
    expect(byModule('test_models_match_openapi')).toBeGreaterThanOrEqual(3);
    expect(byModule('test_client')).toBeGreaterThanOrEqual(9);
    expect(byModule('test_capability')).toBeGreaterThanOrEqual(8);
    for (const adapter of ['test_langchain', 'test_openai_agents', 'test_pydantic_ai']) {
      expect(byModule(adapter), `${adapter}\n${output.slice(-3000)}`).toBeGreaterThanOrEqual(12);
    }
  }, 600_000);

  it('passes the CrewAI tests in a venv of their own: a real Crew, a scripted OpenAI-compatible model', async () => {
    const { code, output, cases } = await runPytest(toolPath('pythonCrewai'), ['tests/test_crewai.py']);
    expectAllPassed(code, output, cases);
    expect(
      cases.filter((c) => c.classname.startsWith('tests.test_crewai')).length,
      output.slice(-3000),
    ).toBeGreaterThanOrEqual(9);
  }, 600_000);
});

function expectAllPassed(code: number | null, output: string, cases: Case[]): void {
  const failed = cases.filter((c) => c.failure !== null);
  expect(failed.map((c) => `${c.classname}::${c.name}\n${c.failure}`).join('\n\n'), output.slice(-6000)).toBe('');
  expect(cases.filter((c) => c.skipped).map((c) => c.name)).toEqual([]);
  expect(code, output.slice(-6000)).toBe(0);
}
