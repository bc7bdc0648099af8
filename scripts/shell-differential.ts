/**
 * The shell gate's differential check at scale (issue 37): `npm run shell-differential -- --lines 20000 --seed 7`.
 * Generates lines from the grammar (test/helpers/shell-grammar.ts), puts each to the gate, runs every line the gate
 * allows at once under strace in a fresh scratch project and lists what broke the promise "a line the gate allows
 * at once only reads inside the roots" (test/helpers/shell-differential.ts). Also reports how many lines of the
 * realistic corpus (test/fixtures/shell-corpus.txt) the gate allows at once, and runs those too.
 * The bounded sample of this check runs in CI: test/security/shell-differential.test.ts. Exits 1 on any violation.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureRgTree, ensureStrace } from './test-tools.mjs';
import { generateLines } from '../test/helpers/shell-grammar';
import {
  corpusFigures,
  formatViolations,
  readCorpus,
  removeScratch,
  runDifferential,
} from '../test/helpers/shell-differential';
import { buildScratch } from '../test/helpers/shell-sandbox';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '1' },
    parallel: { type: 'string', default: '2' },
    corpus: { type: 'string', default: join(ROOT, 'test', 'fixtures', 'shell-corpus.txt') },
    show: { type: 'string', default: '200' },
  },
});
const count = Number(values.lines);
const seed = Number(values.seed);
const parallel = Number(values.parallel);
const log = (line: string) => process.stderr.write(`${line}\n`);

const { strace } = ensureStrace(log);
const { rg, tree } = ensureRgTree(log);
const toolBinaries = [rg, tree];
const scratch = buildScratch();
try {
  const corpus = readCorpus(values.corpus);
  const figures = await corpusFigures(corpus, scratch.root);
  const corpusRun = await runDifferential(corpus, { strace, toolBinaries, parallel, scratch });
  const started = Date.now();
  const lines = generateLines(seed, count);
  const genMs = Date.now() - started;
  let lastShown = 0;
  const report = await runDifferential(lines, {
    strace,
    toolBinaries,
    parallel,
    scratch,
    onRun: (done, total) => {
      if (done - lastShown >= 500 || done === total) {
        lastShown = done;
        log(`  ran ${done}/${total} allowed lines`);
      }
    },
  });
  const total = Date.now() - started;
  console.log(`corpus (${values.corpus}): the gate allows ${figures.allowed} of ${figures.total} at once`);
  console.log(`  not allowed at once:`);
  for (const n of figures.notAllowed) {
    console.log(`    ${n.verdict.kind.padEnd(5)} ${JSON.stringify(n.line)}  (${n.verdict.detail.slice(0, 100)})`);
  }
  console.log(`  corpus lines run: ${corpusRun.run}, violating: ${corpusRun.violating.length}`);
  if (corpusRun.violating.length > 0) console.log(formatViolations(corpusRun, Number(values.show)));
  console.log(`generated: ${report.lines} lines (seed ${seed}) in ${genMs} ms`);
  console.log(
    `gate: allowed ${report.allowed}, denied ${report.denied}, judged ${report.judged} (${report.gateMs} ms)`,
  );
  console.log(`run under strace: ${report.run} lines in ${report.runMs} ms (${parallel} at once)`);
  console.log(`violations: ${report.violating.length} lines (must be 0)`);
  if (report.violating.length > 0) console.log(formatViolations(report, Number(values.show)));
  console.log(`total: ${total} ms`);
  if (report.violating.length > 0 || corpusRun.violating.length > 0) process.exitCode = 1;
} finally {
  removeScratch(scratch);
}
