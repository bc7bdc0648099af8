/**
 * `agent-judge review` (durable audit reviews, seed 000 §6) and `agent-judge report` (the metrics, REJECTs,
 * escalations and review progress of a period). Thin: reviews live in src/client/reviews.ts and their workflow;
 * reports are built from `audit export` records by src/audit/report.ts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { Argument, type Command, Option } from 'commander';
import type { AuditRecord } from '../audit';
import type { KeyFile } from '../contracts/identity';
import { BadInputError } from '../contracts/errors';
import type { CompliancePolicy } from '../contracts/policy';
import { refusalError } from '../contracts/refusal';
import { isoWeekOf, monthOf, periodRange, refusePeriod, type ReviewKind, type ReviewStatus } from '../contracts/review';
import { DEFAULT_TASK_QUEUES } from '../names';
import { printJson } from './io';
import { parseSince, withClient } from './shared';

const DAY_MS = 86_400_000;

async function policyFrom(path: string | undefined): Promise<CompliancePolicy> {
  const { loadPolicy } = await import('../policy/load');
  // An empty AGENT_JUDGE_POLICY counts as unset, as for every variable.
  return loadPolicy({ path: path ?? (await import('../config/env')).loadEnv().AGENT_JUDGE_POLICY });
}

/** The period a command means: the flag, else the last ended ISO week / month. */
function periodFor(kind: ReviewKind, opts: { week?: string; month?: string }, nowMs = Date.now()): string {
  if (kind === 'weekly') {
    if (opts.month !== undefined) throw new BadInputError('--month: a weekly review takes --week (an ISO week)');
    const week = opts.week ?? isoWeekOf(nowMs - 7 * DAY_MS);
    const bad = refusePeriod('weekly', week);
    if (bad) throw refusalError(bad, '--');
    return week;
  }
  if (opts.week !== undefined) throw new BadInputError('--week: a spot-check takes --month (such as 2026-11)');
  const d = new Date(nowMs);
  const month = opts.month ?? monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
  const bad = refusePeriod('spot-check', month);
  if (bad) throw refusalError(bad, '--');
  return month;
}

/** The review as printed: every field, the candidates as a count unless asked for (`--full`). */
function printable(r: ReviewStatus, full = false): unknown {
  return full ? r : { ...r, candidates: r.candidates.length };
}

export function registerReviewCommands(program: Command): void {
  const review = program
    .command('review')
    .description('durable audit reviews: weekly REJECTs and escalations, monthly spot-checks of APPROVEs');

  review
    .command('open')
    .description('open the review of a period (a weekly review already open takes in new REJECTs and escalations)')
    .addArgument(new Argument('<kind>', 'weekly or spot-check').choices(['weekly', 'spot-check']))
    .option('--week <week>', 'ISO week of a weekly review, such as 2026-W48 (default: the last ended week)')
    .option('--month <month>', 'month of a spot-check, such as 2026-11 (default: the last ended month)')
    .option('--policy <file>', 'policy file (default: $AGENT_JUDGE_POLICY or the default policy)')
    .option('--task-queue <name>', 'task queue of the workflow worker', DEFAULT_TASK_QUEUES.workflow)
    .option('--full', 'print every candidate, not their count')
    .action(
      async (
        kind: ReviewKind,
        opts: { week?: string; month?: string; policy?: string; taskQueue: string; full?: boolean },
        cmd: Command,
      ) => {
        const period = periodFor(kind, opts);
        const policy = await policyFrom(opts.policy);
        const { gatherCandidates } = await import('../audit/review-candidates');
        const { openReview } = await import('../client/reviews');
        await withClient(cmd, async (client) => {
          const candidates = await gatherCandidates(client, kind, period, policy);
          printJson(
            printable(await openReview(client, kind, period, candidates, { taskQueue: opts.taskQueue }), opts.full),
          );
        });
      },
    );

  review
    .command('mark')
    .description('mark one proposal of a review correct or wrong, as a reviewer listed in the policy')
    .argument('<review>', 'the review id, such as review-weekly-2026-W48')
    .argument('<proposal>', 'the proposal_id (or the workflow id)')
    .addArgument(new Argument('<mark>', 'correct or wrong').choices(['correct', 'wrong']))
    .addOption(new Option('--should-be <verdict>', 'what the verdict should have been').choices(['approve', 'reject']))
    .requiredOption('--reviewer <id>', 'your reviewer id, as listed in the policy')
    .option('--note <text>', 'why (kept in the review)')
    .option('--key <file>', 'sign the mark with your key file (required when the policy lists a key for you)')
    .action(
      async (
        reviewText: string,
        proposal: string,
        mark: string,
        opts: { shouldBe?: string; reviewer: string; note?: string; key?: string },
        cmd: Command,
      ) => {
        const { markReview, reviewIdOf } = await import('../client/reviews');
        const reviewId = reviewIdOf(reviewText);
        if (opts.shouldBe !== undefined && mark !== 'wrong')
          throw new BadInputError('--should-be: only for a wrong mark');
        let key: KeyFile | undefined;
        if (opts.key) {
          const { loadKeyFile } = await import('../identity/keys');
          key = await loadKeyFile(opts.key);
        }
        await withClient(cmd, async (client) => {
          const r = await markReview(
            client,
            reviewId,
            { proposal, mark, should_be: opts.shouldBe, reviewer: opts.reviewer, note: opts.note },
            { key },
          );
          printJson(printable(r));
        });
      },
    );

  review
    .command('status')
    .description('print a review: seed, sample, marks and figures (--verify re-derives the sample and candidates)')
    .argument('<review>', 'the review id, such as review-spot-check-2026-11')
    .option('--verify', 're-derive the sample from the recorded seed and check the candidates against audit export')
    .option('--policy <file>', 'policy file, for --verify (default: $AGENT_JUDGE_POLICY or the default policy)')
    .option('--full', 'print every candidate, not their count')
    .action(async (reviewText: string, opts: { verify?: boolean; policy?: string; full?: boolean }, cmd: Command) => {
      const { reviewIdOf, reviewStatus, verifyReview } = await import('../client/reviews');
      const reviewId = reviewIdOf(reviewText);
      await withClient(cmd, async (client) => {
        const r = await reviewStatus(client, reviewId);
        if (!opts.verify) return printJson(printable(r, opts.full));
        const policy = await policyFrom(opts.policy);
        const { gatherCandidates } = await import('../audit/review-candidates');
        const fresh = await gatherCandidates(client, r.kind, r.period, policy);
        const verification = verifyReview(r, fresh);
        printJson({ ...(printable(r, opts.full) as object), verification });
        if (!verification.ok) process.exitCode = 1;
      });
    });

  review
    .command('close')
    .description('close a review (a weekly review takes in the latest REJECTs and escalations first); prints its rates')
    .argument('<review>', 'the review id')
    .option('--policy <file>', 'policy file (default: $AGENT_JUDGE_POLICY or the default policy)')
    .option('--full', 'print every candidate, not their count')
    .action(async (reviewText: string, opts: { policy?: string; full?: boolean }, cmd: Command) => {
      const { closeReview, reviewIdOf, reviewStatus } = await import('../client/reviews');
      const reviewId = reviewIdOf(reviewText);
      await withClient(cmd, async (client) => {
        const r = await reviewStatus(client, reviewId);
        let fresh = null;
        if (r.kind === 'weekly' && r.state === 'open') {
          const { gatherCandidates } = await import('../audit/review-candidates');
          fresh = await gatherCandidates(client, r.kind, r.period, await policyFrom(opts.policy));
        }
        printJson(printable(await closeReview(client, reviewId, fresh), opts.full));
      });
    });
}

/** The range a report covers: `--since` up to now, an ISO week, or a month. */
function reportRange(
  kind: 'summary' | 'weekly' | 'spot-check',
  opts: { since?: string; week?: string; month?: string },
  nowMs: number,
): { period: string; range: { start: number; end: number } } {
  if (kind === 'summary') {
    if (opts.week !== undefined || opts.month !== undefined)
      throw new BadInputError('--week/--month: a summary report takes --since');
    const since = opts.since ?? '7d';
    return { period: `since ${since}`, range: { start: parseSince(since, nowMs), end: nowMs } };
  }
  if (opts.since !== undefined)
    throw new BadInputError(`--since: a ${kind} report covers --${kind === 'weekly' ? 'week' : 'month'}`);
  const period = periodFor(kind, opts, nowMs);
  return { period, range: periodRange(kind, period) };
}

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('the seven judge metrics, REJECTs, escalations and review progress of a period (md, json or html)')
    .addArgument(new Argument('<kind>', 'summary, weekly or spot-check').choices(['summary', 'weekly', 'spot-check']))
    .option('--since <duration>', 'summary: the window, a duration ago or an ISO time (default 7d)')
    .option('--week <week>', 'weekly: the ISO week, such as 2026-W48 (default: the last ended week)')
    .option('--month <month>', 'spot-check: the month, such as 2026-11 (default: the last ended month)')
    .addOption(new Option('--format <format>', 'output format').choices(['md', 'json', 'html']).default('md'))
    .option('--out <file>', 'write the report to this file instead of stdout')
    .option('--check', 'exit 3 when a metric is past its alert threshold (for cron or CI)')
    .option('--input <file>', 'read `audit export` JSONL from this file instead of the server (no review figures)')
    .option('--policy <file>', 'policy with the targets and thresholds (default: $AGENT_JUDGE_POLICY or the default)')
    .action(
      async (
        kind: 'summary' | 'weekly' | 'spot-check',
        opts: {
          since?: string;
          week?: string;
          month?: string;
          format: 'md' | 'json' | 'html';
          out?: string;
          check?: boolean;
          input?: string;
          policy?: string;
        },
        cmd: Command,
      ) => {
        const nowMs = Date.now();
        const { period, range } = reportRange(kind, opts, nowMs);
        const policy = await policyFrom(opts.policy);
        const { buildReport, renderMarkdown, reviewCounts } = await import('../audit/report');
        const previousStart = range.start - (range.end - range.start);
        let records;
        let memos: Parameters<typeof reviewCounts>[0] = [];
        let review: ReviewStatus | null = null;
        if (opts.input) {
          records = await readExport(opts.input);
        } else {
          const { exportAudit } = await import('../audit');
          const { listReviews, reviewStatus } = await import('../client/reviews');
          const { reviewWorkflowId } = await import('../contracts/review');
          records = await withClient(cmd, async (client) => {
            const out = [];
            for await (const r of exportAudit(client, { sinceMs: Math.max(0, nowMs - previousStart) + 1000 }))
              out.push(r);
            const reviews = await listReviews(client);
            memos = reviews.map((r) => r.memo);
            if (kind !== 'summary') {
              const id = reviewWorkflowId(kind, period);
              if (reviews.some((r) => r.review_id === id)) review = await reviewStatus(client, id);
            }
            return out;
          });
        }
        const report = buildReport({
          kind,
          period,
          range,
          records,
          policy,
          reviews: {
            current: reviewCounts(memos, range),
            previous: reviewCounts(memos, { start: previousStart, end: range.start }),
          },
          review,
          now: nowMs,
        });
        let text: string;
        if (opts.format === 'json') text = `${JSON.stringify(report, null, 2)}\n`;
        else if (opts.format === 'html') text = (await import('../audit/report-html')).renderHtml(report);
        else text = renderMarkdown(report);
        if (opts.out) await writeFile(opts.out, text);
        else process.stdout.write(text);
        if (opts.check && report.breached.length > 0) {
          process.stderr.write(`agent-judge: alert thresholds breached: ${report.breached.join(', ')}\n`);
          process.exitCode = 3;
        }
      },
    );
}

/** `audit export` JSONL from a file: one record a line; a bad line is bad input naming the line. */
async function readExport(path: string): Promise<AuditRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new BadInputError(`--input: cannot read ${path} (${(err as Error).message})`);
  }
  const { AuditRecordSchema } = await import('../audit/report-input');
  return text
    .split('\n')
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter((l) => l.line !== '')
    .map(({ line, n }) => {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        throw new BadInputError(`--input: line ${n} is not JSON (${(err as Error).message})`);
      }
      const parsed = AuditRecordSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new BadInputError(`--input: line ${n}: ${issue.path.join('.') || 'record'}: ${issue.message}`);
      }
      return parsed.data as unknown as AuditRecord;
    });
}
