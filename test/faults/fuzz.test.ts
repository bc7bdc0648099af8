/**
 * A seeded fuzz of hostile proposals, sent as an attacker would: through the real CLI (`propose -`, one process
 * each, a few at a time), through the client library, and straight to the workflow past both. Whatever arrives,
 * the CLI exits 2 (bad input) or 0 (accepted), never 1, with one line on stderr; the library throws
 * BadInputError or accepts; every accepted proposal reaches a final state through the real workflow, with no
 * workflow task failure in its history; nothing escapes the working directory. The seed is printed: set
 * FUZZ_SEED to replay a run.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { submitProposal } from '../../src/client/proposals';
import { BadInputError } from '../../src/contracts/errors';
import { jsonTextDepthProblem } from '../../src/contracts/json-depth';
import { isFinalStatus } from '../../src/contracts/lifecycle';
import { parseProposal } from '../../src/contracts/proposal';
import type { OutcomeStatus, ProposalOutcome } from '../../src/contracts/status';
import { PROPOSAL_WORKFLOW_TYPE } from '../../src/names';
import { startSystem, type TestSystem } from '../helpers/system';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed15);
const CLI_CASES = 120;
const LIBRARY_CASES = 240;
const CLI_POOL = 4;
const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** Where an escaping path write would land: checked to be absent at the end. */
const ESCAPE_MARK = `agent-judge-fuzz-escape-${SEED}`;

/** mulberry32: a tiny seeded PRNG, so a failing run can be replayed exactly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Expect = 'bad' | 'ok' | 'either';
interface Case {
  kind: string;
  /** What the generator knows it must be; `either` is decided by the contract itself (see `expectedOf`). */
  expect: Expect;
  text: string;
}

function deepText(levels: number, open: string, close: string, inner = '1'): string {
  return open.repeat(levels) + inner + close.repeat(levels);
}

function generator(seed: number) {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  let serial = 0;
  const uniq = () => `${seed.toString(36)}-${(serial++).toString(36)}-${int(1e9).toString(36)}`;
  const weird = () =>
    pick([
      '\u0000',
      '\u0007bell',
      '\u202eevil',
      'zero\u200bwidth',
      '\ud83d\ude00',
      'line\nbreak',
      'tab\tand\rcr',
      '\u2028sep\u2029',
      '\ufeffbom',
      'naïve café',
      '"quotes" and \\backslashes\\',
      '<script>alert(1)</script>',
      "'; DROP TABLE proposals; --",
      '${process.env.HOME}',
      '%n%s%x',
      '\ud800',
    ]);
  const valid = (): Record<string, unknown> => {
    const type = pick(['memory_write', 'vault_note_create', 'issue_comment', 'file_write', 'custom_thing']);
    const shapes: Record<string, [Record<string, unknown>, Record<string, unknown>]> = {
      memory_write: [{ store: 'memory' }, { content: `remember ${uniq()}` }],
      vault_note_create: [{ vault: 'main', path: `notes/${uniq()}.md` }, { content: '# note' }],
      issue_comment: [{ repo: 'sscoble/speckl', issue: 1 + int(99) }, { body: 'LGTM' }],
      file_write: [{ path: `.agent-judge/workspace/${uniq()}.txt` }, { content: 'x' }],
      custom_thing: [{ thing: uniq() }, {}],
    };
    const [target, parameters] = shapes[type]!;
    return {
      proposal_id: `fuzz-${uniq()}`,
      agent_id: '@fuzz',
      action_type: type,
      target,
      parameters,
      justification: `fuzzing ${uniq()}`,
    };
  };
  const json = (v: unknown) => JSON.stringify(v);
  const nestedTarget = (levels: number) => {
    let node: Record<string, unknown> = { leaf: 1 };
    for (let i = 1; i < levels; i++) node = { a: node };
    return node;
  };
  /** JSON text `levels` deep, written out directly: `JSON.stringify` itself overflows on a few thousand levels. */
  const nestedText = (levels: number) => '{"a":'.repeat(levels - 1) + '{"leaf":1}' + '}'.repeat(levels - 1);

  const kinds: Array<() => Case> = [
    // Deep nesting, as parsed values and as raw text.
    () => {
      const p = valid();
      p.action_type = 'custom_thing';
      p.target = 'DEEP';
      return { kind: 'deep target', expect: 'bad', text: json(p).replace('"DEEP"', nestedText(pick([70, 500, 5000]))) };
    },
    () => ({ kind: 'deep raw array', expect: 'bad', text: deepText(pick([1000, 100_000]), '[', ']') }),
    () => ({ kind: 'deep raw object', expect: 'bad', text: deepText(pick([65, 20_000]), '{"a":', '}', '{}') }),
    () => {
      const p = valid();
      p.action_type = 'custom_thing';
      p.parameters = { free: nestedTarget(10) };
      return { kind: 'moderate nesting', expect: 'ok', text: json(p) };
    },
    // Huge strings and oversized bodies.
    () => {
      const p = valid();
      p.justification = 'j'.repeat(16 * 1024 + 1 + int(1000));
      return { kind: 'justification over 16 KiB', expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = 'custom_thing';
      p.target = { blob: 'x'.repeat(300 * 1024) };
      return { kind: 'body over 256 KiB', expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = 'memory_write';
      p.target = { store: 'memory' };
      p.parameters = { content: 'm'.repeat(64 * 1024 + 1) };
      return { kind: 'memory content over limit', expect: 'bad', text: json(p) };
    },
    // Prototype keys.
    () => {
      const p = valid();
      const key = pick(['__proto__', 'constructor', 'prototype']);
      return {
        kind: `${key} at top level`,
        expect: 'bad',
        text: json(p).replace(/^\{/, `{"${key}":{"polluted":true},`),
      };
    },
    () => {
      const p = valid();
      const key = pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
      p.action_type = 'custom_thing';
      return {
        kind: `${key} in a free-form target`,
        expect: 'either',
        text: json(p).replace('"target":{', `"target":{"${key}":{"polluted":true},`),
      };
    },
    () => {
      const p = valid();
      p.action_type = 'memory_write';
      p.parameters = { content: 'x' };
      return {
        kind: '__proto__ in a strict target',
        expect: 'bad',
        text: json(p).replace('"target":{', '"target":{"__proto__":{"store":"evil"},'),
      };
    },
    // Wrong types.
    () => {
      const p = valid();
      const field = pick(['proposal_id', 'agent_id', 'action_type', 'target', 'parameters', 'justification']);
      p[field] = pick([42, true, null, [], ['a'], 1.5e308, -0, { nested: 1 }, '']);
      return { kind: `wrong type for ${field}`, expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.cited_evidence = pick([{ type: 'x' }, 'url', [{ type: 'issue', url: 'javascript:alert(1)' }], [1, 2]]);
      return { kind: 'bad cited_evidence', expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.scope_claim = pick([{ max_lines: -1 }, { files_only: 'src' }, { unknown_claim: true }]);
      return { kind: 'bad scope_claim', expect: 'bad', text: json(p) };
    },
    () => ({ kind: 'not an object', expect: 'bad', text: pick(['[]', '"proposal"', '42', 'null', 'true', '{}']) }),
    () => {
      const p = valid();
      p.extra_field = 'smuggled';
      return { kind: 'unknown top-level field', expect: 'bad', text: json(p) };
    },
    // Unicode and control characters.
    () => {
      const p = valid();
      p.justification = `why ${weird()} ${uniq()}`;
      return { kind: 'unicode in justification', expect: 'either', text: json(p) };
    },
    () => {
      const p = valid();
      p.proposal_id = `id${weird()}${uniq()}`;
      return { kind: 'unicode in proposal_id', expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.agent_id = pick(['@', '@ space', '@a/b', '', '@\u0000', `@${'a'.repeat(200)}`]);
      return { kind: 'bad agent_id', expect: 'bad', text: json(p) };
    },
    // Action types.
    () => {
      const p = valid();
      p.action_type = `unknown_${int(1e6)}`;
      p.target = { anything: weird() };
      return { kind: 'unknown action type', expect: 'ok', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = pick(['Exec', 'exec ', 'rm -rf', '../exec', 'exec\u0000', '', 'a'.repeat(65), '1abc']);
      return { kind: 'malformed action type', expect: 'bad', text: json(p) };
    },
    // Path traversal targets.
    () => {
      const p = valid();
      p.action_type = pick(['file_write', 'vault_note_create']);
      const path = pick([
        `../../../../../../tmp/${ESCAPE_MARK}`,
        `/tmp/${ESCAPE_MARK}`,
        `.agent-judge/workspace/../../../../../../tmp/${ESCAPE_MARK}`,
        `notes/..%2f..%2f${ESCAPE_MARK}`,
        `~/${ESCAPE_MARK}`,
      ]);
      p.target = p.action_type === 'file_write' ? { path } : { vault: 'main', path };
      p.parameters = { content: 'escaped' };
      return { kind: 'path traversal target', expect: 'either', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = 'file_write';
      p.target = { path: `notes/${uniq()}\u0000.txt` };
      p.parameters = { content: 'x' };
      return { kind: 'NUL in a path', expect: 'bad', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = 'exec';
      p.target = { host: 'local' };
      p.parameters = { command: ['sh', '-c', `touch /tmp/${ESCAPE_MARK}`] };
      return { kind: 'exec of a shell', expect: 'either', text: json(p) };
    },
    () => {
      const p = valid();
      p.action_type = 'financial_op';
      p.target = { account: 'ops' };
      p.parameters = {
        amount: pick([-1, 0, Number.MAX_VALUE, 'NaN', 1e21, 'Infinity']),
        currency: pick(['EUR', 'eur', 'XXXX']),
      };
      return { kind: 'odd amounts', expect: 'either', text: json(p) };
    },
    // Bad JSON text.
    () => {
      const good = json(valid());
      const text = pick([
        `// hi\n${good}`,
        good.slice(0, int(good.length - 1) + 1),
        good.replace(/}$/, ',}'),
        `${good}${good}`,
        good.replace(/"/g, "'"),
        good.replace(/:/, ': NaN, "x":'),
        '',
        '\ufeff' + good,
        '{"a":1,"a":2',
        '\u0000',
        '[1,]',
      ]);
      return { kind: 'bad JSON text', expect: 'either', text };
    },
  ];
  return () => {
    const c = pick(kinds)();
    return c;
  };
}

/** What the contract says about a text, computed in this process: 2 if it is bad input, else 0. */
function expectedOf(text: string): 0 | 2 {
  if (jsonTextDepthProblem(text, 'proposal')) return 2;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 2;
  }
  try {
    parseProposal(value);
    return 0;
  } catch (err) {
    if (err instanceof BadInputError) return 2;
    throw err;
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], stdin: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: REPO,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        },
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

/** Runs `task` over `items` with at most `width` in flight. */
async function pool<T, R>(items: T[], width: number, task: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i]!, i);
      }
    }),
  );
  return out;
}

let sys: TestSystem;
const accepted: string[] = [];
const counts = {
  cli: { bad: 0, ok: 0 },
  library: { bad: 0, ok: 0 },
  raw: { refused: 0 },
  final: {} as Record<string, number>,
};

beforeAll(async () => {
  // Short waits so proposals that go to a person or back to the actor end by timeout within seconds.
  sys = await startSystem({
    spec: {
      clarify: { maxRounds: 2, timeout: '2s' },
      escalation: { timeout: '2s', approvers: ['scott'], reminderAt: 0 },
      // Approved actions the caller performs stay open until their token expires: nobody redeems here.
      capabilities: { ttl: '10s' },
    },
  });
  console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
});
afterAll(async () => {
  console.log(`fuzz counts ${JSON.stringify(counts)}`);
  await sys?.stop();
});

describe(`seeded fuzz of hostile proposals (seed ${SEED})`, () => {
  it(
    `${CLI_CASES} through the CLI: exit 2 for bad input, 0 when accepted, one stderr line`,
    { timeout: 900_000 },
    async () => {
      const next = generator(SEED);
      const cases = Array.from({ length: CLI_CASES }, next);
      const runs = await pool(cases, CLI_POOL, (c) =>
        cli(['propose', '-', '--task-queue', sys.taskQueues.workflow], c.text),
      );
      cases.forEach((c, i) => {
        const run = runs[i]!;
        const label = `${c.kind} (case ${i}): ${run.stderr.trim() || run.stdout.trim()}`.slice(0, 400);
        const expected = expectedOf(c.text);
        if (c.expect !== 'either') expect(expected, label).toBe(c.expect === 'bad' ? 2 : 0);
        expect(run.code, label).toBe(expected);
        if (run.code === 2) {
          counts.cli.bad++;
          expect(run.stderr.trimEnd().split('\n'), label).toHaveLength(1);
          expect(run.stderr, label).toMatch(/^agent-judge: proposal/);
          expect(run.stdout).toBe('');
        } else {
          counts.cli.ok++;
          const out = JSON.parse(run.stdout) as { workflow_id: string };
          accepted.push(out.workflow_id);
        }
      });
      expect(counts.cli.bad).toBeGreaterThan(0);
      expect(counts.cli.ok).toBeGreaterThan(0);
    },
  );

  it(
    `${LIBRARY_CASES} through the client library, and values no JSON text can carry`,
    { timeout: 600_000 },
    async () => {
      const next = generator(SEED ^ 0x9e3779b9);
      const inputs: Array<{ kind: string; value: unknown; expected: 0 | 2 }> = [];
      for (let i = 0; i < LIBRARY_CASES; i++) {
        const c = next();
        if (jsonTextDepthProblem(c.text, 'proposal')) {
          // The library gets the value itself: a valid proposal but for a target built 5,000 deep.
          let deep: unknown = 1;
          for (let d = 0; d < 5000; d++) deep = { a: deep };
          const value = { proposal_id: `fuzz-deep-${i}`, agent_id: '@fuzz', action_type: 'custom_thing', target: deep };
          inputs.push({ kind: c.kind, value: { ...value, parameters: {}, justification: `deep ${i}` }, expected: 2 });
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(c.text);
        } catch {
          continue;
        }
        inputs.push({ kind: c.kind, value, expected: expectedOf(c.text) });
      }
      const cyclic: Record<string, unknown> = { proposal_id: 'fuzz-cyclic', agent_id: '@fuzz', action_type: 'x_y' };
      cyclic.target = cyclic;
      inputs.push({ kind: 'cyclic value', value: cyclic, expected: 2 });
      inputs.push({ kind: 'undefined', value: undefined, expected: 2 });
      inputs.push({ kind: 'a function', value: () => 1, expected: 2 });
      inputs.push({ kind: 'a Map', value: new Map([['proposal_id', 'x']]), expected: 2 });
      for (const { kind, value, expected } of inputs) {
        const result = await submitProposal(sys.client, value, { taskQueue: sys.taskQueues.workflow }).then(
          (r) => r,
          (err: unknown) => err,
        );
        if (expected === 2) {
          expect(result, `${kind}: ${String(result)}`).toBeInstanceOf(BadInputError);
          counts.library.bad++;
        } else {
          expect(result, `${kind}: ${String(result)}`).toHaveProperty('workflow_id');
          accepted.push((result as { workflow_id: string }).workflow_id);
          counts.library.ok++;
        }
      }
    },
  );

  it(
    'straight to the workflow past the client: it refuses bad input itself, without failing a task',
    { timeout: 300_000 },
    async () => {
      // As deep as the SDK's JSON encoding sends here (its stack gives out at a few thousand levels).
      let deep: unknown = { leaf: 1 };
      for (let d = 0; d < 200; d++) deep = { a: deep };
      const hostile: unknown[] = [
        {
          proposal_id: 'raw-1',
          agent_id: '@fuzz',
          action_type: 'custom_thing',
          target: deep,
          parameters: {},
          justification: 'j',
        },
        {
          proposal_id: 'raw-2',
          agent_id: 42,
          action_type: 'memory_write',
          target: {},
          parameters: {},
          justification: 'j',
        },
        { proposal_id: 'raw-3', agent_id: '@fuzz', action_type: 'memory_write', target: { __proto__: { store: 'x' } } },
        {
          proposal_id: 'raw-4',
          agent_id: '@fuzz',
          action_type: 'Exec; rm -rf /',
          target: {},
          parameters: {},
          justification: 'j',
        },
        null,
        'just a string',
      ];
      const ids: string[] = [];
      for (const [i, proposal] of hostile.entries()) {
        const workflowId = `fuzz-raw-${SEED}-${i}-${Date.now()}`;
        await sys.client.workflow.start(PROPOSAL_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: sys.taskQueues.workflow,
          args: [{ proposal }],
        });
        ids.push(workflowId);
      }
      for (const id of ids) {
        const err = await sys.client.workflow
          .getHandle(id)
          .result()
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect(err, id).toBeInstanceOf(WorkflowFailedError);
        expect((err as WorkflowFailedError).cause?.message, id).toMatch(/^proposal/);
        await expectNoTaskFailures(id);
        counts.raw.refused++;
      }
    },
  );

  it(
    'every accepted proposal reaches a final state, with no workflow task failure, and nothing escapes',
    { timeout: 900_000 },
    async () => {
      expect(accepted.length).toBeGreaterThan(0);
      await pool(accepted, 8, async (id) => {
        const outcome = await sys.client.workflow
          .getHandle(id)
          .result()
          .then(
            (o: ProposalOutcome) => o.status as string,
            (err: unknown) => `workflow failed: ${(err as Error).message}`,
          );
        counts.final[outcome] = (counts.final[outcome] ?? 0) + 1;
        await expectNoTaskFailures(id);
      });
      const finals = Object.keys(counts.final);
      expect(finals.filter((s) => !isFinalStatus(s as OutcomeStatus))).toEqual([]);
      expect(existsSync(join(tmpdir(), ESCAPE_MARK))).toBe(false);
      expect(existsSync(join('/tmp', ESCAPE_MARK))).toBe(false);
    },
  );
});

async function expectNoTaskFailures(workflowId: string): Promise<void> {
  const history = await sys.client.workflow.getHandle(workflowId).fetchHistory();
  const failed = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes);
  expect(
    failed.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message),
    workflowId,
  ).toEqual([]);
}
