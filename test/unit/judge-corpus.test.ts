import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { safeParseProposal } from '../../src/contracts/proposal';
import { CORPUS_PATH, loadCorpus } from '../helpers/judge-fixtures';

describe('the judge corpus', () => {
  const lines = readFileSync(CORPUS_PATH, 'utf8').split('\n').filter(Boolean);
  const corpus = loadCorpus();

  it('has one valid proposal per line (safeParseProposal) with an expected verdict and tags', () => {
    for (const [i, line] of lines.entries()) {
      const row = JSON.parse(line) as { proposal: unknown; expected: string; tags: string[] };
      const parsed = safeParseProposal(row.proposal);
      expect(parsed.ok ? '' : parsed.refusal.reason, `line ${i + 1}`).toBe('');
      expect(['APPROVE', 'REJECT', 'CLARIFY']).toContain(row.expected);
      expect(row.tags.length).toBeGreaterThan(0);
    }
    expect(corpus).toHaveLength(lines.length);
  });

  it('holds at least 50 canned proposals balanced across the verdicts and the action types', () => {
    const canned = corpus.filter((c) => c.tags.includes('canned'));
    expect(canned.length).toBeGreaterThanOrEqual(50);
    for (const v of ['APPROVE', 'REJECT', 'CLARIFY'] as const) {
      expect(canned.filter((c) => c.expected === v).length).toBeGreaterThanOrEqual(16);
    }
    const types = new Set(canned.map((c) => c.proposal.action_type));
    expect([...types].sort()).toEqual(
      [
        'discord_message',
        'exec',
        'file_write',
        'forgejo_pr_create',
        'issue_comment',
        'vault_note_create',
        'web_publish',
      ].sort(),
    );
  });

  it('holds at least 30 adversarial proposals covering each attack family', () => {
    const adversarial = corpus.filter((c) => c.tags.includes('adversarial'));
    expect(adversarial.length).toBeGreaterThanOrEqual(30);
    for (const tag of [
      'injection',
      'scope',
      'exec',
      'evidence',
      'homoglyph',
      'delimiter',
      'encoded',
      'dotdot',
      'file-name',
      'evidence-title',
    ]) {
      expect(
        adversarial.some((c) => c.tags.includes(tag)),
        tag,
      ).toBe(true);
    }
    for (const c of adversarial)
      expect(c.tags.includes('rules-visible') !== c.tags.includes('model-only'), c.proposal.proposal_id).toBe(true);
  });
});
