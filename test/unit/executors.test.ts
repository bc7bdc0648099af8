import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutorActivities } from '../../src/activities/execute';
import { actionDigest, executorAudience, policyDigest } from '../../src/contracts/capability';
import {
  generateCapabilityKey,
  issueCapability,
  loadCapabilityKey,
  withCapabilityIssuer,
  type CapabilityKey,
} from '../../src/identity/capability-key';
import type { ExecuteInput } from '../../src/activities/types';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import type { ExecutionResult } from '../../src/contracts/status';
import { FailureType, UNCERTAIN_EXPLANATION } from '../../src/contracts/lifecycle';
import { BadInputError } from '../../src/contracts/errors';
import type { Verdict } from '../../src/contracts/verdict';
import { judgeByRules } from '../../src/judge/rules';
import { builtinExecutors, ExecutionLedger } from '../../src/executors';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
let outside: string;
let policy: CompliancePolicy;
let root: string;
let capabilityKey: CapabilityKey;

/** Every reservation an executor confirmed before acting (the reservation itself is covered against the server). */
const reservations: Array<{ proposalId: string; workflowId: string }> = [];

beforeAll(async () => {
  const file = generateCapabilityKey('executors');
  capabilityKey = await loadCapabilityKey(`${file.kid}:${file.private_key}`);
  baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-exec-'));
  outside = mkdtempSync(join(tmpdir(), 'agent-judge-exec-outside-'));
  policy = testPolicy(baseDir);
  root = policy.spec.files.roots[0]!;
  mkdirSync(root, { recursive: true });
});
afterAll(() => {
  rmSync(baseDir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const stateDir = () => join(baseDir, '.agent-judge');

function p(type: string, overrides: Record<string, unknown> = {}): Proposal {
  return parseProposal(proposal(type, overrides));
}

function approve(pr: Proposal, extra: Partial<Verdict> = {}): Verdict {
  return {
    proposal_id: pr.proposal_id,
    verdict: 'APPROVE',
    reason: 'no rule objects',
    constraints: { require_human_review: false },
    escalation: null,
    confidence: 1,
    decided_by: 'rules',
    tier: 'full-judge-review',
    ...extra,
  };
}

function input(
  pr: Proposal,
  options: {
    verdict?: Verdict;
    shadow?: boolean;
    policy?: CompliancePolicy;
    workflowId?: string;
    /** The token's action, when it is to be another than `pr`'s. */
    tokenFor?: Proposal;
  } = {},
): ExecuteInput {
  const workflowId = options.workflowId ?? `proposal-${randomUUID().replace(/-/g, '')}`;
  // What the workflow does: the policy lists the worker's key, and the action comes with its token.
  const inForce = withCapabilityIssuer(options.policy ?? policy, capabilityKey);
  const bound = options.tokenFor ?? pr;
  const { token } = issueCapability(
    {
      workflow_id: workflowId,
      sub: pr.agent_id,
      aud: executorAudience(bound.action_type),
      action_sha256: actionDigest(bound),
      policy_sha256: policyDigest(inForce),
      ttl_ms: 600_000,
    },
    capabilityKey,
  );
  return {
    workflow_id: workflowId,
    proposal: pr,
    verdict: options.verdict ?? approve(pr),
    shadow: options.shadow ?? false,
    policy: inForce,
    capability: token,
  };
}

async function execute(
  i: ExecuteInput,
  deps: { stateDir?: string; attempt?: number; heartbeatDetails?: unknown } = {},
): Promise<ExecutionResult> {
  const activities = createExecutorActivities({
    baseDir,
    stateDir: deps.stateDir ?? stateDir(),
    confirmReservation: (proposalId, workflowId) => {
      reservations.push({ proposalId, workflowId });
      return Promise.resolve();
    },
  });
  // Scheduled by the token's own proposal run, as Temporal tells the activity (the workflow redeemed it then).
  const info = {
    attempt: deps.attempt ?? 1,
    heartbeatDetails: deps.heartbeatDetails,
    workflowType: 'proposalWorkflow',
    workflowExecution: { workflowId: i.workflow_id, runId: 'r' },
  };
  return new MockActivityEnvironment(info).run((input: ExecuteInput) => activities.execute(input), i);
}

/** The test policy with `mkdir` allowlisted: an exec whose effect (a directory) is visible on disk. */
function mkdirPolicy(): CompliancePolicy {
  return testPolicy(baseDir, {
    exec: { ...policy.spec.exec, allowlist: [...policy.spec.exec.allowlist, { command: 'mkdir' }] },
  });
}

const fileWrite = (name: string, content: string, mode?: 'create' | 'overwrite' | 'append') =>
  p('file_write', {
    target: { path: `.agent-judge/workspace/${name}` },
    parameters: { content, ...(mode ? { mode } : {}) },
  });

describe('memory_write', () => {
  it('appends one JSON line to the store, naming the agent, proposal and workflow', async () => {
    const store = `engineering.mem-${randomUUID().slice(0, 8)}`;
    const pr = p('memory_write', { target: { store }, parameters: { content: 'the build is green' } });
    const i = input(pr);
    const result = await execute(i);
    expect(result).toMatchObject({ status: 'succeeded', executor: 'memory', shadow: false });
    const file = join(policy.spec.memory.dir, `${store}.jsonl`);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      agent_id: '@engineering',
      proposal_id: pr.proposal_id,
      workflow_id: i.workflow_id,
      content: 'the build is green',
    });
    expect(result.output).toEqual({ store, file, bytes: 18 });
  });
});

describe('file_write', () => {
  it('creates a new file, with its directories, inside the root', async () => {
    const name = `nested/${randomUUID()}/new.txt`;
    const result = await execute(input(fileWrite(name, 'hello\n')));
    expect(result).toMatchObject({ status: 'succeeded', executor: 'file' });
    expect(readFileSync(join(root, name), 'utf8')).toBe('hello\n');
    expect(result.output).toEqual({ path: join(root, name), bytes: 6, mode: 'create' });
  });

  it('refuses to replace an existing file in create mode, leaving it alone', async () => {
    const name = `exists-${randomUUID()}.txt`;
    writeFileSync(join(root, name), 'original');
    const result = await execute(input(fileWrite(name, 'clobbered', 'create')));
    expect(result.status).toBe('failed');
    expect(result.error).toBe(
      `.agent-judge/workspace/${name} already exists (mode create); use mode overwrite or append`,
    );
    expect(readFileSync(join(root, name), 'utf8')).toBe('original');
  });

  it('overwrites and appends', async () => {
    const name = `modes-${randomUUID()}.txt`;
    writeFileSync(join(root, name), 'old content that is longer');
    expect((await execute(input(fileWrite(name, 'new\n', 'overwrite')))).status).toBe('succeeded');
    expect(readFileSync(join(root, name), 'utf8')).toBe('new\n');
    expect((await execute(input(fileWrite(name, 'more\n', 'append')))).status).toBe('succeeded');
    expect(readFileSync(join(root, name), 'utf8')).toBe('new\nmore\n');
  });

  it('refuses a path outside the roots even with an APPROVE verdict', async () => {
    const target = join(outside, `forged-${randomUUID()}.txt`);
    const result = await execute(input(p('file_write', { target: { path: target }, parameters: { content: 'x' } })));
    expect(result.status).toBe('refused');
    expect(result.error).toMatch(/^files\.roots: /);
    expect(existsSync(target)).toBe(false);
  });

  it('refuses when the parent directory is swapped for a symlink to outside after the judgement', async () => {
    const dir = `swap-${randomUUID()}`;
    mkdirSync(join(root, dir));
    const pr = fileWrite(`${dir}/payload.txt`, 'owned');
    expect(judgeByRules(pr, { policy, baseDir })).toMatchObject({ verdict: 'APPROVE' });
    // After the judge looked: the directory becomes a symlink to outside the root.
    renameSync(join(root, dir), join(root, `${dir}-old`));
    symlinkSync(outside, join(root, dir));
    const result = await execute(input(pr));
    expect(result.status).toBe('refused');
    expect(existsSync(join(outside, 'payload.txt'))).toBe(false);
  });

  it('refuses a final-component symlink to outside, existing or dangling', async () => {
    const existing = join(outside, `existing-${randomUUID()}.txt`);
    writeFileSync(existing, 'outside');
    const name = `link-${randomUUID()}.txt`;
    symlinkSync(existing, join(root, name));
    const result = await execute(input(fileWrite(name, 'through the link', 'overwrite')));
    expect(result.status).toBe('refused');
    expect(readFileSync(existing, 'utf8')).toBe('outside');

    const dangling = join(outside, `dangling-${randomUUID()}.txt`);
    const name2 = `dlink-${randomUUID()}.txt`;
    symlinkSync(dangling, join(root, name2));
    const result2 = await execute(input(fileWrite(name2, 'through the link', 'append')));
    expect(result2.status).toBe('refused');
    expect(existsSync(dangling)).toBe(false);
  });

  it("refuses a path outside the verdict's files_only constraint", async () => {
    const name = `constrained-${randomUUID()}.txt`;
    const pr = fileWrite(name, 'x');
    const verdict = approve(pr, {
      constraints: { require_human_review: false, files_only: ['.agent-judge/workspace/only-here/'] },
    });
    const result = await execute(input(pr, { verdict }));
    expect(result.status).toBe('refused');
    expect(result.error).toContain("outside the verdict's files_only constraint");
    expect(existsSync(join(root, name))).toBe(false);
  });
});

describe('at most once', () => {
  it('the same input executed twice appends to the file once and returns the recorded result', async () => {
    const name = `once-${randomUUID()}.txt`;
    const i = input(fileWrite(name, 'line\n', 'append'));
    const first = await execute(i);
    const second = await execute(i);
    expect(first.status).toBe('succeeded');
    expect(second).toEqual(first);
    expect(readFileSync(join(root, name), 'utf8')).toBe('line\n');
  });

  it('the same memory_write executed twice writes one line', async () => {
    const store = `engineering.once-${randomUUID().slice(0, 8)}`;
    const i = input(p('memory_write', { target: { store }, parameters: { content: 'only once' } }));
    const first = await execute(i);
    const second = await execute(i);
    expect(second).toEqual(first);
    expect(
      readFileSync(join(policy.spec.memory.dir, `${store}.jsonl`), 'utf8')
        .trimEnd()
        .split('\n'),
    ).toHaveLength(1);
  });

  it('another workflow with the same action does act (the key binds the workflow)', async () => {
    const store = `engineering.two-${randomUUID().slice(0, 8)}`;
    const pr = p('memory_write', { target: { store }, parameters: { content: 'twice, two workflows' } });
    await execute(input(pr));
    await execute(input(pr));
    expect(
      readFileSync(join(policy.spec.memory.dir, `${store}.jsonl`), 'utf8')
        .trimEnd()
        .split('\n'),
    ).toHaveLength(2);
  });

  it("a file write whose ledger entry a dead attempt left 'started' is completed on retry, once", async () => {
    const name = `started-${randomUUID()}.txt`;
    const i = input(fileWrite(name, 'written once'));
    const ledger = new ExecutionLedger(join(stateDir(), 'executions'));
    expect(await ledger.begin(ExecutionLedger.keyFor(i.workflow_id, i.proposal), new Date())).toEqual({
      begun: true,
    });
    const result = await execute(i);
    expect(result).toMatchObject({ status: 'succeeded', executor: 'file' });
    expect(readFileSync(join(root, name), 'utf8')).toBe('written once');
  });

  it('a file write the dead attempt had finished is confirmed on retry, not written again', async () => {
    const name = `confirmed-${randomUUID()}.txt`;
    const i = input(fileWrite(name, 'line\n', 'append'));
    writeFileSync(join(root, name), 'before\nline\n');
    // Attempt 2, as Temporal runs it after the first attempt's executor died (any host).
    const result = await execute(i, { attempt: 2 });
    expect(result).toMatchObject({ status: 'succeeded', executor: 'file' });
    expect(result.output).toMatchObject({ confirmed: true });
    expect(readFileSync(join(root, name), 'utf8')).toBe('before\nline\n');
  });

  it('a memory write is completed on retry when missing, confirmed by its workflow id when there', async () => {
    const store = `engineering.retry-${randomUUID().slice(0, 8)}`;
    const file = () => join(policy.spec.memory.dir, `${store}.jsonl`);
    const i = input(p('memory_write', { target: { store }, parameters: { content: 'once only' } }));
    const first = await execute(i, { attempt: 2 });
    expect(first).toMatchObject({ status: 'succeeded' });
    expect(first.output).not.toMatchObject({ confirmed: true });
    const again = await execute(i, { attempt: 3, stateDir: join(baseDir, `other-host-${randomUUID()}`) });
    expect(again.output).toMatchObject({ confirmed: true });
    expect(readFileSync(file(), 'utf8').trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('ledger', () => {
  it('a ledger entry left empty by a crash counts as started: an exec is uncertain and does not run', async () => {
    const marker = `empty-entry-${randomUUID()}`;
    const i = input(p('exec', { parameters: { command: ['mkdir', marker] } }), { policy: mkdirPolicy() });
    const dirPath = join(stateDir(), 'executions');
    mkdirSync(dirPath, { recursive: true });
    writeFileSync(join(dirPath, `${ExecutionLedger.keyFor(i.workflow_id, i.proposal)}.json`), '');
    const result = await execute(i);
    expect(result.status).toBe('uncertain');
    expect(result.error).toContain('an earlier attempt on this host started this action');
    expect(existsSync(join(root, marker))).toBe(false);
  });
});

describe('at most once across executor hosts', () => {
  const mkdirExec = () => {
    const marker = `marker-${randomUUID()}`;
    return { marker, i: input(p('exec', { parameters: { command: ['mkdir', marker] } }), { policy: mkdirPolicy() }) };
  };

  it('a retry of an exec with no heartbeat from the earlier attempt is uncertain and never runs', async () => {
    const { marker, i } = mkdirExec();
    const result = await execute(i, { attempt: 2 });
    expect(result.status).toBe('uncertain');
    expect(result.error).toContain('attempt 1 may have started this action and never reported back');
    expect(result.error).toContain(UNCERTAIN_EXPLANATION);
    expect(existsSync(join(root, marker))).toBe(false);
  });

  it('a retry on another host whose earlier attempt had started the process names its host and pid', async () => {
    const { marker, i } = mkdirExec();
    const result = await execute(i, {
      attempt: 2,
      heartbeatDetails: { phase: 'started', host: 'host-a:/var/lib/agent-judge/executions', pid: 4242 },
    });
    expect(result.status).toBe('uncertain');
    expect(result.error).toContain(
      'attempt 1 on host-a:/var/lib/agent-judge/executions started this action (pid 4242)',
    );
    expect(existsSync(join(root, marker))).toBe(false);
  });

  it('a same-host retry that finds no ledger entry knows the earlier attempt never started: it runs', async () => {
    const { marker, i } = mkdirExec();
    const host = `${hostname()}:${resolve(join(stateDir(), 'executions'))}`;
    const result = await execute(i, { attempt: 2, heartbeatDetails: { phase: 'not_started', host } });
    expect(result.status).toBe('succeeded');
    expect(existsSync(join(root, marker))).toBe(true);
  });

  it('a retry on the same host whose heartbeat says started but whose ledger lost the entry is uncertain', async () => {
    const { marker, i } = mkdirExec();
    const host = `${hostname()}:${resolve(join(stateDir(), 'executions'))}`;
    const result = await execute(i, { attempt: 2, heartbeatDetails: { phase: 'started', host, pid: 7 } });
    expect(result.status).toBe('uncertain');
    expect(existsSync(join(root, marker))).toBe(false);
  });

  it('a retry whose earlier attempt finished (its last heartbeat) returns that result and does not run', async () => {
    const { marker, i } = mkdirExec();
    const earlier: ExecutionResult = {
      status: 'succeeded',
      executor: 'exec',
      shadow: false,
      started_at: new Date().toISOString(),
      finished_at: new Date().toISOString(),
      output: { exit_code: 0 },
    };
    const result = await execute(i, {
      attempt: 2,
      heartbeatDetails: { phase: 'finished', host: 'host-a:/x', result: earlier },
    });
    expect(result).toEqual(earlier);
    expect(existsSync(join(root, marker))).toBe(false);
  });
});

describe('exec', () => {
  const execOf = (command: string[], extra: Record<string, unknown> = {}) =>
    p('exec', { parameters: { command, ...extra } });

  it('captures stdout and the exit code, in the default cwd', async () => {
    const result = await execute(input(execOf(['echo', 'hello', 'world'])));
    expect(result).toMatchObject({ status: 'succeeded', executor: 'exec' });
    expect(result.output).toMatchObject({
      exit_code: 0,
      stdout: 'hello world\n',
      stderr: '',
      truncated: false,
      timed_out: false,
      cwd: root,
    });
  });

  it('passes shell metacharacters as plain arguments (no shell)', async () => {
    const marker = join(outside, `marker-${randomUUID()}`);
    const result = await execute(input(execOf(['echo', `x; touch ${marker}`, '$(id)'])));
    expect((result.output as { stdout: string }).stdout).toBe(`x; touch ${marker} $(id)\n`);
    expect(existsSync(marker)).toBe(false);
  });

  it('reports a non-zero exit as failed, with stderr', async () => {
    const result = await execute(input(execOf(['ls', `does-not-exist-${randomUUID()}`])));
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/^exit code [1-9]/);
    expect((result.output as { stderr: string }).stderr).toContain('does-not-exist');
  });

  it('honours timeout_ms and kills the command', async () => {
    const sleepPolicy = testPolicy(baseDir, { exec: { allowlist: [{ command: 'sleep' }] } });
    const started = Date.now();
    const result = await execute(input(execOf(['sleep', '30'], { timeout_ms: 300 }), { policy: sleepPolicy }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.status).toBe('failed');
    expect(result.error).toBe('timed out after 300 ms');
    expect(result.output).toMatchObject({ timed_out: true, exit_code: null, signal: 'SIGKILL' });
  });

  it('git diff, log and status read a named repository; attributes alone run nothing', async () => {
    const repo = join(root, `repo-${randomUUID()}`);
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...args], { cwd: repo });
    git('init', '-q');
    writeFileSync(join(repo, 'f.txt'), 'a\n');
    git('add', 'f.txt');
    git('commit', '-qm', 'init');
    writeFileSync(join(repo, 'f.txt'), 'a\nb\n');
    // What an actor can write in the work tree: attributes naming drivers, which no config defines.
    writeFileSync(join(repo, '.gitattributes'), '* diff=evil filter=evil\n');
    const named = testPolicy(baseDir, { exec: { git: { repositories: [{ name: 'repo', path: repo }] } } });

    const diff = await execute(input(execOf(['git', 'diff'], { cwd: repo }), { policy: named }));
    expect(diff.status, diff.error).toBe('succeeded');
    expect((diff.output as { stdout: string }).stdout).toContain('+b');
    const log = await execute(input(execOf(['git', 'log', '-p', '--oneline'], { cwd: repo }), { policy: named }));
    expect(log.status, log.error).toBe('succeeded');
    expect((log.output as { stdout: string }).stdout).toContain('init');
    const status = await execute(input(execOf(['git', 'status', '--short'], { cwd: repo }), { policy: named }));
    expect((status.output as { stdout: string }).stdout).toContain('M f.txt');
  });

  it('refuses git in a named repository whose config defines a program-running driver', async () => {
    const repo = join(root, `repo-${randomUUID()}`);
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo });
    git('init', '-q');
    writeFileSync(join(repo, 'f.txt'), 'a\n');
    const marker = join(outside, `pwned-${randomUUID()}`);
    writeFileSync(join(repo, '.gitattributes'), '* diff=evil\n');
    git('config', 'diff.evil.textconv', `touch ${marker}; cat`);
    git('config', 'diff.evil.command', `touch ${marker}`);
    const named = testPolicy(baseDir, { exec: { git: { repositories: [{ name: 'repo', path: repo }] } } });

    const diff = await execute(input(execOf(['git', 'diff'], { cwd: repo }), { policy: named }));
    expect(diff.status).toBe('refused');
    expect(diff.error).toBe(
      `exec.git-config: repository repo (${repo}) sets diff.evil.textconv, diff.evil.command in its own config, ` +
        'which can make git run a program; no git command runs there (docs/execution.md#git)',
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('truncates captured output at maxOutputBytes', async () => {
    const small = testPolicy(baseDir, { exec: { maxOutputBytes: 16 } });
    const result = await execute(input(execOf(['echo', 'x'.repeat(1000)]), { policy: small }));
    expect(result.status).toBe('succeeded');
    const out = result.output as { stdout: string; truncated: boolean };
    expect(out.truncated).toBe(true);
    expect(out.stdout).toBe('x'.repeat(16));
  });

  it('refuses argv that is not allowlisted even when the verdict says APPROVE', async () => {
    const marker = join(root, `rm-target-${randomUUID()}`);
    writeFileSync(marker, 'keep me');
    const result = await execute(input(execOf(['rm', marker])));
    expect(result.status).toBe('refused');
    expect(result.error).toMatch(/^exec\.allowlist: command "rm" is not on the exec allowlist/);
    expect(existsSync(marker)).toBe(true);
  });

  it('refuses a cwd outside the allowed directories', async () => {
    const result = await execute(input(execOf(['ls'], { cwd: outside })));
    expect(result.status).toBe('refused');
    expect(result.error).toMatch(/^exec\.cwd: /);
  });
});

describe('verdict checks', () => {
  it.each(['REJECT', 'CLARIFY'] as const)('a %s verdict is refused and nothing happens', async (kind) => {
    const name = `not-approved-${randomUUID()}.txt`;
    const pr = fileWrite(name, 'x');
    const result = await execute(input(pr, { verdict: approve(pr, { verdict: kind }) }));
    expect(result.status).toBe('refused');
    expect(result.error).toBe(`verdict is ${kind}, not APPROVE`);
    expect(existsSync(join(root, name))).toBe(false);
  });

  it('in shadow mode a non-APPROVE verdict still executes, marked shadow', async () => {
    const name = `shadow-${randomUUID()}.txt`;
    const pr = fileWrite(name, 'shadow');
    const result = await execute(input(pr, { verdict: approve(pr, { verdict: 'REJECT' }), shadow: true }));
    expect(result).toMatchObject({ status: 'succeeded', shadow: true });
    expect(readFileSync(join(root, name), 'utf8')).toBe('shadow');
  });

  it('a verdict for another proposal is refused', async () => {
    const name = `other-${randomUUID()}.txt`;
    const pr = fileWrite(name, 'x');
    const result = await execute(input(pr, { verdict: approve(pr, { proposal_id: 'someone-else' }) }));
    expect(result.status).toBe('refused');
    expect(result.error).toBe('verdict belongs to another proposal');
    expect(existsSync(join(root, name))).toBe(false);
  });

  it('an executor handed a proposal of another action type refuses instead of reading its fields', async () => {
    const memory = p('memory_write');
    const run = builtinExecutors().file_write!.run({
      workflowId: 'w',
      proposal: memory,
      verdict: approve(memory),
      policy,
      idempotencyKey: 'k',
      baseDir,
      signal: new AbortController().signal,
    });
    await expect(run).rejects.toThrow('the file_write executor was given a memory_write proposal');
  });

  it('an action type with no executor returns executor none (the caller acts)', async () => {
    const result = await execute(input(p('issue_comment')));
    expect(result).toMatchObject({ status: 'succeeded', executor: 'none', shadow: false });
    expect(result.output).toBeUndefined();
  });
});

describe('webhook routes', () => {
  let server: Server;
  let url: string;
  let status = 200;
  const received: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ accepted: status < 300 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/agent-judge`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the approved proposal and verdict with an idempotency key', async () => {
    status = 200;
    received.length = 0;
    const hooked = testPolicy(baseDir, { webhook: { routes: { web_publish: url } } });
    const pr = p('web_publish');
    const i = input(pr, { policy: hooked });
    const result = await execute(i);
    expect(result).toMatchObject({
      status: 'succeeded',
      executor: 'webhook',
      output: { status: 200, body: { accepted: true } },
    });
    expect(received).toHaveLength(1);
    const [req] = received;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/hooks/agent-judge');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['idempotency-key']).toBe(ExecutionLedger.keyFor(i.workflow_id, pr));
    const body = JSON.parse(req!.body) as { workflow_id: string; proposal: Proposal; verdict: Verdict };
    expect(body.workflow_id).toBe(i.workflow_id);
    expect(body.proposal).toEqual(pr);
    expect(body.verdict.verdict).toBe('APPROVE');
    // The receiver gets the action's (redeemed) capability token.
    expect(req?.headers['agent-judge-capability']).toBe(i.capability);
  });

  it('a non-2xx answer is a failed execution, delivered once', async () => {
    status = 503;
    received.length = 0;
    const hooked = testPolicy(baseDir, { webhook: { routes: { web_publish: url } } });
    const i = input(p('web_publish'), { policy: hooked });
    const result = await execute(i);
    expect(result).toMatchObject({
      status: 'failed',
      executor: 'webhook',
      error: 'webhook answered HTTP 503',
      output: { status: 503 },
    });
    // A retry of the same activity returns the recorded failure without posting again.
    expect(await execute(i)).toEqual(result);
    expect(received).toHaveLength(1);
  });

  it('an unrouted action type has no executor', async () => {
    const result = await execute(input(p('web_publish')));
    expect(result.executor).toBe('none');
  });
});

describe('capability tokens', () => {
  it('verifies the token for exactly this action before acting', async () => {
    const pr = p('memory_write');
    expect((await execute(input(pr))).status).toBe('succeeded');
  });

  it('refuses, without acting, an action with no token, a token for another action or key', async () => {
    const store = `engineering.refused-${randomUUID()}`;
    const pr = p('memory_write', { target: { store } });
    const none = await execute({ ...input(pr), capability: '' });
    expect(none).toMatchObject({ status: 'refused', error: expect.stringMatching(/no capability token/) as unknown });
    const other = p('memory_write', { target: { store }, parameters: { content: 'something else' } });
    const wrongAction = await execute(input(pr, { tokenFor: other }));
    expect(wrongAction).toMatchObject({
      status: 'refused',
      error: expect.stringMatching(/^capability token refused: the token was issued for another action/) as unknown,
    });
    const unlisted = { ...input(pr), policy };
    expect(await execute(unlisted)).toMatchObject({
      status: 'refused',
      error: expect.stringMatching(/key id "executors" is not in the policy's capabilities.issuers/) as unknown,
    });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(false);
  });
});

describe('a token the workflow redeemed as it scheduled the activity', () => {
  /** Runs `i` as an activity Temporal says `scheduledBy` scheduled. */
  async function scheduledBy(i: ExecuteInput, by: { workflowId: string; workflowType: string }) {
    const activities = createExecutorActivities({
      baseDir,
      stateDir: stateDir(),
      confirmReservation: () => Promise.resolve(),
    });
    const info = {
      attempt: 1,
      workflowType: by.workflowType,
      workflowExecution: { workflowId: by.workflowId, runId: 'r' },
    };
    return new MockActivityEnvironment(info).run((x: ExecuteInput) => activities.execute(x), i);
  }

  it("acts when the token's own proposal run scheduled it", async () => {
    const store = `engineering.at-schedule-${randomUUID()}`;
    const i: ExecuteInput = input(p('memory_write', { target: { store } }));
    const result = await scheduledBy(i, { workflowId: i.workflow_id, workflowType: 'proposalWorkflow' });
    expect(result).toMatchObject({ status: 'succeeded', executor: 'memory' });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(true);
  });

  it('refuses when another workflow scheduled it, whatever its input claims', async () => {
    const store = `engineering.at-schedule-${randomUUID()}`;
    const i: ExecuteInput = input(p('memory_write', { target: { store } }));
    // Another workflow copied a token (and its workflow id) from the proposal's history into its own input.
    const elsewhere = await scheduledBy(i, { workflowId: 'someone-else', workflowType: 'proposalWorkflow' });
    expect(elsewhere).toMatchObject({
      status: 'refused',
      error: expect.stringMatching(
        /scheduled by proposalWorkflow someone-else, not by the token's proposal run/,
      ) as unknown,
    });
    // Same workflow id, another workflow type: not a proposal run.
    const otherType = await scheduledBy(i, { workflowId: i.workflow_id, workflowType: 'circleRegistry' });
    expect(otherType).toMatchObject({ status: 'refused' });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(false);
  });

  it('still checks the token itself: another action is refused', async () => {
    const store = `engineering.at-schedule-${randomUUID()}`;
    const pr = p('memory_write', { target: { store } });
    const other = p('memory_write', { target: { store }, parameters: { content: 'something else' } });
    const i: ExecuteInput = input(pr, { tokenFor: other });
    const result = await scheduledBy(i, { workflowId: i.workflow_id, workflowType: 'proposalWorkflow' });
    expect(result).toMatchObject({
      status: 'refused',
      error: expect.stringMatching(/^capability token refused: the token was issued for another action/) as unknown,
    });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(false);
  });
});

describe('a chosen proposal_id, reserved beside the start', () => {
  const scheduled = (i: ExecuteInput) => ({
    attempt: 1,
    workflowType: 'proposalWorkflow',
    workflowExecution: { workflowId: i.workflow_id, runId: 'r' },
  });

  it('is confirmed for this run before the executor acts', async () => {
    reservations.length = 0;
    const i = input(p('memory_write'));
    expect((await execute(i)).status).toBe('succeeded');
    expect(reservations).toEqual([{ proposalId: i.proposal.proposal_id, workflowId: i.workflow_id }]);
  });

  it('held by other content: nothing is performed, the run learns why (ProposalIdTaken, not retried)', async () => {
    const store = `engineering.taken-${randomUUID()}`;
    const i = input(p('memory_write', { target: { store } }));
    const activities = createExecutorActivities({
      baseDir,
      stateDir: stateDir(),
      confirmReservation: () =>
        Promise.reject(new BadInputError('proposal.proposal_id: x is already used by another proposal (proposal-y)')),
    });
    const run = new MockActivityEnvironment(scheduled(i)).run((x: ExecuteInput) => activities.execute(x), i);
    await expect(run).rejects.toMatchObject({
      type: FailureType.ProposalIdTaken,
      nonRetryable: true,
      message: expect.stringMatching(/already used by another proposal/) as unknown,
    });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(false);
  });

  it('refuses when it cannot confirm it; a proposal_id that names its content needs no reservation', async () => {
    const store = `engineering.unconfirmed-${randomUUID()}`;
    const i = input(p('memory_write', { target: { store } }));
    const activities = createExecutorActivities({ baseDir, stateDir: stateDir() });
    const refused = await new MockActivityEnvironment(scheduled(i)).run((x: ExecuteInput) => activities.execute(x), i);
    expect(refused).toMatchObject({ status: 'refused', error: expect.stringMatching(/cannot confirm/) as unknown });
    expect(existsSync(join(policy.spec.memory.dir, `${store}.jsonl`))).toBe(false);
    const named = input({ ...p('memory_write', { target: { store } }), proposal_id: `proposal-${'a'.repeat(32)}` });
    const done: ExecutionResult = await new MockActivityEnvironment(scheduled(named)).run(
      (x: ExecuteInput) => activities.execute(x),
      named,
    );
    expect(done.status).toBe('succeeded');
  });
});
