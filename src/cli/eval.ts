import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { BadInputError } from '../contracts/errors';
import { createJudgeDepsFromEnv, type JudgeDeps } from '../judge';
import { formatEvalReport, parseCorpus, runEval } from '../judge/eval';
import { loadPolicy } from '../policy/load';
import { printJson } from './io';

const positiveInt = (flag: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag}: expected a positive integer`);
  return n;
};
const rate = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number between 0 and 1');
  return n;
};

interface EvalOptions {
  model?: string;
  host?: string;
  policy?: string;
  baseDir?: string;
  json?: boolean;
  concurrency: number;
  timeout?: number;
  rulesOnly?: boolean;
  maxFalseApprove?: number;
  progress: boolean;
}

/**
 * `agent-judge eval <corpus.jsonl>`: runs every case through the full judge (rules, evidence,
 * model) and prints a confusion matrix, per-verdict precision and recall, the false-approve rate
 * and latency. The progress bar goes to stderr so `--json` output stays clean on stdout.
 */
export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description('evaluate the judge on a JSONL corpus of {"proposal","expected","tags"} lines')
    .argument('<corpus>', 'JSONL file, one case per line')
    .option(
      '--model <name>',
      'judge model (default: policy spec.judge.model, $AGENT_JUDGE_MODEL, or deepseek-v4-pro:cloud)',
    )
    .option('--host <url>', 'Ollama host (default: policy spec.judge.host, $OLLAMA_HOST, or http://127.0.0.1:11434)')
    .option('--policy <file>', 'CompliancePolicy YAML (default: $AGENT_JUDGE_POLICY or policies/default.yaml)')
    .option('--base-dir <dir>', 'directory relative paths in the policy and proposals resolve against (default: cwd)')
    .addOption(
      new Option('--concurrency <n>', 'cases judged at once').argParser(positiveInt('--concurrency')).default(1),
    )
    .addOption(
      new Option('--timeout <ms>', 'model budget per case, in ms (default: policy spec.judge.timeoutMs)').argParser(
        positiveInt('--timeout'),
      ),
    )
    .option('--rules-only', 'judge without the model (the deterministic baseline)')
    .addOption(
      new Option('--max-false-approve <rate>', 'exit 1 when the false-approve rate is above this (0..1)').argParser(
        rate,
      ),
    )
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the report as JSON')
    .action(async (corpusPath: string, opts: EvalOptions) => {
      let text: string;
      try {
        text = await readFile(corpusPath, 'utf8');
      } catch (err) {
        throw new BadInputError(`eval: cannot read ${corpusPath} (${(err as Error).message})`);
      }
      const cases = parseCorpus(text, corpusPath);
      const baseDir = resolve(opts.baseDir ?? process.cwd());
      const policy = await loadPolicy({ path: opts.policy, baseDir });
      const env = opts.rulesOnly ? { ...process.env, AGENT_JUDGE_MODEL: 'off' } : process.env;
      const built = createJudgeDepsFromEnv(policy, env, {
        baseDir,
        model: opts.rulesOnly ? undefined : opts.model,
        host: opts.host,
        force: !opts.rulesOnly,
      });
      const deps: JudgeDeps = { ...built, baseDir, ...(opts.timeout ? { modelTimeoutMs: opts.timeout } : {}) };

      const bar = opts.progress
        ? new SingleBar({
            stream: process.stderr,
            format: 'judging {bar} {value}/{total} | {last}',
            hideCursor: true,
            clearOnComplete: true,
          })
        : null;
      bar?.start(cases.length, 0, { last: '' });
      let report;
      try {
        report = await runEval(cases, {
          policy,
          deps,
          concurrency: opts.concurrency,
          onResult: (r, done) => bar?.update(done, { last: `${r.id}: ${r.outcome}` }),
        });
      } finally {
        bar?.stop();
      }
      if (opts.json) {
        printJson({
          ...report,
          results: report.results.map((r) => ({
            id: r.id,
            expected: r.expected,
            outcome: r.outcome,
            latency_ms: r.latencyMs,
            tags: r.tags,
            verdict: r.verdict,
          })),
        });
      } else {
        process.stdout.write(formatEvalReport(report));
      }
      if (opts.maxFalseApprove !== undefined && (report.falseApproveRate ?? 0) > opts.maxFalseApprove) {
        process.stderr.write(
          `agent-judge: false-approve rate ${report.falseApproveRate} ` +
            `is above --max-false-approve ${opts.maxFalseApprove}\n`,
        );
        process.exitCode = 1;
      }
    });
}
