/**
 * "Also seen" in the attacker review (issue 21): with the default policy an agent that can run the CLI could
 * `decide` its own proposal as `--approver scott`, everywhere, not only under `dev`. Now an `agent-judge worker`
 * whose policy lists approvers without keys refuses unsigned decisions unless the policy says
 * `requireSignedDecisions: false`; `dev` keeps accepting them and says so in its banner. Real worker and CLI
 * processes against the run's dev server.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveUnsignedDecisions } from '../../src/identity/decision';
import { defaultPolicyWith } from '../../src/policy/load';
import { proposal, workerProcessCapability } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-unsigned-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const temporalEnv = () => ({
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_NAMESPACE: inject('temporalNamespace'),
  AGENT_JUDGE_POLICY: '',
  AGENT_JUDGE_APPROVERS: '',
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: dir, env: { ...process.env, ...temporalEnv() }, timeout: 50_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ).stdin?.end();
  });
}

/** An `agent-judge worker` on its own task queues, with `escalation` laid over the default policy. */
async function startWorker(name: string, escalation: Record<string, unknown>) {
  const capability = workerProcessCapability(dir);
  const doc = JSON.parse(readFileSync(capability.policyFile, 'utf8')) as { spec: Record<string, unknown> };
  doc.spec.escalation = { ...(doc.spec.escalation as object), ...escalation };
  const policyFile = join(dir, `${name}.json`);
  writeFileSync(policyFile, JSON.stringify(doc));
  const prefix = `unsigned-${randomUUID()}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'worker', '--task-queue-prefix', prefix, '--policy', policyFile, '--log-format', 'json'],
    { cwd: dir, env: { ...process.env, ...temporalEnv(), ...capability.env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  for (const end = Date.now() + 90_000; !stderr.includes('"event":"policy.published"'); ) {
    if (Date.now() > end || child.exitCode !== null) throw new Error(`worker did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async () => {
    const exited = new Promise((r) => child.once('close', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { prefix, stop, stderr: () => stderr };
}

/** A human-only proposal submitted through the CLI to `prefix`, then decided unsigned as scott. */
async function decideUnsigned(prefix: string) {
  const p = proposal('financial_op');
  const file = join(dir, `${String(p.proposal_id)}.json`);
  writeFileSync(file, JSON.stringify(p));
  const proposed = await cli(['propose', file, '--task-queue', prefix]);
  expect(proposed.code).toBe(0);
  return cli(['decide', String(p.proposal_id), 'approve', '--approver', 'scott', '--reason', 'looks fine']);
}

describe('unsigned decisions', () => {
  it('resolve per process: a worker refuses them when an approver has no key, dev accepts, explicit wins', () => {
    const keyless = defaultPolicyWith({ escalation: { timeout: '1h', approvers: ['scott'] } });
    expect(resolveUnsignedDecisions(keyless, 'worker')).toMatchObject({ refused: true, keyless: ['scott'] });
    expect(resolveUnsignedDecisions(keyless, 'dev')).toMatchObject({ refused: false, keyless: ['scott'] });
    const accepting = defaultPolicyWith({
      escalation: { timeout: '1h', approvers: ['scott'], requireSignedDecisions: false },
    });
    expect(resolveUnsignedDecisions(accepting, 'worker').refused).toBe(false);
    expect(resolveUnsignedDecisions(keyless, 'worker').policy.spec.escalation.requireSignedDecisions).toBe(true);
  });

  it('an agent-judge worker refuses `decide --approver scott` without a key, and says why at start', async () => {
    const worker = await startWorker('keyless', { timeout: '1h', approvers: ['scott'] });
    try {
      expect(worker.stderr()).toContain('unsigned decisions are refused');
      const decided = await decideUnsigned(worker.prefix);
      expect(decided.code).not.toBe(0);
      expect(decided.stderr).toContain('decisions must be signed, and the policy has no key or passkey for scott');
    } finally {
      await worker.stop();
    }
  }, 150_000);

  it('a worker whose policy says requireSignedDecisions: false accepts it', async () => {
    const worker = await startWorker('accepting', {
      timeout: '1h',
      approvers: ['scott'],
      requireSignedDecisions: false,
    });
    try {
      const decided = await decideUnsigned(worker.prefix);
      expect(decided.stderr).toBe('');
      expect(decided.code).toBe(0);
    } finally {
      await worker.stop();
    }
  }, 150_000);
});
