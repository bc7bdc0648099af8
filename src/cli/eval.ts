import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { BadInputError } from '../contracts/errors';
import { createJudgeDepsFromEnv, type JudgeDeps } from '../judge';
import {
  compareEval,
  formatEvalComparison,
  formatEvalReport,
  parseCorpus,
  runEval,
  type EvalReport,
} from '../judge/eval';
import { JudgeSettingsSchema } from '../contracts/judge-settings';
import { evenSample, loadDataset, DATASETS, DEFAULT_DATASET_DIR, type Dataset } from '../judge/datasets';
import { formatPublished } from '../judge/datasets/dataset';
import type { CompliancePolicy } from '../contracts/policy';
import { loadPolicy } from '../policy/load';
import { printJson } from './io';
import { evalAgentDojoProvenance } from './eval-provenance';
import { processEnv } from '../config/process-env';

const positiveInt = (flag: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag}: expected a positive integer`);
  return n;
};
/** The policy with rules-only approvals: the baseline a model is compared against. */
const rulesOnlyPolicy = (policy: CompliancePolicy): CompliancePolicy => ({
  ...policy,
  spec: {
    ...policy.spec,
    judge: { ...(policy.spec.judge ?? JudgeSettingsSchema.parse({})), withoutModel: 'approve' },
  },
});

const rate = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number between 0 and 1');
  return n;
};

interface EvalOptions {
  model?: string;
  host?: string;
  baseUrl?: string;
  format?: string;
  dataset?: string;
  datasetDir?: string;
  limit?: number;
  policy?: string;
  baseDir?: string;
  json?: boolean;
  concurrency: number;
  timeout?: number;
  rulesOnly?: boolean;
  provenance?: boolean;
  maxFalseApprove?: number;
  progress: boolean;
}

/**
 * `agent-judge eval <corpus.jsonl>`: runs every case through the full judge (rules, evidence,
 * model) and through the rules alone, and prints both side by side (confusion, per-verdict
 * precision and recall, false-approve rate), the cases only a model can judge apart, and latency. The
 * progress bar goes to stderr so `--json` output stays clean on stdout.
 */
export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description(
      'evaluate the judge on a JSONL corpus of {"proposal","expected","tags"} lines, or on a benchmark of the field',
    )
    .argument('[corpus]', 'JSONL file, one case per line (or --dataset)')
    .option(
      '--dataset <name>',
      `a benchmark instead of a corpus: ${Object.keys(DATASETS).join(' | ')} (install: scripts/install-datasets.sh)`,
    )
    .option('--dataset-dir <dir>', `where the benchmarks are installed (default: ${DEFAULT_DATASET_DIR})`)
    .addOption(
      new Option('--limit <n>', 'judge an evenly spaced sample of at most n cases').argParser(positiveInt('--limit')),
    )
    .option(
      '--model <name>',
      'judge model (default: policy spec.judge.model, $AGENT_JUDGE_MODEL, or deepseek-v4-pro:cloud)',
    )
    .option('--host <url>', 'Ollama host (default: policy spec.judge.host, $OLLAMA_HOST, or http://127.0.0.1:11434)')
    .option('--base-url <url>', 'judge through an OpenAI-compatible API at this base URL instead of Ollama')
    .option('--format <mode>', 'OpenAI-compatible structured output: json_schema (strict) or json_object')
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
    .option(
      '--provenance',
      'with --dataset agentdojo: replay each (user task, injection task) pair as a session, rules only, with and ' +
        'without provenance (docs/provenance.md)',
    )
    .option('--rules-only', 'judge without the model only (the deterministic baseline, rules-clean cases approved)')
    .addOption(
      new Option('--max-false-approve <rate>', 'exit 1 when the false-approve rate is above this (0..1)').argParser(
        rate,
      ),
    )
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the report as JSON')
    .action(async (corpusPath: string | undefined, opts: EvalOptions) => {
      if ((corpusPath === undefined) === (opts.dataset === undefined)) {
        throw new BadInputError('eval: give a corpus file or --dataset <name>, not both and not neither');
      }
      const baseDir = resolve(opts.baseDir ?? process.cwd());
      if (opts.provenance) {
        if (opts.dataset !== 'agentdojo') throw new BadInputError('eval: --provenance needs --dataset agentdojo');
        const dir = resolve(baseDir, opts.datasetDir ?? DEFAULT_DATASET_DIR);
        const dataset = await loadDataset('agentdojo', dir);
        const policy = rulesOnlyPolicy(dataset.policyFor(await loadPolicy({ path: opts.policy, baseDir })));
        const env = { ...processEnv(), AGENT_JUDGE_MODEL: 'off' };
        await evalAgentDojoProvenance({ dir, policy, deps: { baseDir, env }, json: opts.json });
        return;
      }
      let dataset: Dataset | undefined;
      let allCases;
      if (opts.dataset !== undefined) {
        dataset = await loadDataset(opts.dataset, resolve(baseDir, opts.datasetDir ?? DEFAULT_DATASET_DIR));
        allCases = dataset.cases;
      } else {
        let text: string;
        try {
          text = await readFile(corpusPath as string, 'utf8');
        } catch (err) {
          throw new BadInputError(`eval: cannot read ${corpusPath} (${(err as Error).message})`);
        }
        allCases = parseCorpus(text, corpusPath);
      }
      const cases = evenSample(allCases, opts.limit);
      const loaded = await loadPolicy({ path: opts.policy, baseDir });
      const policy = dataset ? dataset.policyFor(loaded) : loaded;
      const env = opts.rulesOnly ? { ...processEnv(), AGENT_JUDGE_MODEL: 'off' } : processEnv();
      const built = createJudgeDepsFromEnv(policy, opts.rulesOnly ? { AGENT_JUDGE_MODEL: 'off' } : env, {
        baseDir,
        model: opts.rulesOnly ? undefined : opts.model,
        host: opts.host,
        baseUrl: opts.rulesOnly ? undefined : opts.baseUrl,
        format: opts.format,
        force: !opts.rulesOnly,
      });
      const deps: JudgeDeps = { ...built, baseDir, ...(opts.timeout ? { modelTimeoutMs: opts.timeout } : {}) };
      const baselinePolicy = rulesOnlyPolicy(policy);
      const run = async (label: string, runPolicy: CompliancePolicy, runDeps: JudgeDeps): Promise<EvalReport> => {
        const bar = opts.progress
          ? new SingleBar({
              stream: process.stderr,
              format: `${label} {bar} {value}/{total} | {last}`,
              hideCursor: true,
              clearOnComplete: true,
            })
          : null;
        bar?.start(cases.length, 0, { last: '' });
        try {
          return await runEval(cases, {
            policy: runPolicy,
            deps: runDeps,
            concurrency: opts.concurrency,
            onResult: (r, done) => bar?.update(done, { last: `${r.id}: ${r.outcome}` }),
          });
        } finally {
          bar?.stop();
        }
      };
      const slim = (r: EvalReport) => ({
        ...r,
        results: r.results.map((x) => ({
          id: x.id,
          expected: x.expected,
          outcome: x.outcome,
          latency_ms: x.latencyMs,
          tags: x.tags,
          verdict: x.verdict,
        })),
      });

      const about = dataset
        ? {
            dataset: {
              name: dataset.name,
              title: dataset.title,
              source: dataset.source,
              cases: cases.length,
              of: allCases.length,
              published: dataset.published,
            },
          }
        : {};
      const header = dataset
        ? `${dataset.title}\n${cases.length} of ${allCases.length} cases, from ${dataset.source}\n\n`
        : '';
      const footer = dataset ? `\n${formatPublished(dataset.published)}` : '';
      let report: EvalReport;
      if (opts.rulesOnly) {
        report = await run('rules only', baselinePolicy, deps);
        if (opts.json) printJson({ ...slim(report), ...about });
        else process.stdout.write(`${header}${formatEvalReport(report)}${footer}`);
      } else {
        const rules = await run('rules only', baselinePolicy, {
          baseDir,
          ...(deps.fetch ? { fetch: deps.fetch } : {}),
          env,
        });
        report = await run('judging', policy, deps);
        const comparison = compareEval(rules, report);
        if (opts.json) {
          printJson({
            ...slim(report),
            ...about,
            rules_only: slim(rules),
            model_only: {
              ids: comparison.modelOnly.ids,
              rules: slim(comparison.modelOnly.rules),
              model: slim(comparison.modelOnly.model),
            },
            user_task: {
              ids: comparison.userTask.ids,
              rules: slim(comparison.userTask.rules),
              model: slim(comparison.userTask.model),
            },
          });
        } else {
          process.stdout.write(`${header}${formatEvalComparison(comparison)}${footer}`);
        }
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
