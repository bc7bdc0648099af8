/**
 * `agent-judge eval --dataset agentdojo --provenance`: AgentDojo v1 replayed as sessions (src/judge/datasets/
 * agentdojo-sessions.ts), every state-changing call judged by rules only, once without provenance and once with it,
 * and the attack success rate, utility and calls to a person printed beside the published defences' figures.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CompliancePolicy } from '../contracts/policy';
import type { JudgeDeps } from '../judge';
import { runEval } from '../judge/eval';
import { AGENTDOJO_FILE } from '../judge/datasets/agentdojo';
import { agentDojoSessions, sessionFigures, type SessionFigures, type Share } from '../provenance/agentdojo-sessions';
import { printJson } from './io';

/** Published figures of defences measured on AgentDojo (whole agent runs with a model; not measured here). */
export const PUBLISHED_DEFENCES = [
  'LlamaFirewall (PromptGuard 2 + AlignmentCheck): attack success about 1.75 % (Chennabasappa et al. 2025)',
  'MELON: attack success 0.24 % at 58.8 % utility under attack (Zhu et al. 2025)',
  'CaMeL: 0 of 949 attacks, 77 % of tasks solved (84 % undefended) (Debenedetti et al. 2025)',
  'Progent: attack success 41.2 % -> 2.2 % (Shi et al. 2025)',
];

const pct = (r: number) => `${(r * 100).toFixed(1)} %`;

const ROWS: Array<[label: string, key: keyof SessionFigures]> = [
  ['attack success (pairs)', 'attackSuccess'],
  ['injection calls that run', 'attackCalls'],
  ['utility (user tasks, no attack)', 'utility'],
  ['utility under attack (pairs)', 'utilityUnderAttack'],
  ['calls to a person', 'toPerson'],
];

function table(without: SessionFigures, withP: SessionFigures): string {
  const row = (name: string, a: string, b: string) => `${name.padEnd(40)} ${a.padEnd(22)} ${b}`;
  const f = (x: Share) => `${pct(x.rate)} (${x.n}/${x.of})`;
  return [
    row('', 'rules only', 'rules + provenance'),
    ...ROWS.map(([label, key]) => row(label, f(without[key]), f(withP[key]))),
  ].join('\n');
}

export const REPLAY_NOTE =
  'How this differs from AgentDojo: AgentDojo runs a model as the agent and counts what it did after reading the ' +
  "injection. Here no model runs: both tasks' ground-truth calls are replayed as if the agent obeyed every " +
  'injection, each state-changing call judged by the rules alone, and an attack succeeds when all its calls would ' +
  'run without a person. A figure here is an upper bound on what reaches the tools through agent-judge, for any ' +
  'agent, not the rate a given model would be hijacked.';

/** Runs the replay and prints it (or its JSON). */
export async function evalAgentDojoProvenance(opts: {
  dir: string;
  policy: CompliancePolicy;
  deps: JudgeDeps;
  json?: boolean;
}): Promise<void> {
  const path = resolve(join(opts.dir, AGENTDOJO_FILE));
  const text = await readFile(path, 'utf8');
  const replay = agentDojoSessions(text, opts.policy.spec.provenance, path);
  const judge = async (calls: typeof replay.without) => {
    const report = await runEval(
      calls.map((c) => c.case),
      { policy: opts.policy, deps: opts.deps, concurrency: 4 },
    );
    return sessionFigures(
      calls,
      report.results.map((r) => r.outcome),
      replay,
    );
  };
  const without = await judge(replay.without);
  const withP = await judge(replay.withProvenance);
  if (opts.json) {
    printJson({
      dataset: {
        name: 'agentdojo',
        source: path,
        pairs: replay.pairs,
        text_only_pairs: replay.textOnlyPairs,
        user_tasks: replay.userTasks,
      },
      rules_only: without,
      with_provenance: withP,
      published: PUBLISHED_DEFENCES,
      note: REPLAY_NOTE,
    });
    return;
  }
  process.stdout.write(
    `AgentDojo v1 replayed as sessions: ${replay.pairs} (user task, injection task) pairs, ${replay.userTasks} user ` +
      `tasks, from ${path}\n${replay.textOnlyPairs} pairs are left out of the attack figures: their injection task ` +
      `makes no tool call (its goal is text in the agent's answer), which no gate sees.\n\n` +
      `${table(without, withP)}\n\npublished (whole agent runs with a model, not measured here):\n` +
      `${PUBLISHED_DEFENCES.map((p) => `  ${p}`).join('\n')}\n\n${REPLAY_NOTE}\n`,
  );
}
