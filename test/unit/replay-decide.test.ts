/**
 * The replay's re-decision of one recorded proposal (src/replay/decide.ts) under candidate policies, with the
 * workflow's own state class and the judge's own code: tiers, deny and topic rules, the exec allowlist, the clarify
 * rounds answered with the recorded clarifications, recorded model answers reused only for an unchanged prompt, and a
 * seeded property: a candidate that only adds a deny rule never approves what the recorded policy did not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProposal, type Proposal } from '../../src/contracts/proposal';
import type { CompliancePolicy } from '../../src/contracts/policy';
import type { Verdict } from '../../src/contracts/verdict';
import { judgeProposal } from '../../src/judge';
import type { ModelClient } from '../../src/judge/model';
import { decideAgain, type ReplayModel } from '../../src/replay/decide';
import { RecordedModel, recordedAnswers } from '../../src/replay/recorded-model';
import { answerJson } from '../helpers/fake-ollama';
import { prng } from '../helpers/shell-grammar';
import { proposal, testPolicy } from '../helpers/system';

let baseDir: string;
let base: CompliancePolicy;
beforeAll(() => {
  baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-replay-'));
  base = testPolicy(baseDir, { judge: { withoutModel: 'escalate' } });
});
afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

const NOW = '2026-12-01T10:00:00.000Z';
const noModel: ReplayModel = { client: undefined, missed: () => false, counts: () => ({ called: 0, reused: 0 }) };
const decide = (p: Proposal, policy: CompliancePolicy, model: ReplayModel = noModel, recorded: Verdict[] = []) =>
  decideAgain(p, [], recorded, { policy, baseDir }, model, NOW);

describe('decideAgain', () => {
  it('re-evaluates tiers: a human-only action moved to lightweight is approved by its rules', async () => {
    const p = parseProposal(proposal('financial_op'));
    expect((await decide(p, base)).outcome).toBe('person');
    const looser = testPolicy(baseDir, {
      riskMatrix: base.spec.riskMatrix.map((e) =>
        e.actionType === 'financial_op' ? { ...e, tier: 'lightweight-approval' } : e,
      ),
    });
    const d = await decide(p, looser);
    expect(d).toMatchObject({ outcome: 'APPROVE', tier: 'lightweight-approval', rule: 'patterns.clean' });
  });

  it('names the deny rule a stricter candidate adds, and the topic rule that no longer matches', async () => {
    const p = parseProposal(proposal('issue_comment', { parameters: { body: 'ship it on friday' } }));
    expect((await decide(p, base)).outcome).toBe('APPROVE');
    const stricter = testPolicy(baseDir, {
      lightweight: { ...base.spec.lightweight, deny: [{ name: 'no.friday', pattern: 'friday' }] },
    });
    expect(await decide(p, stricter)).toMatchObject({ outcome: 'REJECT', rule: 'no.friday' });
    const note = parseProposal(proposal('vault_note_create', { target: { vault: 'main', path: 'archive/x.md' } }));
    expect(await decide(note, base)).toMatchObject({ outcome: 'REJECT', rule: 'topics.no-match' });
  });

  it('runs the exec allowlist of the candidate: a command added passes the rules, then a person decides', async () => {
    const p = parseProposal(proposal('exec', { parameters: { command: ['cat', 'README.md'] } }));
    expect(await decide(p, base)).toMatchObject({ outcome: 'REJECT', rule: 'exec.allowlist' });
    const wider = testPolicy(baseDir, {
      exec: { ...base.spec.exec, allowlist: [...base.spec.exec.allowlist, { command: 'cat' }] },
    });
    // Rules clean and no model: the candidate's spec.judge.withoutModel (escalate) sends it to a person.
    expect(await decide(p, wider)).toMatchObject({ outcome: 'person', rule: 'judge.no-model.escalate' });
  });

  it('answers CLARIFY rounds with the recorded clarifications in order, stops at CLARIFY without one', async () => {
    const p = parseProposal(proposal('forgejo_pr_create', { cited_evidence: [] }));
    const approve = testPolicy(baseDir, { judge: { withoutModel: 'approve' } });
    expect(await decide(p, approve)).toMatchObject({ outcome: 'CLARIFY', rule: 'evidence.missing' });
    const answered = await decideAgain(
      p,
      [{ cited_evidence: [{ type: 'issue', url: 'https://example.org/i/1' }] }],
      [],
      { policy: approve, baseDir },
      noModel,
      NOW,
    );
    expect(answered).toMatchObject({ outcome: 'APPROVE', clarify_rounds: 1 });
    expect(answered.verdicts.map((v) => v.verdict)).toEqual(['CLARIFY', 'APPROVE']);
  });

  it('reuses a recorded model answer only for an unchanged prompt; otherwise it needs a model', async () => {
    const p = parseProposal(proposal('exec', { parameters: { command: ['ls', '-l'] } }));
    const scripted: ModelClient = {
      model: 'recorded-model',
      chat: () =>
        Promise.resolve({ content: answerJson('REJECT', 0.9, 'not needed'), promptTokens: 10, completionTokens: 5 }),
    };
    // The recording: the judge's own code with a model, as the judge worker ran it.
    const recorded = await judgeProposal(
      { proposal: p, tier: 'full-judge-review', round: 0, policy: base },
      { baseDir, model: scripted, now: () => new Date(NOW) },
    );
    expect(recorded.judge?.raw_answer).toContain('REJECT');
    const replayWith = (policy: CompliancePolicy) => {
      const client = new RecordedModel(recordedAnswers([recorded]));
      return decide(
        p,
        policy,
        { client, missed: () => client.missed, counts: () => ({ called: 0, reused: client.reused }) },
        [recorded],
      );
    };
    const same = await replayWith(base);
    expect(same).toMatchObject({ outcome: 'REJECT', reason: recorded.reason, model: { reused: 1 } });
    // The exec allowlist is part of the facts the prompt states: widening it changes the prompt.
    const wider = testPolicy(baseDir, {
      exec: { ...base.spec.exec, allowlist: [...base.spec.exec.allowlist, { command: 'cat' }] },
    });
    expect((await replayWith(wider)).outcome).toBe('needs-model');
  });

  it('re-runs the gate for a recorded shell line: a candidate that allows the command runs it at once', async () => {
    const p = parseProposal({
      ...proposal('shell_command'),
      target: { cwd: baseDir },
      parameters: {
        command: 'make test',
        parsed: { reducible: true, commands: [{ argv: ['make', 'test'], redirects: [] }] },
      },
    });
    expect((await decide(p, base)).gate).toBeUndefined();
    const shell = base.spec.hooks.shell;
    const wider = testPolicy(baseDir, {
      hooks: {
        ...base.spec.hooks,
        files: { ...base.spec.hooks.files, roots: [baseDir] },
        shell: { ...shell, allow: [...shell.allow, { command: 'make', operands: 'text' }] },
      },
    });
    expect(await decide(p, wider)).toMatchObject({ outcome: 'APPROVE', gate: 'run at once', decided_by: 'gate' });
  });
});

describe('property: a candidate that only adds a deny rule is never looser', () => {
  it('never turns a REJECT or a person into an APPROVE, over generated proposals', async () => {
    const next = prng(41);
    const words = ['deploy', 'friday', 'notes', 'AKIAABCDEFGHIJKLMNOP', 'hello', '@everyone', 'rm -rf', 'ok'];
    const types = ['memory_write', 'vault_note_create', 'issue_comment', 'exec', 'financial_op', 'discord_message'];
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
    const stricter = testPolicy(baseDir, {
      judge: { withoutModel: 'escalate' },
      lightweight: {
        ...base.spec.lightweight,
        deny: [...base.spec.lightweight.deny, { name: 'x.friday', pattern: 'friday' }],
      },
    });
    const rank = { APPROVE: 0, CLARIFY: 1, person: 2, REJECT: 3, 'needs-model': -1 } as const;
    for (let i = 0; i < 300; i++) {
      const text = `${pick(words)} ${pick(words)}`;
      const t = pick(types);
      const p = parseProposal(proposal(t, { justification: text }));
      const before = await decide(p, base);
      const after = await decide(p, stricter);
      if (before.outcome !== 'APPROVE') expect(after.outcome, `${t}: ${text}`).not.toBe('APPROVE');
      expect(rank[after.outcome], `${t}: ${text}`).toBeGreaterThanOrEqual(
        before.outcome === 'APPROVE' ? 0 : Math.min(rank[before.outcome], rank.person),
      );
    }
  });
});
