/**
 * "A line the gate allows at once only reads inside the roots", checked by running it (issue 37). A seeded sample of
 * generated lines (test/helpers/shell-grammar.ts: the allowlist's programs and dangerous ones, every quoting form,
 * globs that match option-named files, tildes, braces, substitutions, heredocs, redirections, wrappers, pipes, lists)
 * is put to the gate; every line it allows is run under strace in a fresh scratch project, and must run only the
 * programs it names, write nothing (git's index refresh aside), read nothing outside the project or under a
 * protected folder, and print no canary (test/helpers/strace-audit.ts). The large run is
 * `npm run shell-differential -- --lines 20000 --seed N`.
 *
 * strace, rg and tree come from the test setup (scripts/test-tools.mjs); without them this test fails saying so.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLines } from '../helpers/shell-grammar';
import {
  corpusFigures,
  formatViolations,
  readCorpus,
  removeScratch,
  runDifferential,
} from '../helpers/shell-differential';
import { buildScratch } from '../helpers/shell-sandbox';
import { toolPath } from '../helpers/tools';

/** The CI sample: about 30 s on the two-core CI machine (roughly 870 of the 3,000 lines are allowed and run). */
const SAMPLE = 3000;
const SEED = 37;

const scratch = buildScratch();
afterAll(() => removeScratch(scratch));
const tools = () => ({ strace: toolPath('strace'), toolBinaries: [toolPath('rg'), toolPath('tree')], scratch });

describe('the shell gate, differentially', () => {
  it(`allows at once no line (of ${SAMPLE}, seed ${SEED}) that runs, writes or reads more than it names`, async () => {
    const report = await runDifferential(generateLines(SEED, SAMPLE), tools());
    // The sample must exercise the gate's allow path, or it proves nothing.
    expect(report.run, 'lines run').toBeGreaterThan(SAMPLE / 10);
    expect(report.run).toBe(report.allowed);
    const summary =
      `${report.lines} lines: ${report.allowed} allowed (run in ${report.runMs} ms), ${report.denied} denied, ` +
      `${report.judged} judged; ${report.violating.length} allowed lines broke the promise:\n` +
      formatViolations(report);
    expect(report.violating.length, summary).toBe(0);
  }, 240_000);

  it('runs the realistic corpus lines the gate allows without a violation, and the gate allows some', async () => {
    const corpus = readCorpus(join(import.meta.dirname, '..', 'fixtures', 'shell-corpus.txt'));
    const figures = await corpusFigures(corpus, scratch.root);
    expect(figures.allowed, 'corpus lines allowed at once').toBeGreaterThan(0);
    const report = await runDifferential(corpus, tools());
    expect(report.allowed).toBe(figures.allowed);
    expect(report.violating.length, formatViolations(report)).toBe(0);
  }, 120_000);

  it('catches what it is meant to catch: a write, an unnamed program, a protected read, a canary', async () => {
    // The checks themselves, on lines run directly (not through the gate): each must be seen, or a clean run above
    // would mean nothing.
    const { runAllowed } = await import('../helpers/shell-sandbox');
    const { DEFAULT_PROTECT } = await import('../helpers/shell-gate');
    const run = (line: string, programs: string[]) =>
      runAllowed(scratch, 9, line, { strace: toolPath('strace'), programs, protect: DEFAULT_PROTECT });
    const kinds = async (line: string, programs: string[]) => (await run(line, programs)).violations.map((v) => v.kind);
    expect(await kinds('ls src', ['ls'])).toEqual([]);
    expect(await kinds('git status --short', ['git'])).toEqual([]);
    expect(await kinds('git branch newname', ['git'])).toContain('write');
    expect(await kinds('find . ?exec sh pwn.sh \\;', ['find'])).toEqual(expect.arrayContaining(['exec', 'marker']));
    expect(await kinds('grep -r "" .agent-judge', ['grep'])).toEqual(
      expect.arrayContaining(['read-protected', 'canary']),
    );
    expect(await kinds('cat ../outside/secret.txt', ['cat'])).toEqual(
      expect.arrayContaining(['read-outside', 'canary']),
    );
    expect(await kinds('cat etc-link/passwd', ['cat'])).toEqual(expect.arrayContaining(['read-outside', 'canary']));
    expect(await kinds('wc -l < .env', ['wc'])).toContain('read-protected');
    expect(await kinds('ls > listing.txt', ['ls'])).toContain('write');
  }, 60_000);
});
