/**
 * Issue 21, findings 1 and 2: an approved, allowlisted git command must never run what an agent wrote, and never read
 * a repository the policy does not name (the checkout above the workspace). Each case runs the real executor activity
 * (verdict, capability, hard rules, the exec executor, real git) on folders laid out as an agent could.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutorActivities } from '../../src/activities/execute';
import type { ExecuteInput } from '../../src/activities/types';
import { actionDigest, executorAudience, policyDigest } from '../../src/contracts/capability';
import type { CompliancePolicy } from '../../src/contracts/policy';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import type { ExecutionResult } from '../../src/contracts/status';
import {
  generateCapabilityKey,
  issueCapability,
  loadCapabilityKey,
  withCapabilityIssuer,
  type CapabilityKey,
} from '../../src/identity/capability-key';
import { proposal, testPolicy } from '../helpers/system';

let capabilityKey: CapabilityKey;
const cleanup: string[] = [];

beforeAll(async () => {
  const file = generateCapabilityKey('executors');
  capabilityKey = await loadCapabilityKey(`${file.kid}:${file.private_key}`);
});
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanup.push(dir);
  return dir;
}

/** git for setting up fixtures only (never what the executor runs). */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** An APPROVE verdict with its capability, as the workflow hands an approved proposal to the executor. */
function approved(pr: Proposal, policy: CompliancePolicy): ExecuteInput {
  const workflowId = `proposal-${randomUUID().replace(/-/g, '')}`;
  const inForce = withCapabilityIssuer(policy, capabilityKey);
  const { token } = issueCapability(
    {
      workflow_id: workflowId,
      sub: pr.agent_id,
      aud: executorAudience(pr.action_type),
      action_sha256: actionDigest(pr),
      policy_sha256: policyDigest(inForce),
      ttl_ms: 600_000,
    },
    capabilityKey,
  );
  return {
    workflow_id: workflowId,
    proposal: pr,
    verdict: {
      proposal_id: pr.proposal_id,
      verdict: 'APPROVE',
      reason: 'no rule objects',
      constraints: { require_human_review: false },
      escalation: null,
      confidence: 1,
      decided_by: 'rules',
      tier: 'full-judge-review',
    },
    shadow: false,
    policy: inForce,
    capability: token,
  };
}

async function execute(baseDir: string, i: ExecuteInput): Promise<ExecutionResult> {
  const activities = createExecutorActivities({
    baseDir,
    stateDir: join(baseDir, '.agent-judge'),
    confirmReservation: () => Promise.resolve(),
  });
  const info = {
    attempt: 1,
    workflowType: 'proposalWorkflow',
    workflowExecution: { workflowId: i.workflow_id, runId: 'r' },
  };
  return new MockActivityEnvironment(info).run((input: ExecuteInput) => activities.execute(input), i);
}

const execOf = (command: string[], cwd: string) => parseProposal(proposal('exec', { parameters: { command, cwd } }));

/** A base directory with the default policy (plus `spec`) and its workspace. */
function setup(spec: (workspace: string) => Record<string, unknown> = () => ({})) {
  const baseDir = tempDir('agent-judge-sec-git-');
  const workspace = join(baseDir, '.agent-judge', 'workspace');
  mkdirSync(workspace, { recursive: true });
  return { baseDir, workspace, policy: (extra = spec(workspace)) => testPolicy(baseDir, extra) };
}

/** The default policy's exec section, naming these repositories (spec sections merge one level deep). */
const withRepositories = (repositories: Array<{ name: string; path: string }>) => ({ exec: { git: { repositories } } });

/**
 * Finding 1 as reported: the files seven `file_write`s lay out under the workspace (written here with plain fs): HEAD,
 * objects/, refs/, a config whose clean filter runs a command, info/attributes, an index (made by real git in a
 * scratch folder) and the file `a` the filter applies to.
 */
function plantFilterRepository(workspace: string, marker: string): string {
  const scratch = tempDir('agent-judge-sec-scratch-');
  git(scratch, 'init', '-q');
  writeFileSync(join(scratch, 'a'), 'a\n');
  git(scratch, 'add', 'a');
  const evil = join(workspace, `evil-${randomUUID().slice(0, 8)}`);
  mkdirSync(join(evil, 'info'), { recursive: true });
  writeFileSync(join(evil, 'HEAD'), 'ref: refs/heads/main\n');
  cpSync(join(scratch, '.git', 'objects'), join(evil, 'objects'), { recursive: true });
  mkdirSync(join(evil, 'refs'));
  writeFileSync(join(evil, 'refs', 'keep'), '');
  writeFileSync(join(evil, 'objects', 'keep'), '');
  cpSync(join(scratch, '.git', 'index'), join(evil, 'index'));
  writeFileSync(
    join(evil, 'config'),
    `[core]\n\tbare = false\n\tworktree = .\n[filter "x"]\n\tclean = "touch ${marker}; cat"\n`,
  );
  writeFileSync(join(evil, 'info', 'attributes'), 'a filter=x\n');
  writeFileSync(join(evil, 'a'), 'changed\n');
  return evil;
}

/**
 * The same finding through a setting no `-c` override covered: a bare repository whose config makes it a partial clone
 * of an ssh remote, with one blob missing, so `git log -p` fetches it lazily and runs core.sshCommand.
 */
function plantLazyFetchRepository(workspace: string, marker: string): string {
  const scratch = tempDir('agent-judge-sec-scratch-');
  git(scratch, 'init', '-q');
  writeFileSync(join(scratch, 'f'), 'text\n');
  git(scratch, 'add', 'f');
  git(scratch, 'commit', '-qm', 'planted');
  const blob = git(scratch, 'rev-parse', 'HEAD:f').trim();
  const evil = join(workspace, `lazy-${randomUUID().slice(0, 8)}`);
  mkdirSync(evil);
  cpSync(join(scratch, '.git', 'HEAD'), join(evil, 'HEAD'));
  cpSync(join(scratch, '.git', 'objects'), join(evil, 'objects'), { recursive: true });
  cpSync(join(scratch, '.git', 'refs'), join(evil, 'refs'), { recursive: true });
  unlinkSync(join(evil, 'objects', blob.slice(0, 2), blob.slice(2)));
  writeFileSync(
    join(evil, 'config'),
    '[core]\n\trepositoryformatversion = 1\n\tbare = true\n' +
      `\tsshCommand = "touch ${marker}; false"\n` +
      '[extensions]\n\tpartialClone = origin\n' +
      '[remote "origin"]\n\turl = ssh://example.invalid/r\n\tpromisor = true\n',
  );
  return evil;
}

describe('finding 1: a repository an agent laid out in the workspace never runs its programs', () => {
  it('an approved `git status --short` there is refused by the default policy; the filter never runs', async () => {
    const { baseDir, workspace, policy } = setup();
    const marker = join(tempDir('agent-judge-sec-marker-'), 'pwned');
    const evil = plantFilterRepository(workspace, marker);

    const result = await execute(baseDir, approved(execOf(['git', 'status', '--short'], evil), policy()));

    expect(existsSync(marker)).toBe(false);
    expect(result.status).toBe('refused');
    expect(result.error).toBe(
      'exec.git-repository: git runs only with its cwd inside a repository spec.exec.git.repositories names ' +
        '(the policy names none)',
    );
  });

  it('an approved `git log -p` in a planted partial clone is refused, and its ssh command never runs', async () => {
    const { baseDir, workspace, policy } = setup();
    const marker = join(tempDir('agent-judge-sec-marker-'), 'pwned');
    const evil = plantLazyFetchRepository(workspace, marker);

    const result = await execute(baseDir, approved(execOf(['git', 'log', '-p'], evil), policy()));

    expect(existsSync(marker)).toBe(false);
    expect(result.status).toBe('refused');
    expect(result.error).toMatch(/^exec\.git-repository: git runs only with its cwd inside a repository/);
  });

  it('a named repository whose own config sets a program-running key is refused before git runs', async () => {
    const marker = join(tempDir('agent-judge-sec-marker-'), 'pwned');
    const { baseDir, workspace, policy } = setup();
    const evil = plantFilterRepository(workspace, marker);
    const lazy = plantLazyFetchRepository(workspace, marker);
    const named = policy(
      withRepositories([
        { name: 'evil', path: evil },
        { name: 'lazy', path: lazy },
      ]),
    );

    const status = await execute(baseDir, approved(execOf(['git', 'status', '--short'], evil), named));
    expect(status.status).toBe('refused');
    expect(status.error).toMatch(/^exec\.git-config: repository evil \(.*\) sets filter\.x\.clean in its own config/);
    const log = await execute(baseDir, approved(execOf(['git', 'log', '-p'], lazy), named));
    expect(log.status).toBe('refused');
    expect(log.error).toMatch(/^exec\.git-config: repository lazy \(.*\) sets /);
    expect(log.error).toContain(
      'sets core.sshcommand, extensions.partialclone, remote.origin.promisor in its own config',
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('inside a named checkout, git reads that checkout, never the planted folder it runs in', async () => {
    const { baseDir, workspace, policy } = setup();
    const app = join(workspace, 'app');
    mkdirSync(app);
    git(app, 'init', '-q');
    writeFileSync(join(app, 'README'), 'app\n');
    git(app, 'add', 'README');
    git(app, 'commit', '-qm', 'the app');
    const marker = join(tempDir('agent-judge-sec-marker-'), 'pwned');
    const evil = plantFilterRepository(app, marker);
    const lazy = plantLazyFetchRepository(app, marker);
    const named = policy(withRepositories([{ name: 'app', path: app }]));

    const status = await execute(baseDir, approved(execOf(['git', 'status', '--short'], evil), named));
    expect(status.status, status.error).toBe('succeeded');
    // The planted files are untracked files of the app, not a repository of their own.
    expect((status.output as { stdout: string }).stdout).toContain('?? ./');
    const log = await execute(baseDir, approved(execOf(['git', 'log', '-p'], lazy), named));
    expect(log.status, log.error).toBe('succeeded');
    expect((log.output as { stdout: string }).stdout).toContain('the app');
    expect((log.output as { stdout: string }).stdout).not.toContain('planted');
    expect(existsSync(marker)).toBe(false);
  });

  it('the file guard refuses the write that gives a folder a repository shape', async () => {
    const { baseDir, policy } = setup();
    const name = `.agent-judge/workspace/evil-${randomUUID().slice(0, 8)}/HEAD`;
    const write = parseProposal(
      proposal('file_write', { target: { path: name }, parameters: { content: 'ref: refs/heads/main\n' } }),
    );

    const result = await execute(baseDir, approved(write, policy()));

    expect(result.status).toBe('refused');
    expect(result.error).toBe(
      `files.repository-shape: path ${JSON.stringify(name)} would give a folder a git repository's shape (HEAD)`,
    );
    expect(existsSync(join(baseDir, name))).toBe(false);
  });
});

describe('finding 2: git never reads the repository above the workspace', () => {
  /** The operator's checkout, with a committed secret; the workspace lives inside it, as under `npm start`. */
  function checkoutAroundWorkspace() {
    const s = setup();
    git(s.baseDir, 'init', '-q');
    writeFileSync(join(s.baseDir, 'deploy.env'), 'DB_PASSWORD=hunter2-operator-secret\n');
    git(s.baseDir, 'add', 'deploy.env');
    git(s.baseDir, 'commit', '-qm', 'deploy settings');
    return s;
  }

  it('an approved `git log -p` in the workspace is refused and prints nothing of the checkout', async () => {
    const { baseDir, workspace, policy } = checkoutAroundWorkspace();

    const result = await execute(baseDir, approved(execOf(['git', 'log', '-p'], workspace), policy()));

    expect(result.status).toBe('refused');
    expect(result.error).toMatch(/^exec\.git-repository: /);
    expect(JSON.stringify(result)).not.toContain('hunter2');
  });

  it('with a repository named inside the workspace, git reads it and only it', async () => {
    const { baseDir, workspace, policy } = checkoutAroundWorkspace();
    const app = join(workspace, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    git(app, 'init', '-q');
    writeFileSync(join(app, 'src', 'a.ts'), 'export {};\n');
    git(app, 'add', '.');
    git(app, 'commit', '-qm', 'inner commit');
    const named = policy(withRepositories([{ name: 'app', path: app }]));

    const log = await execute(baseDir, approved(execOf(['git', 'log', '-p'], join(app, 'src')), named));
    expect(log.status, log.error).toBe('succeeded');
    const out = (log.output as { stdout: string }).stdout;
    expect(out).toContain('inner commit');
    expect(out).not.toContain('hunter2');
    expect(out).not.toContain('deploy settings');

    // The workspace itself is not inside the named repository: refused, naming what is named.
    const outside = await execute(baseDir, approved(execOf(['git', 'diff'], workspace), named));
    expect(outside.status).toBe('refused');
    expect(outside.error).toContain(`(app: ${app}); cwd ${JSON.stringify(workspace)} is in none`);
    expect(JSON.stringify(outside)).not.toContain('hunter2');
  });
});
