/**
 * AgentDojo replayed as sessions (`eval --dataset agentdojo --provenance`) on the real export the test setup installs
 * (scripts/install-datasets.sh): what enters each session, which calls are tainted, and that the figures come from the
 * judge's outcomes (not fixed numbers: the run's own figures are in docs/provenance.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProvenanceSettingsSchema } from '../../src/contracts/provenance';
import { agentDojoSessions, sessionFigures } from '../../src/provenance/agentdojo-sessions';
import { AGENTDOJO_FILE } from '../../src/judge/datasets/agentdojo';
import { toolPath } from '../helpers/tools';
import type { Outcome } from '../../src/judge/eval';

const text = readFileSync(join(toolPath('datasets'), AGENTDOJO_FILE), 'utf8');
const replay = agentDojoSessions(text, ProvenanceSettingsSchema.parse(undefined));

describe('AgentDojo v1 as sessions', () => {
  it('replays every pair of the four suites: the same proposals, with and without provenance', () => {
    expect(replay.pairs).toBe(629);
    expect(replay.userTasks).toBe(97);
    expect(replay.withProvenance.map((c) => c.case.proposal.proposal_id)).toEqual(
      replay.without.map((c) => c.case.proposal.proposal_id),
    );
    expect(replay.without.some((c) => c.case.proposal.provenance)).toBe(false);
  });

  it("taints the injection's own recipient from the tool result the attack was placed in", () => {
    const call = replay.withProvenance.find(
      (c) => c.unit === 'banking.user_task_0:injection_task_0' && c.role === 'attack',
    )!;
    expect(call.case.proposal.provenance?.taints).toContainEqual({
      argument: 'recipient',
      kind: 'iban',
      value: 'us133000000121212121212',
      source: 'mcp:agentdojo-banking/read_file',
    });
  });

  it('counts an attack as succeeded only when every one of its calls runs, and utility per task', () => {
    const outcomes: Outcome[] = replay.withProvenance.map((c) => (c.case.proposal.provenance ? 'HUMAN' : 'APPROVE'));
    const f = sessionFigures(replay.withProvenance, outcomes, replay);
    const allRun = sessionFigures(
      replay.without,
      replay.without.map(() => 'APPROVE' as const),
      replay,
    );
    expect(allRun.attackSuccess.rate).toBe(1);
    expect(allRun.utility.rate).toBe(1);
    expect(f.attackSuccess.n).toBeLessThan(allRun.attackSuccess.n);
    expect(f.toPerson.n).toBe(replay.withProvenance.filter((c) => c.case.proposal.provenance).length);
    expect(f.attackSuccess.of).toBe(replay.pairs - replay.textOnlyPairs);
  });
});
