/**
 * Issue 28, "one policy in force, visibly", as a user meets it: the workflow workers publish the policy they judge
 * with (versions kept, a malformed publication refused; an `agent-judge worker` process publishes at start);
 * `agent-judge mcp --policy mine` whose policy differs (the issue's `files.roots: [/srv/ws]`) says so at start and on
 * every judged call, and says nothing more when it is the workers' own; `propose` with another AGENT_JUDGE_POLICY
 * warns on stderr and keeps stdout's JSON; proposals record the digest they were judged under. And the CLI's output
 * for people: `policy show|check` through the built CLI, and `status` on a real pseudo-terminal (`script`) printing
 * the short form.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { policyDigest } from '../../src/contracts/capability';
import type { PolicyPublication } from '../../src/contracts/policy-in-force';
import { publishPolicy, readPolicyInForce } from '../../src/client/policy-in-force';
import { loadPolicyLayers, type LoadedPolicy } from '../../src/policy/load';
import { announceWorkerPolicy } from '../../src/worker/policy-publication';
import { BIN, connectProxy, EVIDENCE, mcpSpec, startMcpEnv, type McpEnv } from '../helpers/mcp';
import { logRecordsOf, recordingLogger, silentLogger } from '../helpers/logger';
import { proposal, workerProcessCapability } from '../helpers/system';

let env: McpEnv;
let workers: LoadedPolicy;
let queue: string;
afterAll(async () => env?.sys.stop());

beforeAll(async () => {
  env = await startMcpEnv(mcpSpec({ holdFor: '1s' }));
  queue = env.sys.taskQueues.workflow;
  // What `agent-judge dev` / `worker` do at start: the workflow worker publishes the policy it judges with.
  workers = await loadPolicyLayers({ path: env.policyFile, baseDir: env.baseDir, env: {} });
  const line = await announceWorkerPolicy({
    client: env.sys.client,
    workflowTaskQueue: queue,
    loaded: workers,
    policy: env.sys.policy,
    roles: ['workflow', 'judge', 'executor'],
    logger: silentLogger,
  });
  expect(line).toMatch(new RegExp(`^version 1 on task queue ${queue} \\(policy_sha256 [0-9a-f]{12}\\.\\.\\.\\)$`));
}, 120_000);

/** The workers' policy file with one field changed: exactly one difference. */
function variant(name: string, change: (spec: Record<string, unknown>) => void): string {
  const doc = JSON.parse(readFileSync(env.policyFile, 'utf8')) as { spec: Record<string, unknown> };
  change(doc.spec);
  const file = join(env.baseDir, name);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

function cli(
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, '--address', inject('temporalAddress'), '--namespace', inject('temporalNamespace'), ...args],
      { cwd: env.baseDir, env: { ...process.env, AGENT_JUDGE_POLICY: '', ...extraEnv } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** What `probe` finds, once it finds something (not undefined). */
const until = async <T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    const found = probe();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen`);
};

describe('the published policy', () => {
  it('holds the digests the proposals record, and the document other processes compare theirs with', async () => {
    const record = await readPolicyInForce(env.sys.client, queue);
    expect(record?.current).toMatchObject({
      version: 1,
      policy_sha256: policyDigest(env.sys.policy),
      document_sha256: workers.own.document_sha256,
      source: env.policyFile,
      name: env.sys.policy.metadata.name,
    });
    expect(record?.current.document).toEqual(workers.own.document);
    expect(record?.versions.map((v) => v.version)).toEqual([1]);
    expect(await readPolicyInForce(env.sys.client, `${queue}-nobody`)).toBeNull();
  });

  it('a proposal records the digest of the policy it was judged under', async () => {
    const p = proposal('memory_write', { parameters: { content: 'digest check' } });
    const file = join(env.baseDir, 'memory.json');
    writeFileSync(file, JSON.stringify(p));
    const r = await cli(['propose', file, '--wait', '--task-queue', queue]);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { status: string; policy_sha256: string };
    expect(out.status).toBe('executed');
    expect(out.policy_sha256).toBe(policyDigest(env.sys.policy));
  });
});

describe('a process whose policy is not the workers', () => {
  it('agent-judge mcp --policy mine (files.roots: [/srv/ws]): says so at start and on every judged call', async () => {
    const mine = variant('mine.json', (spec) => (spec.files = { roots: ['/srv/ws'] }));
    const proxy = await connectProxy({ ...env, policyFile: mine });
    const warnings = () => logRecordsOf(proxy.stderr()).filter((r) => r.level === 'warn');
    try {
      const start = await until('the start warning', () => warnings()[0]);
      expect(start).toMatchObject({ component: 'mcp', task_queue: queue, state: 'differs', version: 1 });
      expect(start.msg).toMatch(
        new RegExp(`^WARNING: the workflow workers on ${queue} judge with another policy than ${mine}: `),
      );
      expect(start.msg).toContain(`Differing: spec.files.roots (yours ["/srv/ws"], theirs ["${env.workspace}"]). `);
      expect(start.msg).toContain(`version 1`);
      for (const n of [1, 2]) {
        const result = (await proxy.agent.callTool({
          name: 'write_file',
          arguments: {
            path: join(env.workspace, `w${n}.txt`),
            content: 'x',
            _agent_judge: { cited_evidence: EVIDENCE },
          },
        })) as { isError?: boolean };
        expect(result.isError).toBe(true); // held, then pending: a person decides writes
      }
      const perCall = warnings().filter((r) => r.msg.startsWith('WARNING: tools/call write_file is judged under'));
      expect(perCall).toHaveLength(2);
      expect(perCall[0]!.msg).toContain(`not ${mine}; differing: spec.files.roots`);
      expect(perCall[0]).toMatchObject({ task_queue: queue, differences: ['spec.files.roots'] });
      // Reads pass through on the proxy's own mapping: nothing is judged, nothing to repeat.
      await proxy.agent.callTool({ name: 'list_allowed_directories', arguments: {} });
      expect(warnings().filter((r) => r.msg.startsWith('WARNING: tools/call'))).toHaveLength(2);
    } finally {
      await proxy.agent.close();
    }
  });

  it("agent-judge mcp with the workers' own policy file: one line saying so, nothing on calls", async () => {
    const proxy = await connectProxy(env);
    try {
      const start = await until('the start line', () =>
        logRecordsOf(proxy.stderr()).find((r) => r.msg.includes('judge with')),
      );
      expect(start).toMatchObject({ level: 'info', component: 'mcp', task_queue: queue, state: 'same' });
      expect(start.msg).toContain(`policy ${env.policyFile} is the one the workflow workers on ${queue} judge with: `);
      await proxy.agent.callTool({
        name: 'write_file',
        arguments: { path: join(env.workspace, 'same.txt'), content: 'x', _agent_judge: { cited_evidence: EVIDENCE } },
      });
      expect(logRecordsOf(proxy.stderr()).filter((r) => r.level === 'warn')).toEqual([]);
      expect(proxy.stderr()).not.toContain('WARNING');
    } finally {
      await proxy.agent.close();
    }
  });

  it('propose with AGENT_JUDGE_POLICY naming another policy: one warning on stderr, the JSON on stdout', async () => {
    const other = variant('other.json', (spec) => (spec.thresholds = { clarify: 0.7, human: 0.3 }));
    const file = join(env.baseDir, 'memory-2.json');
    writeFileSync(file, JSON.stringify(proposal('memory_write', { parameters: { content: 'env policy' } })));
    const r = await cli(['propose', file, '--wait', '--task-queue', queue], { AGENT_JUDGE_POLICY: other });
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^agent-judge: WARNING: the workflow workers on \S+ judge with another policy than /);
    expect(r.stderr).toContain('Differing: spec.thresholds.clarify (yours 0.7, theirs 0.6)');
    expect((JSON.parse(r.stdout) as { status: string }).status).toBe('executed');
  });

  it('a judge-only worker with another policy warns; another workflow worker publishing is a new version', async () => {
    const other = await loadPolicyLayers({
      path: variant('judge.json', (spec) => ((spec.judge as Record<string, unknown>).withoutModel = 'approve')),
      baseDir: env.baseDir,
      env: {},
    });
    const logger = recordingLogger();
    const judgeLine = await announceWorkerPolicy({
      client: env.sys.client,
      workflowTaskQueue: queue,
      loaded: other,
      policy: other.policy,
      roles: ['judge'],
      logger,
    });
    expect(judgeLine).toContain('WARNING: the workflow workers on');
    expect(judgeLine).toContain('Differing: spec.judge.withoutModel (yours "approve", theirs "escalate")');
    expect(logger.records).toEqual([
      expect.objectContaining({ level: 'warn', msg: judgeLine, task_queue: queue, state: 'differs' }),
    ]);

    // A malformed publication is refused by the Update's validator and changes nothing.
    const bad: PolicyPublication = { ...publicationOf(other), policy_sha256: 'not hex' };
    const refused = (await publishPolicy(env.sys.client, queue, bad).catch((e: unknown) => e)) as { cause?: Error };
    expect(refused.cause?.message).toMatch(/publishPolicy: policy_sha256: expected 64 lowercase hex digits/);
    expect((await readPolicyInForce(env.sys.client, queue))?.current.version).toBe(1);

    // Another workflow worker with another policy: version 2, naming version 1 as the one it replaces; back: 3.
    const two = await publishPolicy(env.sys.client, queue, publicationOf(other));
    expect(two).toMatchObject({ version: 2, changed: true, previous: { version: 1, source: env.policyFile } });
    const three = await publishPolicy(env.sys.client, queue, {
      ...publicationOf(workers),
      policy_sha256: policyDigest(env.sys.policy),
    });
    expect(three).toMatchObject({ version: 3, changed: true, previous: { version: 2 } });
    const again = await publishPolicy(env.sys.client, queue, {
      ...publicationOf(workers),
      policy_sha256: policyDigest(env.sys.policy),
    });
    expect(again).toEqual({ version: 3, changed: false, previous: null });
    const record = await readPolicyInForce(env.sys.client, queue);
    expect(record?.versions.map((v) => v.version)).toEqual([1, 2, 3]);
  });
});

describe('agent-judge worker', () => {
  /** Runs `agent-judge worker` until its publication is logged; returns its stderr once it has stopped. */
  async function workerUntilPublished(
    prefix: string,
    capability: { policyFile: string; env: Record<string, string> },
    event: 'policy.published' | 'policy.changed',
    check: (stderr: string) => Promise<void> = () => Promise.resolve(),
  ): Promise<string> {
    const child = spawn(
      process.execPath,
      [BIN, 'worker', '--task-queue-prefix', prefix, '--policy', capability.policyFile, '--log-format', 'json'],
      {
        cwd: env.baseDir,
        env: {
          ...process.env,
          ...capability.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await until('the publication log line', () => logRecordsOf(stderr).find((r) => r.event === event), 90_000);
      await check(stderr);
    } finally {
      const exited = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await exited;
    }
    return stderr;
  }

  it('a workflow worker process publishes the policy it judges with when it starts', async () => {
    const prefix = `test-${randomUUID()}`;
    const capability = workerProcessCapability(env.baseDir);
    await workerUntilPublished(prefix, capability, 'policy.published', async (stderr) => {
      const record = await readPolicyInForce(env.sys.client, prefix);
      expect(record?.current).toMatchObject({ version: 1, source: capability.policyFile, name: 'default' });
      expect(record?.current.publisher).toMatch(/^\d+@\S+ \(workflow,judge,executor,archive\)$/);
      expect(stderr).toContain(
        `version 1 on task queue ${prefix} (policy_sha256 ${record!.current.policy_sha256.slice(0, 12)}`,
      );
    });
  }, 120_000);

  it('a restart warns about nothing: the same policy, or a changed one replacing a stopped worker', async () => {
    const prefix = `test-${randomUUID()}`;
    const capability = workerProcessCapability(env.baseDir);
    // About the policy (a plain worker on the test server also warns about the namespace's retention).
    const warnings = (stderr: string) =>
      logRecordsOf(stderr).filter((r) => (r.level === 'warn' || r.level === 'error') && /polic/.test(r.msg));
    expect(warnings(await workerUntilPublished(prefix, capability, 'policy.published'))).toEqual([]);
    // The README's restart: the same policy again, then with an approver added (AGENT_JUDGE_APPROVERS=scott npm start).
    const again = await workerUntilPublished(prefix, capability, 'policy.published');
    expect(warnings(again)).toEqual([]);
    expect(logRecordsOf(again).find((r) => r.event === 'policy.published')).toMatchObject({ policy_version: 1 });
    const approvers = await workerUntilPublished(
      prefix,
      { ...capability, env: { ...capability.env, AGENT_JUDGE_APPROVERS: 'scott' } },
      'policy.changed',
    );
    expect(warnings(approvers)).toEqual([]);
    expect(logRecordsOf(approvers).find((r) => r.event === 'policy.changed')?.msg).toMatch(
      new RegExp(`^version 2 on task queue ${prefix} .*; it replaces version 1 .*, whose workers have stopped$`),
    );
  }, 300_000);

  it('a changed policy while the worker that published the old one still runs is a warning', async () => {
    const prefix = `test-${randomUUID()}`;
    const capability = workerProcessCapability(env.baseDir);
    await workerUntilPublished(prefix, capability, 'policy.published', async () => {
      const second = await workerUntilPublished(
        prefix,
        { ...capability, env: { ...capability.env, AGENT_JUDGE_APPROVERS: 'scott' } },
        'policy.changed',
      );
      const changed = logRecordsOf(second).find((r) => r.event === 'policy.changed');
      expect(changed?.level).toBe('warn');
      expect(changed?.msg).toMatch(/the two judge alike proposals differently$/);
    });
  }, 300_000);
});

function publicationOf(loaded: LoadedPolicy): PolicyPublication {
  return {
    policy_sha256: policyDigest(loaded.policy),
    document_sha256: loaded.own.document_sha256,
    document: loaded.own.document,
    name: loaded.policy.metadata.name,
    source: loaded.path,
    publisher: 'test',
    published_at: new Date().toISOString(),
  };
}

/**
 * Runs a command on a real pseudo-terminal (util-linux `script`), asynchronously: the workers answering its query
 * run in this very process.
 */
function onTerminal(command: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile('script', ['-qec', command, '/dev/null'], { cwd: env.baseDir }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

describe('output for people', () => {
  it('status on a terminal prints the short form (a real pseudo-terminal, through script)', async () => {
    const p = proposal('memory_write', { parameters: { content: 'on a terminal' } });
    const file = join(env.baseDir, 'memory-tty.json');
    writeFileSync(file, JSON.stringify(p));
    expect((await cli(['propose', file, '--wait', '--task-queue', queue])).code).toBe(0);
    const command = [
      process.execPath,
      BIN,
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
      'status',
      String(p.proposal_id),
    ].join(' ');
    const tty = await onTerminal(command);
    expect(tty.code, tty.stdout).toBe(0);
    const lines = tty.stdout.replace(/\r/g, '').trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^proposal  ${String(p.proposal_id)} \\(workflow proposal-[0-9a-f]{32}\\)$`));
    expect(lines).toContain('status    executed');
    expect(lines).toContain('verdict   APPROVE by policy (tier no-judge, confidence 1)');
    expect(lines).toContain('next      done: agent-judge performed the action');
    expect(lines.length).toBeLessThan(12);
    // The same command with --json on the terminal, and without a terminal: the JSON.
    const json = await onTerminal(`${command} --json`);
    expect((JSON.parse(json.stdout) as { status: string }).status).toBe('executed');
    const piped = await cli(['status', String(p.proposal_id)]);
    expect((JSON.parse(piped.stdout) as { status: string }).status).toBe('executed');
  });

  it('policy check and show through the built CLI; a bad file exits 2 naming file, line, field and rule', async () => {
    const mine = join(env.baseDir, 'small.yaml');
    writeFileSync(
      mine,
      'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nmetadata:\n  name: small\n' +
        'spec:\n  files:\n    roots: [/srv/ws]\n',
    );
    const check = await cli(['policy', 'check', mine]);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('small.yaml: valid (CompliancePolicy "small"), laid over the default policy;');
    expect(check.stdout).toMatch(/spec\.files\.roots +\[".agent-judge\/workspace"\] -> \["\/srv\/ws"\]/);
    const show = await cli(['policy', 'show', '--policy', mine]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^ {4}roots: \[ \/srv\/ws \] # small\.yaml:7$/m);
    expect(show.stdout).toMatch(/^ {4}clarify: 0\.6 # default$/m);

    const bad = join(env.baseDir, 'bad.yaml');
    writeFileSync(
      bad,
      'apiVersion: agent-judge.dev/v1alpha1\nkind: CompliancePolicy\nspec:\n  clarify:\n    maxRounds: 99\n',
    );
    const refused = await cli(['policy', 'check', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `agent-judge: policy ${bad}:5: spec.clarify.maxRounds: Too big: expected number to be <=10\n`,
    );
  });
});
