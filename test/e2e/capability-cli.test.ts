/**
 * `agent-judge capability verify` driven as a performer would: real CLI processes against the run's
 * dev server. An approved action the caller performs comes back from `propose --wait` with its
 * token; the CLI checks it against the action file and redeems it exactly once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ProposalOutcome } from '../../src/contracts/status';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { generateCapabilityKey } from '../../src/identity/capability-key';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));

let sys: TestSystem;
let dir: string;
let policyFile: string;

beforeAll(async () => {
  sys = await startSystem({ spec: { judge: { withoutModel: 'approve' } } });
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-capability-cli-'));
  // The policy the workers run with, in-process issuer key listed: what the performer trusts.
  policyFile = join(dir, 'policy.yaml');
  writeFileSync(policyFile, JSON.stringify(sys.policy));
});
afterAll(async () => {
  await sys?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function cli(
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: dir,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
          AGENT_JUDGE_POLICY: '',
          AGENT_JUDGE_CAPABILITY_KEY: '',
          ...extraEnv,
        },
        timeout: 50_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ).stdin?.end();
  });
}

function writeJson(value: unknown): string {
  const file = join(dir, `${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

const oneLine = (s: string) => s.trim().split('\n');

describe('capability verify', () => {
  it('propose --wait hands out the token; verify checks it; --redeem succeeds once, then is refused', async () => {
    const p = proposal('forgejo_pr_create');
    const file = writeJson(p);
    const proposed = await cli(['propose', file, '--wait', '--task-queue', sys.taskQueues.workflow]);
    expect(proposed.code, proposed.stderr).toBe(0);
    const outcome = JSON.parse(proposed.stdout) as ProposalOutcome;
    expect(outcome.status).toBe('approved');
    const token = outcome.capability!.token;
    expect(token).toMatch(/^v4\.public\./);

    const checked = await cli(['capability', 'verify', token, '--action', file, '--policy', policyFile]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({
      valid: true,
      token_id: outcome.capability!.token_id,
      action_checked: true,
      claims: { aud: 'executor:forgejo_pr_create', wid: outcome.workflow_id, sub: '@engineering' },
    });

    const other = writeJson({ ...p, target: { ...(p.target as object), branch: 'feat/something-else' } });
    const wrong = await cli(['capability', 'verify', token, '--action', other, '--redeem', '--policy', policyFile]);
    expect(wrong.code).toBe(1);
    expect(oneLine(wrong.stderr)).toEqual([
      expect.stringMatching(/^agent-judge: capability refused: the token was issued for another action/),
    ]);

    const redeemed = await cli(['capability', 'verify', token, '--action', file, '--redeem', '--policy', policyFile]);
    expect(redeemed.code, redeemed.stderr).toBe(0);
    expect(JSON.parse(redeemed.stdout)).toMatchObject({
      redemption: { token_id: outcome.capability!.token_id, redeemer: 'cli', audience: 'executor:forgejo_pr_create' },
    });
    // Redeemed: the run, kept open for it, closes.
    const final = await sys.client.workflow.getHandle<typeof proposalWorkflow>(outcome.workflow_id).result();
    expect(final.capability?.redemption?.redeemer).toBe('cli');

    const again = await cli(['capability', 'verify', token, '--action', file, '--redeem', '--policy', policyFile]);
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toEqual([
      expect.stringMatching(/^agent-judge: capability refused: the token .* was already redeemed at .* by cli$/),
    ]);
  });

  it('refuses bad input and foreign tokens with one line', async () => {
    const noAction = await cli(['capability', 'verify', 'v4.public.xyz', '--redeem', '--policy', policyFile]);
    expect(noAction.code).toBe(2);
    expect(oneLine(noAction.stderr)).toEqual([
      'agent-judge: --redeem needs --action <file>: a token is redeemed for the action you perform',
    ]);
    const v2 = await cli(['capability', 'verify', 'v2.public.AAAA', '--policy', policyFile]);
    expect(v2.code).toBe(1);
    expect(oneLine(v2.stderr)).toEqual(['agent-judge: capability refused: expected a v4.public token, got v2.public']);
    // A default policy lists no issuer of this system: its tokens verify nowhere else.
    const p = proposal('forgejo_pr_create');
    const proposed = await cli(['propose', writeJson(p), '--wait', '--task-queue', sys.taskQueues.workflow]);
    const token = (JSON.parse(proposed.stdout) as ProposalOutcome).capability!.token;
    const unknown = await cli(['capability', 'verify', token]);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toEqual([
      expect.stringMatching(/^agent-judge: capability refused: key id "in-process" is not in the policy's/),
    ]);
  });

  it('a workflow worker without a listed capability key refuses to start, naming what to set', async () => {
    const none = await cli(['worker', '--role', 'workflow', '--policy', policyFile]);
    expect(none.code).toBe(2);
    expect(oneLine(none.stderr)).toEqual([
      expect.stringMatching(
        /^agent-judge: the workflow worker needs a capability signing key: set AGENT_JUDGE_CAPABILITY_KEY /,
      ),
    ]);
    const key = generateCapabilityKey('unlisted');
    const unlisted = await cli(['worker', '--role', 'workflow', '--policy', policyFile], {
      AGENT_JUDGE_CAPABILITY_KEY: `${key.kid}:${key.private_key}`,
    });
    expect(unlisted.code).toBe(2);
    expect(oneLine(unlisted.stderr)).toEqual([
      `agent-judge: AGENT_JUDGE_CAPABILITY_KEY: capability key unlisted is not listed in the policy's ` +
        `spec.capabilities.issuers (add unlisted: ${key.public_key})`,
    ]);
  });
});
