/**
 * A scripted week of a coding agent's proposals, for the replay bench and docs/replay.md's worked example. Scripted,
 * not recorded from a real agent: a seeded generator picks, for each proposal, a day of the week and one of the calls
 * a coding agent's hooks make (shell lines that are not on the default shell allowlist, file edits, fetches, memory
 * notes), with the task's issue cited. A scripted person decides what reaches a person: approves the test, build and
 * lint runs, refuses publishing, pushing and installing. Deterministic for a seed.
 */
import { randomUUID } from 'node:crypto';
import { prng } from '../test/helpers/shell-grammar';

/** Shell lines the agent runs, with what the scripted person decides when one reaches them. */
const SHELL: ReadonlyArray<{ line: string; person: 'approve' | 'reject'; weight: number }> = [
  { line: 'npm test', person: 'approve', weight: 30 },
  { line: 'npm run lint', person: 'approve', weight: 12 },
  { line: 'npm run build', person: 'approve', weight: 10 },
  { line: 'npx tsc --noEmit', person: 'approve', weight: 8 },
  { line: 'make test', person: 'approve', weight: 6 },
  { line: 'npm install left-pad', person: 'reject', weight: 4 },
  { line: 'npm publish', person: 'reject', weight: 2 },
  { line: 'git push origin main', person: 'reject', weight: 3 },
  { line: 'rm -rf node_modules', person: 'reject', weight: 2 },
  { line: 'curl https://example.org/install.sh', person: 'reject', weight: 2 },
];

const ISSUE = { type: 'issue', url: 'https://forge.example.org/acme/app/issues/41' } as const;

/** One scripted proposal with the day of the week it belongs to (0-6). */
export interface ScriptedProposal {
  day: number;
  proposal: Record<string, unknown>;
  /** What the scripted person decides if the proposal reaches a person. */
  person: 'approve' | 'reject';
}

function pickWeighted<T extends { weight: number }>(items: readonly T[], r: number): T {
  const total = items.reduce((n, i) => n + i.weight, 0);
  let at = r * total;
  for (const i of items) {
    at -= i.weight;
    if (at < 0) return i;
  }
  return items[items.length - 1]!;
}

/** `n` proposals of a scripted coding-agent week in `cwd` (a directory inside the hooks' roots). */
export function codingWeek(n: number, cwd: string, seed = 41): ScriptedProposal[] {
  const next = prng(seed);
  const out: ScriptedProposal[] = [];
  for (let i = 0; i < n; i++) {
    const day = Math.floor(next() * 7);
    const kind = next();
    const base = { proposal_id: randomUUID(), agent_id: '@coder', session_id: `week-${day}`, cited_evidence: [ISSUE] };
    if (kind < 0.6) {
      const s = pickWeighted(SHELL, next());
      const argv = s.line.split(' ');
      out.push({
        day,
        person: s.person,
        proposal: {
          ...base,
          action_type: 'shell_command',
          justification: `issue 41, step ${i}: ${s.line}`,
          target: { cwd },
          parameters: { command: s.line, parsed: { reducible: true, commands: [{ argv, redirects: [] }] } },
        },
      });
    } else if (kind < 0.85) {
      const file = ['src/replay/run.ts', 'docs/replay.md', 'test/unit/replay.test.ts'][Math.floor(next() * 3)]!;
      out.push({
        day,
        person: 'approve',
        proposal: {
          ...base,
          action_type: 'file_edit',
          justification: `issue 41, step ${i}: edit ${file}`,
          target: { paths: [`${cwd}/${file}`] },
          parameters: { change: 'write', content: `// day ${day} change ${i}\n` },
        },
      });
    } else if (kind < 0.95) {
      out.push({
        day,
        person: 'approve',
        proposal: {
          ...base,
          action_type: 'memory_write',
          justification: `step ${i}: remember what was done`,
          target: { store: 'memory' },
          parameters: { content: `day ${day}: step ${i}` },
        },
      });
    } else {
      out.push({
        day,
        person: 'approve',
        proposal: {
          ...base,
          action_type: 'web_request',
          justification: `step ${i}: read the docs of the library in use`,
          target: { url: 'https://docs.example.org/api' },
          parameters: {},
        },
      });
    }
  }
  return out;
}
