/**
 * A grant never widens code, from the built CLI (docs/grants.md): `decide --grant-same target.cwd` on a shell command
 * (what an approver of a coding agent's `npm test` might type for "in this directory") is refused before the decision
 * is sent, naming the field and the rule; a grant that pins the command is described in words before it is made.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { ProposalOutcome } from '../../src/contracts/status';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));

let sys: TestSystem;
let dir: string;

beforeAll(async () => {
  sys = await startSystem({ spec: { escalation: { timeout: '60s', approvers: ['scott'], reminderAt: 0 } } });
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-grants-cli-'));
});
afterAll(async () => {
  await sys?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without a local policy (AGENT_JUDGE_POLICY empty); resolves with its exit code and output. */
function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      AGENT_JUDGE_POLICY: '',
    };
    const child = execFile(process.execPath, [BIN, ...args], { env, timeout: 50_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

function outcome(run: Run): ProposalOutcome {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as ProposalOutcome;
}

const queue = () => ['--task-queue', sys.taskQueues.workflow];

/** A shell command a coding agent's hook would propose, in /srv/repo. */
const shell = (command: string) =>
  proposal('shell_command', {
    target: { cwd: '/srv/repo' },
    parameters: { command, parsed: { reducible: false, commands: [], why: 'not parsed in this test' } },
  });

describe('a grant never widens code', () => {
  it('--grant-same target.cwd on a command is refused before deciding; one pinning it is shown, made', async () => {
    const first = shell('npm test');
    const file = join(dir, `${randomUUID()}.json`);
    writeFileSync(file, JSON.stringify(first));
    expect(outcome(await cli(['propose', file, '--wait', ...queue()])).status).toBe('awaiting_human');
    const id = String(first.proposal_id);
    const approve = (...grant: string[]) =>
      cli(['decide', id, 'approve', '--approver', 'scott', '--grant-for', '30m', ...grant, ...queue()]);

    const refused = await approve('--grant-same', 'target.cwd');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'agent-judge: grant on shell_command must keep parameters.command equal (a grant never widens code; ' +
        'spec.grants.allowUnpinnedCode does not list shell_command); nothing was signed or decided ' +
        '(AGENT_JUDGE_POLICY is not set: checked with the default spec.grants)\n',
    );
    // Nothing was decided: the proposal still waits for a person.
    expect(outcome(await cli(['status', id])).status).toBe('awaiting_human');

    const made = await approve('--grant-same', 'parameters.command,target.cwd', '--grant-uses', '5');
    expect(outcome(made).verdict).toMatchObject({ decided_by: 'human:scott' });
    expect(made.stderr).toMatch(
      new RegExp(
        '^the grant covers: shell_command by @engineering: the command "npm test" exactly, in /srv/repo ' +
          '\\(that directory only\\); other fields may differ; in any session; for 30 minutes \\(until \\S+\\); ' +
          'at most 5 uses$',
        'm',
      ),
    );
    expect(made.stderr).toMatch(/grant g[a-z2-7]{20} is live: up to 5 calls like this one/);
  });
});
