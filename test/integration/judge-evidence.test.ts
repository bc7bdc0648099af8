/**
 * Evidence verification against a loopback Forgejo REST API (real HTTP): cited issues and PRs
 * must exist, be open, and belong to the target repository.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Evidence } from '../../src/contracts/proposal';
import { judgeProposal } from '../../src/judge';
import type { ModelClient } from '../../src/judge/model';
import { closedPortHost } from '../helpers/fake-ollama';
import { startFakeForgejo, type FakeForgejo, type FakeIssue } from '../helpers/fake-forgejo';
import { judgePolicy, prProposal, tempBaseDir } from '../helpers/judge-fixtures';

const ISSUES: FakeIssue[] = [
  { fullName: 'sscoble/speckl', number: 42, state: 'open' },
  { fullName: 'sscoble/speckl', number: 43, state: 'closed' },
  { fullName: 'sscoble/speckl', number: 77, state: 'open', pull: true },
  // Issue 5 of sscoble/old-name now lives in another repository (transferred).
  { fullName: 'sscoble/infra', number: 5, state: 'open', alias: 'sscoble/speckl-old' },
];
const WEB = 'https://forge.example.test';
const approving: ModelClient = {
  model: 'approving',
  chat: () =>
    Promise.resolve({
      content: JSON.stringify({ verdict: 'APPROVE', confidence: 0.9, reason: 'fine' }),
      promptTokens: 1,
      completionTokens: 1,
    }),
};

let forgejo: FakeForgejo | undefined;
afterEach(async () => {
  try {
    forgejo?.assertDone();
  } finally {
    await forgejo?.close();
    forgejo = undefined;
  }
});

async function judgeEvidence(
  evidence: Evidence[],
  opts: { token?: string; apiBaseUrl?: string; timeoutMs?: number; target?: string } = {},
) {
  const baseDir = tempBaseDir();
  const policy = await judgePolicy(baseDir, {
    allowedEvidenceHosts: [],
    forgejo: {
      apiBaseUrl: opts.apiBaseUrl ?? forgejo!.apiBaseUrl,
      webUrl: WEB,
      tokenEnv: 'FORGEJO_TOKEN',
      timeoutMs: opts.timeoutMs ?? 2_000,
    },
  });
  const proposal = prProposal({
    cited_evidence: evidence,
    ...(opts.target ? { target: { repo: opts.target, branch: 'feat/x', base: 'main' } } : {}),
  });
  return judgeProposal(
    { proposal, tier: 'full-judge-review', round: 0, policy },
    { baseDir, model: approving, env: opts.token ? { FORGEJO_TOKEN: opts.token } : {} },
  );
}

describe('evidence through the Forgejo API', () => {
  it('an open issue of the target repository is verified: confidence untouched, token sent', async () => {
    forgejo = await startFakeForgejo(ISSUES, { token: 't0ken' });
    const v = await judgeEvidence(
      [
        { type: 'issue', url: `${WEB}/sscoble/speckl/issues/42` },
        { type: 'pull_request', url: `${WEB}/sscoble/speckl/pulls/77` },
      ],
      {
        token: 't0ken',
      },
    );
    expect(v).toMatchObject({ verdict: 'APPROVE', decided_by: 'judge', confidence: 0.9 });
    expect(forgejo.requests.sort()).toEqual([
      '/api/v1/repos/sscoble/speckl/issues/42',
      '/api/v1/repos/sscoble/speckl/issues/77',
    ]);
    expect(forgejo.authorizations).toEqual(['token t0ken', 'token t0ken']);
  });

  it('a closed issue fails verification: CLARIFY before the model', async () => {
    forgejo = await startFakeForgejo(ISSUES);
    const v = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl/issues/43` }]);
    expect(v).toMatchObject({ verdict: 'CLARIFY', decided_by: 'rules', rule: 'evidence.failed' });
    expect(v.reason).toContain('exists but is closed');
  });

  it('an issue that does not exist fails verification', async () => {
    forgejo = await startFakeForgejo(ISSUES);
    const v = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl/issues/999` }]);
    expect(v).toMatchObject({ verdict: 'CLARIFY', rule: 'evidence.failed' });
    expect(v.reason).toContain('no such issue');
  });

  it('an issue Forgejo places in another repository is a rules REJECT', async () => {
    forgejo = await startFakeForgejo(ISSUES);
    const v = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl-old/issues/5` }], {
      target: 'sscoble/speckl-old',
    });
    expect(v).toMatchObject({ verdict: 'REJECT', decided_by: 'rules', rule: 'evidence.other-repo' });
  });

  it('a Forgejo that is down or slow makes evidence unverifiable, which lowers confidence', async () => {
    const down = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl/issues/42` }], {
      apiBaseUrl: `${await closedPortHost()}/api/v1`,
    });
    expect(down).toMatchObject({ verdict: 'APPROVE', confidence: 0.72 });
    forgejo = await startFakeForgejo(ISSUES, { delayMs: 1_000 });
    const started = performance.now();
    const slow = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl/issues/42` }], { timeoutMs: 100 });
    expect(performance.now() - started).toBeLessThan(900);
    expect(slow).toMatchObject({ verdict: 'APPROVE', confidence: 0.72 });
  });

  it('a 401 (bad token) is unverifiable, not a verdict on the evidence', async () => {
    forgejo = await startFakeForgejo(ISSUES, { token: 'right' });
    const v = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/speckl/issues/42` }], { token: 'wrong' });
    expect(v).toMatchObject({ verdict: 'APPROVE', confidence: 0.72 });
  });

  it('never queries Forgejo for hosts other than its own, nor for URLs of other repositories', async () => {
    forgejo = await startFakeForgejo(ISSUES);
    const other = await judgeEvidence([{ type: 'issue', url: `${WEB}/sscoble/other/issues/42` }]);
    expect(other).toMatchObject({ verdict: 'REJECT', rule: 'evidence.other-repo' });
    const foreign = await judgeEvidence([{ type: 'issue', url: 'https://elsewhere.example/sscoble/speckl/issues/42' }]);
    expect(foreign).toMatchObject({ verdict: 'CLARIFY', rule: 'evidence.failed' });
    expect(forgejo.requests).toEqual([]);
  });
});
