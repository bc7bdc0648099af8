/**
 * `agent-judge policy show|check`: what a policy file amounts to once laid over the default (src/policy/layers.ts).
 * `show` prints the effective policy with where each value comes from; `check` validates a file and lists what it
 * changes against the default. Neither needs Temporal; `policy workers` (src/cli/policy-workers.ts) asks it.
 */
import { relative } from 'node:path';
import type { Command } from 'commander';
import { Document, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import { policyDigest } from '../contracts/capability';
import { loadPolicyLayers, type LoadedPolicy } from '../policy/load';
import { changesFromDefault, originOf, type Origin, type PolicyChange } from '../policy/layers';
import { printJson } from './io';
import { processEnv } from '../config/process-env';

/** A path as a person reads it: relative to the working directory when inside it. */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** One origin in a few words: `mine.yaml:12`, `default`, `built-in`. */
export function describeOrigin(origin: Origin): string {
  if (origin.from === 'schema') return 'built-in';
  if (origin.from === 'default') return 'default';
  return `${shortPath(origin.path)}${origin.line === undefined ? '' : `:${origin.line}`}`;
}

/** Every leaf of the effective policy with its origin, by dotted path (lists by index). */
function originsOf(loaded: LoadedPolicy, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const extra = (env.AGENT_JUDGE_APPROVERS ?? '').trim() !== '';
  const walk = (value: unknown, at: string[]) => {
    if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...at, k]);
      return;
    }
    const key = at.join('.');
    out[key] = describeOrigin(originOf(loaded.layers, at));
    // AGENT_JUDGE_APPROVERS adds to the file's list: an approver the file does not list comes from there.
    if (extra && key.startsWith('spec.escalation.approvers.') && out[key] === 'built-in')
      out[key] = 'AGENT_JUDGE_APPROVERS';
  };
  walk(loaded.policy, []);
  return out;
}

/** The effective policy as YAML, each value followed by a comment naming its origin. */
export function renderEffectivePolicy(loaded: LoadedPolicy, env: NodeJS.ProcessEnv = processEnv()): string {
  const origins = originsOf(loaded, env);
  const doc = new Document(loaded.policy);
  const annotate = (node: unknown, at: string[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key)) continue;
        const path = [...at, String(pair.key.value)];
        const origin = ` ${origins[path.join('.')] ?? origins[[...path, '0'].join('.')] ?? 'built-in'}`;
        if (isScalar(pair.value)) pair.value.comment = origin;
        else if (
          (isMap(pair.value) && pair.value.items.length === 0) ||
          (isSeq(pair.value) && pair.value.items.every((item) => isScalar(item)))
        ) {
          // Empty mappings and lists of scalars on one line: a list has one origin (lists replace whole).
          pair.value.flow = true;
          (pair.value as Node).comment = origin;
        } else annotate(pair.value, path);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const path = [...at, String(i)];
        if (isScalar(item)) item.comment = ` ${origins[path.join('.')] ?? 'built-in'}`;
        else annotate(item, path);
      });
    }
  };
  annotate(doc.contents, []);
  const user = loaded.layers.user;
  const here = (path: string) => shortPath(path);
  const header = [
    user
      ? `The effective policy: ${here(user.path)} laid over the default policy (${here(loaded.layers.default.path)}).`
      : `The effective policy: the default policy (${here(loaded.layers.default.path)}) as it is.`,
    `Each value names where it comes from: ${user ? `${here(user.path)}:LINE, ` : ''}default, ` +
      "or built-in (the schema's own default).",
    'Mappings merge key by key; a list in a file replaces the default list whole; null removes a default key.',
    `Relative paths are resolved against ${process.cwd()}.`,
    `policy_sha256 here: ${policyDigest(loaded.policy)}`,
  ];
  doc.commentBefore = header.map((l) => ` ${l}`).join('\n');
  return doc.toString({ lineWidth: 0 });
}

/** A value in one short phrase for `policy check` (lists and mappings by size past a few characters). */
function brief(value: unknown): string {
  if (value === undefined) return '(not set)';
  if (value === null) return '(removed)';
  const json = JSON.stringify(value);
  if (json.length <= 48) return json;
  if (Array.isArray(value)) return `${value.length} ${value.length === 1 ? 'entry' : 'entries'}`;
  if (typeof value === 'object') return `${Object.keys(value).length} keys`;
  return `${json.slice(0, 45)}...`;
}

/** `policy check`'s lines: what the file changes, then what it repeats of the default. */
export function renderChanges(loaded: LoadedPolicy): string {
  const file = shortPath(loaded.path);
  if (!loaded.layers.user) return `${file}: the default policy itself: valid\n`;
  const all = changesFromDefault(loaded.layers).filter(
    (c) => !((c.path === 'apiVersion' || c.path === 'kind') && c.same),
  );
  const changed = all.filter((c) => !c.same);
  const same = all.filter((c) => c.same);
  const width = Math.max(0, ...all.map((c) => c.path.length));
  const row = (c: PolicyChange) => {
    const list = Array.isArray(c.value) && c.default !== undefined ? ' (replaces the default list)' : '';
    const what = c.same ? brief(c.value) : `${brief(c.default)} -> ${brief(c.value)}${list}`;
    return `  ${c.path.padEnd(width)}  ${what}${c.line === undefined ? '' : `  (line ${c.line})`}`;
  };
  return [
    `${file}: valid (CompliancePolicy "${loaded.policy.metadata.name}"), laid over the default policy; ` +
      `it changes ${changed.length} value${changed.length === 1 ? '' : 's'}:`,
    ...(changed.length > 0 ? changed.map(row) : ['  (none: the effective policy is the default)']),
    ...(same.length > 0 ? ['Same as the default (these lines can be left out):', ...same.map(row)] : []),
    '',
  ].join('\n');
}

export function registerPolicyCommands(program: Command): void {
  const policy = program
    .command('policy')
    .description(
      'the effective policy: what a file changes against the default, where each value comes from; policy tests',
    );

  policy
    .command('show')
    .description('print the effective policy (the file laid over the default), each value with where it comes from')
    .option('--policy <file>', 'the CompliancePolicy file (default: $AGENT_JUDGE_POLICY or the default policy)')
    .option('--json', 'print {path, policy_sha256, policy, origins} as JSON')
    .action(async (opts: { policy?: string; json?: boolean }) => {
      const loaded = await loadPolicyLayers({ path: opts.policy });
      if (opts.json) {
        printJson({
          path: loaded.path,
          policy_sha256: policyDigest(loaded.policy),
          policy: loaded.policy,
          origins: originsOf(loaded, processEnv()),
        });
      } else process.stdout.write(renderEffectivePolicy(loaded));
    });

  policy
    .command('check')
    .description('validate a policy file and list what it changes against the default (exit 2 when invalid)')
    .argument('<file>', 'the CompliancePolicy file')
    .option('--json', 'print {path, valid, changes} as JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      const loaded = await loadPolicyLayers({ path: file });
      if (opts.json) printJson({ path: loaded.path, valid: true, changes: changesFromDefault(loaded.layers) });
      else process.stdout.write(renderChanges(loaded));
    });

  policy
    .command('test')
    .description('run a cases file against a policy like unit tests: a diff per failing case, exit 1 (docs/replay.md)')
    .argument(
      '<cases>',
      'YAML or JSON: cases: [{name, proposal, expect: {tier?, verdict: APPROVE|REJECT|person|CLARIFY, rule?}}]',
    )
    .option('--policy <file>', 'the CompliancePolicy file (default: $AGENT_JUDGE_POLICY or the default policy)')
    .option('--json', 'print every case with what the policy decided as JSON')
    .action(async (file: string, opts: { policy?: string; json?: boolean }) => {
      const { loadCases, renderCaseResults, runCases } = await import('../replay/cases');
      const loaded = await loadPolicyLayers({ path: opts.policy });
      const results = await runCases(await loadCases(file), loaded.policy, process.cwd());
      if (opts.json) printJson({ policy: loaded.path, cases: results });
      else process.stdout.write(renderCaseResults(shortPath(file), results));
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}
