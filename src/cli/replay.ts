/**
 * `agent-judge replay`: re-decide recorded proposals under a candidate policy and/or judge model, with no side effect
 * (docs/replay.md). Reads history with the audit's reader (server, then the hash-checked archive), decides with the
 * live code (src/replay), and prints text, JSON or an HTML report.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { type Command, Option } from 'commander';
import { BadInputError } from '../contracts/errors';
import { policyDigest } from '../contracts/capability';
import { OUTCOMES } from '../replay/decide';
import type { ModelPlan } from '../replay/run';
import { printJson } from './io';
import { parseSince, withClient } from './shared';
import { processEnv } from '../config/process-env';

interface ReplayFlags {
  policy?: string;
  recordedPolicy?: string;
  since: string;
  until?: string;
  agent?: string[];
  actionType?: string[];
  tier?: string[];
  verdict?: string[];
  id?: string[];
  archive?: string;
  baseDir?: string;
  model?: string;
  host?: string;
  baseUrl?: string;
  format?: string;
  price?: string;
  yes?: boolean;
  json?: boolean;
  html?: string;
  limit: string;
  check?: boolean;
}

const list = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** Asks on the terminal; on anything else the model is not called without --yes. */
async function confirmOnTerminal(plan: ModelPlan, yes: boolean): Promise<boolean> {
  const tokens =
    plan.estimated_tokens === null ? 'an unknown number of tokens' : `about ${plan.estimated_tokens} tokens`;
  const cost = plan.estimated_cost === null ? '' : `, estimated cost ${plan.estimated_cost.toFixed(4)}`;
  const what = `${plan.proposals} proposal(s) need the candidate model ${plan.model} (${tokens}${cost})`;
  if (yes) {
    process.stderr.write(`agent-judge: ${what}: calling it (--yes)\n`);
    return true;
  }
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    process.stderr.write(`agent-judge: ${what}; not called: re-run with --yes to call it\n`);
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${what}. Call it? [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .description(
      're-decide recorded proposals under a candidate policy or judge model, with no side effect (docs/replay.md)',
    )
    .option('--policy <file>', 'the candidate CompliancePolicy file')
    .option(
      '--recorded-policy <file>',
      'the policy the proposals were decided under, for its thresholds and archive ' +
        '(default: $AGENT_JUDGE_POLICY or the default)',
    )
    .option('--since <when>', 'proposals started since: a duration ago (30m, 24h, 7d) or an ISO time', '7d')
    .option('--until <when>', 'proposals started before: a duration ago or an ISO time')
    .option('--agent <ids>', 'only these agents (comma-separated, repeatable)', list)
    .option('--action-type <types>', 'only these action types (comma-separated, repeatable)', list)
    .option('--tier <tiers>', 'only these recorded tiers (comma-separated, repeatable)', list)
    .option('--verdict <outcomes>', `only these recorded outcomes: ${OUTCOMES.slice(0, 4).join(', ')}`, list)
    .option('--id <ids>', 'only these proposal or workflow ids (comma-separated, repeatable)', list)
    .option(
      '--archive <dir>',
      "the history archive for runs past retention (default: the recorded policy's, if present)",
    )
    .option('--base-dir <dir>', "where the workers ran: the policies' relative paths resolve against it (default: .)")
    .option('--model <name>', 'the candidate judge model (calls it, only for proposals that reach the model)')
    .option('--host <url>', 'the candidate model on this Ollama host')
    .option('--base-url <url>', 'the candidate model behind this OpenAI-compatible API')
    .addOption(
      new Option('--format <format>', 'the OpenAI-compatible response format').choices(['json_schema', 'json_object']),
    )
    .option('--price <amount>', "the candidate model's price per million tokens, for the estimate shown before calling")
    .option('--yes', 'call the candidate model without asking (needed when not on a terminal)')
    .option('--json', 'print the replay as JSON')
    .option('--html <file>', 'also write an HTML report with a chart of the metric shifts')
    .option('--limit <n>', 'changed proposals printed on the terminal', '50')
    .option('--check', 'exit 3 when the candidate approves a proposal a person rejected (for CI)')
    .action(async (opts: ReplayFlags, cmd: Command) => {
      const env = processEnv();
      const { loadPolicyLayers } = await import('../policy/load');
      const baseDir = resolve(opts.baseDir ?? '.');
      const recorded = await loadPolicyLayers({ path: opts.recordedPolicy, baseDir, env });
      const candidate = opts.policy ? await loadPolicyLayers({ path: opts.policy, baseDir, env }) : recorded;
      const bad = (opts.verdict ?? []).filter((v) => !OUTCOMES.slice(0, 4).includes(v as never));
      if (bad.length > 0)
        throw new BadInputError(`--verdict: ${bad.join(', ')} is not one of ${OUTCOMES.slice(0, 4).join(', ')}`);
      const now = Date.now();
      const sinceMs = Math.max(0, now - parseSince(opts.since, now));
      const untilMs = opts.until === undefined ? undefined : parseSince(opts.until, now, '--until');
      const price = opts.price === undefined ? undefined : Number(opts.price);
      if (price !== undefined && !(price >= 0)) throw new BadInputError('--price: expected a number >= 0');
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 0) throw new BadInputError('--limit: expected a whole number >= 0');

      let archiveDir: string | undefined;
      if (opts.archive !== undefined) {
        archiveDir = resolve(opts.archive);
        if (!existsSync(archiveDir)) throw new BadInputError(`--archive: ${archiveDir} does not exist`);
      } else if (existsSync(recorded.policy.spec.audit.archive.dir))
        archiveDir = recorded.policy.spec.audit.archive.dir;

      // The candidate model: named by a flag, or by the candidate policy's spec.judge when it differs from the
      // recorded one's. Without one, recorded answers are reused where the prompt is unchanged.
      const { createJudgeDepsFromEnv, resolveModelSettings } = await import('../judge');
      const flags = { model: opts.model, host: opts.host, baseUrl: opts.baseUrl, format: opts.format };
      const named = Object.values(flags).some((v) => v !== undefined);
      const differs =
        opts.policy !== undefined &&
        JSON.stringify(resolveModelSettings(candidate.policy, env)) !==
          JSON.stringify(resolveModelSettings(recorded.policy, env));
      const deps =
        named || differs ? createJudgeDepsFromEnv(candidate.policy, env, { ...flags, force: named, baseDir }) : {};
      const model = deps.model
        ? { client: deps.model, timeoutMs: deps.modelTimeoutMs, pricePerMillionTokens: price }
        : undefined;
      if (!opts.policy && !model) throw new BadInputError('replay needs a candidate: --policy <file> and/or --model');

      const { recordedProposals } = await import('../replay/history');
      const { replay } = await import('../replay/run');
      const selection = {
        sinceMs,
        untilMs,
        agents: opts.agent,
        actionTypes: opts.actionType,
        tiers: opts.tier,
        ids: opts.id,
      };
      const result = await withClient(cmd, (client) =>
        replay(recordedProposals(client, selection, { archiveDir }), {
          candidate: { policy: candidate.policy, baseDir },
          recordedThresholds: recorded.policy.spec.thresholds,
          outcomes: opts.verdict,
          model,
          confirm: (plan) => confirmOnTerminal(plan, opts.yes === true),
          windowMs: (untilMs ?? now) - (now - sinceMs),
        }),
      );
      const sha = (p: typeof recorded) => policyDigest(p.policy).slice(0, 12);
      const labels = {
        candidate: `${candidate.path} (sha256 ${sha(candidate)})${model ? ` with model ${model.client.model}` : ''}`,
        recorded: `${recorded.path} (sha256 ${sha(recorded)})`,
        window: `started ${new Date(now - sinceMs).toISOString()} to ${new Date(untilMs ?? now).toISOString()}`,
      };
      const { renderText, toJson } = await import('../replay/render');
      if (opts.json) printJson(toJson(result, labels));
      else process.stdout.write(renderText(result, labels, limit));
      if (opts.html) {
        const { renderReplayHtml } = await import('../replay/html');
        await writeFile(opts.html, renderReplayHtml(result, labels));
        if (!opts.json) process.stdout.write(`HTML report: ${opts.html}\n`);
      }
      const { approvesWhatAPersonRejected } = await import('../replay/compare');
      if (opts.check && result.changed.some(approvesWhatAPersonRejected)) process.exitCode = 3;
    });
}
