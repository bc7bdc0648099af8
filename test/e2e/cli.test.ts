/**
 * The `agent-judge` CLI driven as a user would: real processes (`node bin/agent-judge.mjs`),
 * against the run's Temporal dev server and a system of workers on task queues of this file's own.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { AuditRecord } from '../../src/audit';
import { decide, submitAndWait } from '../../src/client/proposals';
import type { proposalWorkflow } from '../../src/workflows/proposal';
import { MAX_PROPOSAL_BYTES } from '../../src/contracts/proposal';
import type { ProposalOutcome } from '../../src/contracts/status';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const BIN = fileURLToPath(new URL('../../bin/agent-judge.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

let sys: TestSystem;
let dir: string;

beforeAll(async () => {
  sys = await startSystem({
    spec: {
      clarify: { maxRounds: 2, timeout: '60s' },
      escalation: { timeout: '60s', approvers: ['scott'], reminderAt: 0 },
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'agent-judge-cli-'));
});
afterAll(async () => {
  await sys?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; resolves with its exit code and output whatever the code. */
function cli(args: string[], stdin?: string): Promise<Run> {
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
          AGENT_JUDGE_POLICY: '',
        },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 50_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
    else child.stdin?.end();
  });
}

function writeJson(value: unknown): string {
  const file = join(dir, `${randomUUID()}.json`);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

const propose = (file: string, ...flags: string[]) =>
  cli(['propose', file, ...flags, '--task-queue', sys.taskQueues.workflow]);

function outcome(run: Run): ProposalOutcome {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as ProposalOutcome;
}

/** One readable line: the message and nothing else (no stack trace). */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0]!;
}

/** `list` over visibility, which is eventually consistent: polls until `until` holds. */
async function listUntil(args: string[], until: (rows: Array<{ proposal_id: string; status: string }>) => boolean) {
  let rows: Array<{ proposal_id: string; status: string }> = [];
  for (let attempt = 0; attempt < 6; attempt++) {
    const run = await cli(['list', ...args]);
    expect(run.code, run.stderr).toBe(0);
    rows = JSON.parse(run.stdout) as typeof rows;
    if (until(rows)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return rows;
}

describe('commands that need no server', () => {
  it('--version prints the installed package version and exits 0', async () => {
    const version = await cli(['--version']);
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
  });

  it('help, schema, and bad flags', async () => {
    const [help, schema, badSchema, badSince, badDecision] = await Promise.all([
      cli(['--help']),
      cli(['schema', 'proposal']),
      cli(['schema', 'proposals']),
      cli(['list', '--since', 'nonsense']),
      cli(['decide', 'some-proposal', 'maybe', '--approver', 'scott']),
    ]);

    expect(help.code).toBe(0);
    for (const command of ['propose', 'status', 'list', 'clarify', 'decide', 'audit', 'schema', 'dev', 'worker']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    // `status` has a module of its own (it must start fast) and is still listed where it always was.
    expect(help.stdout).toMatch(/^ {2}propose .*\n {2}status \[options\] <proposal_id> .*\n {2}list /m);
    expect(help.stdout).toContain('--address');
    expect(help.stdout).toContain('--namespace');

    expect(schema.code).toBe(0);
    const json = JSON.parse(schema.stdout) as {
      $schema: string;
      anyOf: Array<{ properties: { action_type: { const?: string } } }>;
    };
    expect(json.$schema).toMatch(/json-schema\.org/);
    expect(json.anyOf.map((b) => b.properties.action_type.const)).toContain('forgejo_pr_create');

    expect(badSchema.code).toBe(2);
    expect(oneLine(badSchema.stderr)).toBe(
      'agent-judge: schema: unknown name "proposals"; ' +
        'expected one of proposal, verdict, policy, clarification, decision',
    );
    expect(badSince.code).toBe(2);
    expect(oneLine(badSince.stderr)).toBe(
      'agent-judge: --since: expected a duration such as 30m, 24h or 7d, or an ISO time, got "nonsense"',
    );
    expect(badDecision.code).toBe(2);
    expect(badDecision.stderr).toContain(
      "'maybe' is invalid for argument 'decision'. Allowed choices are approve, reject.",
    );
    expect(badDecision.stdout).toBe('');
  });
});

describe('propose, status, list', () => {
  it('status says in one line what it cannot answer: unknown ids and namespaces, bad ids, no server', async () => {
    const unknownWorkflow = `proposal-${'0'.repeat(32)}`;
    const unknownId = randomUUID();
    const [noWorkflow, noProposal, badId, noNamespace, noServer] = await Promise.all([
      cli(['status', unknownWorkflow]),
      cli(['status', unknownId]),
      cli(['status', 'not an id!']),
      cli(['status', unknownId, '--namespace', 'agent-judge-no-such-namespace']),
      cli(['status', unknownId, '--address', '127.0.0.1:1']),
    ]);
    expect([noWorkflow.code, noProposal.code, badId.code, noNamespace.code, noServer.code]).toEqual([1, 1, 2, 1, 1]);
    expect(oneLine(noWorkflow.stderr)).toBe(`agent-judge: no proposal with id ${unknownWorkflow}`);
    expect(oneLine(noProposal.stderr)).toBe(`agent-judge: no proposal with id ${unknownId}`);
    expect(oneLine(badId.stderr)).toBe('agent-judge: proposal_id: "not an id!" is not a valid proposal id');
    expect(oneLine(noNamespace.stderr)).toBe("agent-judge: Namespace not found: 'agent-judge-no-such-namespace'");
    expect(oneLine(noServer.stderr)).toBe(
      `agent-judge: cannot reach Temporal at 127.0.0.1:1 (namespace ${inject('temporalNamespace')}): ` +
        'Failed to connect before the deadline. ' +
        'Is agent-judge running? Start it with `agent-judge dev` (a Temporal server on localhost:7233 and the ' +
        'workers), or point TEMPORAL_ADDRESS or --address at the server it uses (`agent-judge dev --port P` listens ' +
        'on 127.0.0.1:P)',
    );
    for (const run of [noWorkflow, noProposal, badId, noNamespace, noServer]) expect(run.stdout).toBe('');
  });

  it('propose --wait prints the outcome; status and list show it; an identical resubmission is refused', async () => {
    const p = proposal('memory_write', { parameters: { content: `cli memory ${randomUUID()}` } });
    const file = writeJson(p);
    const out = outcome(await propose(file, '--wait'));
    expect(Object.keys(out).sort()).toEqual([
      'execution',
      'policy_sha256',
      'proposal_id',
      'status',
      'subject',
      'verdict',
      'verdicts',
      'workflow_id',
    ]);
    expect(out).toMatchObject({ proposal_id: p.proposal_id, status: 'executed' });
    expect(out.workflow_id).toMatch(/^proposal-[0-9a-f]{32}$/);
    expect(out.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'policy', tier: 'no-judge' });
    expect(out.verdicts).toHaveLength(1);
    expect(out.execution).toMatchObject({ status: 'succeeded', executor: 'memory' });

    const [status, again, sameContentNewId] = await Promise.all([
      cli(['status', String(p.proposal_id)]),
      propose(file),
      propose(writeJson({ ...p, proposal_id: `retry-${randomUUID()}` })),
    ]);
    expect(outcome(status)).toEqual(out);
    for (const refused of [again, sameContentNewId]) {
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(oneLine(refused.stderr)).toMatch(
        /^agent-judge: an identical proposal was already submitted \(proposal-[0-9a-f]{32}\)/,
      );
    }

    const rows = await listUntil(['--status', 'executed', '--since', '1h'], (r) =>
      r.some((x) => x.proposal_id === p.proposal_id),
    );
    expect(rows.find((x) => x.proposal_id === p.proposal_id)).toMatchObject({
      workflow_id: out.workflow_id,
      status: 'executed',
      action_type: 'memory_write',
    });
    expect(rows.every((x) => x.status === 'executed')).toBe(true);
  });

  it('propose from stdin without --wait prints exactly {proposal_id, workflow_id}', async () => {
    const p = proposal('memory_write', { parameters: { content: `stdin ${randomUUID()}` } });
    const run = await cli(['propose', '-', '--task-queue', sys.taskQueues.workflow], JSON.stringify(p));
    expect(run.code, run.stderr).toBe(0);
    const started = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(started).sort()).toEqual(['proposal_id', 'workflow_id']);
    expect(started.proposal_id).toBe(p.proposal_id);
    expect(started.workflow_id).toMatch(/^proposal-[0-9a-f]{32}$/);
    // It runs all the same.
    const done = await sys.client.workflow.getHandle<typeof proposalWorkflow>(started.workflow_id!).result();
    expect(done).toMatchObject({ proposal_id: p.proposal_id, status: 'executed' });
  });

  it('a proposal without proposal_id is named by its content: status finds it by that name', async () => {
    const { proposal_id: _none, ...p } = proposal('memory_write', {
      parameters: { content: `unnamed ${randomUUID()}` },
    });
    const out = outcome(await propose(writeJson(p), '--wait'));
    expect(out.status).toBe('executed');
    expect(out.proposal_id).toBe(out.workflow_id);
    expect(outcome(await cli(['status', out.proposal_id]))).toMatchObject({ workflow_id: out.workflow_id });
    // The name belongs to that content: another proposal may not take it.
    const other = { ...p, parameters: { content: `other ${randomUUID()}` }, proposal_id: out.proposal_id };
    const refused = await propose(writeJson(other));
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toMatch(/proposal\.proposal_id: proposal-[0-9a-f]{32} has a form kept for names/);
  });

  it('a well-formed unknown action type waits for a human', async () => {
    const p = proposal('deploy_to_production', { target: { cluster: 'eu-1' }, parameters: { version: 'v2' } });
    const out = outcome(await propose(writeJson(p), '--wait'));
    expect(out.status).toBe('awaiting_human');
    expect(out.verdict).toBeNull();
    expect(out.execution).toBeNull();
  });
});

describe('bad input', () => {
  it('exits 2 with the field named, and starts nothing', async () => {
    const marker = `bad-${randomUUID()}`;
    const ids = {
      malformed: `${marker}-malformed`,
      wrongType: `${marker}-wrong-type`,
      unknownField: `${marker}-unknown-field`,
      actionType: `${marker}-action-type`,
      oversize: `${marker}-oversize`,
    };
    const runs = await Promise.all([
      propose(writeJson(`{"proposal_id":"${ids.malformed}",\n  "action_type":"memory_write" "x"}`), '--wait'),
      propose(writeJson(proposal('exec', { proposal_id: ids.wrongType, parameters: { command: 'ls -la' } }))),
      propose(writeJson({ ...proposal('memory_write', { proposal_id: ids.unknownField }), run_as: 'root' })),
      propose(writeJson(proposal('memory_write', { proposal_id: ids.actionType, action_type: 'rm -rf' }))),
      propose(
        writeJson(
          proposal('deploy_thing', { proposal_id: ids.oversize, parameters: { blob: 'x'.repeat(MAX_PROPOSAL_BYTES) } }),
        ),
      ),
    ]);
    const expected = [
      // Where it breaks, as an editor counts: line 2, column 32 is the stray "x".
      /^agent-judge: proposal: not valid JSON \(line 2, column 32: /,
      /^agent-judge: proposal\.parameters\.command: Invalid input: expected array, received string$/,
      /^agent-judge: proposal: Unrecognized key: "run_as"$/,
      /^agent-judge: proposal\.action_type: expected a snake_case action type/,
      new RegExp(`^agent-judge: proposal: \\d+ bytes is over the ${MAX_PROPOSAL_BYTES}-byte limit$`),
    ];
    runs.forEach((run, i) => {
      expect(run.code, `case ${i}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
      expect(oneLine(run.stderr)).toMatch(expected[i]!);
    });

    const list = await cli(['list', '--since', '1h']);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Array<{ proposal_id: string }>;
    expect(rows.filter((r) => r.proposal_id.startsWith(marker))).toEqual([]);
  });
});

describe('clarify and decide', () => {
  it('a PR without evidence is asked to clarify; with evidence and no model, a person decides', async () => {
    const p = proposal('forgejo_pr_create', { cited_evidence: [] });
    const first = outcome(await propose(writeJson(p), '--wait'));
    expect(first.status).toBe('awaiting_clarification');
    expect(first.verdict).toMatchObject({ verdict: 'CLARIFY', rule: 'evidence.missing', decided_by: 'rules' });
    expect(first.verdict?.reason).toContain('cited_evidence');

    const [empty, answered] = await Promise.all([
      cli(['clarify', String(p.proposal_id), writeJson({})]),
      cli([
        'clarify',
        String(p.proposal_id),
        writeJson({ cited_evidence: [{ type: 'issue', url: 'https://example.org/sscoble/speckl/issues/42' }] }),
      ]),
    ]);
    expect(empty.code).toBe(2);
    expect(oneLine(empty.stderr)).toBe(
      'agent-judge: clarification: a clarification needs at least one of justification, cited_evidence, scope_claim',
    );

    // The rules pass now, but no model is configured: the default (withoutModel: escalate) asks a person.
    const after = outcome(answered);
    expect(after.status).toBe('awaiting_human');
    expect(after.verdict).toMatchObject({ verdict: 'CLARIFY', rule: 'judge.no-model.escalate', decided_by: 'rules' });
    expect(after.verdict?.reason).toContain('no model reviewed this proposal');

    const decided = outcome(await cli(['decide', String(p.proposal_id), 'approve', '--approver', 'scott']));
    expect(decided.status).toBe('approved');
    expect(decided.verdict).toMatchObject({ verdict: 'APPROVE', decided_by: 'human:scott' });
    expect(decided.execution).toBeNull();
  });

  it('a financial op waits for an approver; a non-approver is refused; scott approves', async () => {
    const p = proposal('financial_op');
    const id = String(p.proposal_id);
    const waiting = outcome(await propose(writeJson(p), '--wait'));
    expect(waiting.status).toBe('awaiting_human');

    const mallory = await cli(['decide', id, 'approve', '--approver', 'mallory']);
    expect(mallory.code).toBe(1);
    expect(oneLine(mallory.stderr)).toMatch(
      /^agent-judge: decision refused: .*mallory is not an approver for this proposal$/,
    );
    expect(outcome(await cli(['status', id])).status).toBe('awaiting_human');

    const decided = outcome(await cli(['decide', id, 'approve', '--approver', 'scott', '--reason', 'budgeted']));
    expect(decided.status).toBe('approved');
    expect(decided.verdict).toMatchObject({
      verdict: 'APPROVE',
      decided_by: 'human:scott',
      reason: 'budgeted',
      tier: 'human-only',
    });
  });
});

describe('an action type the risk matrix does not list', () => {
  it('goes to a person who reads why: "not in the risk matrix" and the closest listed types', async () => {
    const p = proposal('memory_write', {
      action_type: 'memry_write',
      parameters: { content: `typo ${randomUUID()}` },
    });
    const json = outcome(await propose(writeJson(p), '--wait'));
    expect(json.status).toBe('awaiting_human');
    expect(json.escalation_reason).toMatch(
      new RegExp(
        '^action_type "memry_write" is not in the risk matrix of policy \\S+ \\(did you mean memory_write\\?\\): ' +
          'its default tier human-only applies, a person must decide$',
      ),
    );
    const human = await cli(['status', String(p.proposal_id), '--format', 'human']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^why {7}action_type "memry_write" is not in the risk matrix .*did you mean memory_write\?/m,
    );
  });
});

describe('grants', () => {
  const pr = () =>
    proposal('forgejo_pr_create', {
      cited_evidence: [{ type: 'issue', url: 'https://example.org/sscoble/speckl/issues/42' }],
    });
  const queue = () => ['--task-queue', sys.taskQueues.workflow];

  it('decide --grant-for grants too; the identical PR is then approved by the grant; list, show, revoke', async () => {
    const first = pr();
    expect(outcome(await propose(writeJson(first), '--wait')).status).toBe('awaiting_human');
    const refused = await cli([
      'decide',
      String(first.proposal_id),
      'reject',
      '--approver',
      'scott',
      '--grant-for',
      '5m',
    ]);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toBe('agent-judge: --grant-for: only an approval can grant');
    const badDuration = await cli(['grants', 'create', String(first.proposal_id), '--approver', 'scott', '--for', '5']);
    expect(badDuration.code).toBe(2);
    expect(oneLine(badDuration.stderr)).toMatch(/^agent-judge: --for: expected a duration such as 30m/);

    const decided = await cli([
      'decide',
      String(first.proposal_id),
      'approve',
      '--approver',
      'scott',
      '--grant-for',
      '10m',
      '--grant-uses',
      '3',
      ...queue(),
    ]);
    expect(outcome(decided).verdict).toMatchObject({ decided_by: 'human:scott' });
    const grantId = /grant (g[a-z2-7]{20}) is live: up to 3 calls/.exec(decided.stderr)?.[1];
    expect(grantId, decided.stderr).toBeDefined();

    const listed = await cli(['grants', 'list', '--json', ...queue()]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ grant_id: string }>).map((g) => g.grant_id)).toContain(grantId);
    const table = await cli(['grants', 'list', ...queue()]);
    expect(table.stdout).toMatch(
      new RegExp(`^${grantId}  live +@engineering forgejo_pr_create: the identical action`, 'm'),
    );

    // The same PR in other words: the workers' index picks the grant up within its refresh (2 s); until then a
    // person would be asked, so the call is repeated until the grant answers.
    let byGrant: ProposalOutcome | undefined;
    for (let attempt = 0; attempt < 20 && !byGrant; attempt++) {
      const again = outcome(
        await propose(writeJson({ ...first, proposal_id: randomUUID(), justification: `again ${attempt}` }), '--wait'),
      );
      if (again.verdict?.decided_by === `grant:${grantId}`) byGrant = again;
      else await new Promise((r) => setTimeout(r, 500));
    }
    expect(byGrant?.status).toBe('approved');

    const shown = await cli(['grants', 'show', grantId!]);
    expect(shown.code, shown.stderr).toBe(0);
    const status = JSON.parse(shown.stdout) as { state: string; uses: Array<{ workflow_id: string }> };
    expect(status.state).toBe('live');
    expect(status.uses.map((u) => u.workflow_id)).toEqual([byGrant!.workflow_id]);

    const revoked = await cli(['grants', 'revoke', grantId!, '--by', 'scott', '--reason', 'done for today']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`grant ${grantId} revoked after 1 of 3 uses\n`);
    expect((JSON.parse((await cli(['grants', 'show', grantId!])).stdout) as { state: string }).state).toBe('revoked');
    const twice = await cli(['grants', 'revoke', grantId!, '--by', 'scott']);
    expect(twice.code).not.toBe(0);
    expect(oneLine(twice.stderr)).toMatch(/is not running/);
    const bad = await cli(['grants', 'show', 'not-a-grant']);
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/^agent-judge: grant_id: expected a grant id/);
  });
});

describe('audit', () => {
  it('export prints one JSON line per proposal with its verdicts and the human decision', async () => {
    const p = proposal('financial_op', { target: { account: `audit-${randomUUID().slice(0, 8)}` } });
    const waiting = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(waiting.status).toBe('awaiting_human');
    await decide(sys.client, String(p.proposal_id), {
      decision: 'reject',
      approver: 'scott',
      reason: 'not this quarter',
      via: 'api',
    });

    let record: AuditRecord | undefined;
    for (let attempt = 0; attempt < 6 && !record; attempt++) {
      const run = await cli(['audit', 'export', '--since', '1h']);
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      const records = lines.map((l) => JSON.parse(l) as AuditRecord);
      // One line per run: a workflow id can have several runs (other tests start one under a used id).
      expect(new Set(records.map((r) => `${r.workflow_id} ${r.started_at}`)).size).toBe(records.length);
      record = records.find((r) => r.proposal_id === p.proposal_id && r.status === 'rejected');
      if (!record) await new Promise((r) => setTimeout(r, 500));
    }
    expect(record).toMatchObject({
      workflow_id: waiting.workflow_id,
      status: 'rejected',
      action_type: 'financial_op',
      tier: 'human-only',
      verdict: { verdict: 'REJECT', decided_by: 'human:scott', reason: 'not this quarter' },
      decisions: [{ decision: 'reject', approver: 'scott', reason: 'not this quarter', via: 'api', accepted: true }],
    });
    expect(record?.verdicts).toHaveLength(1);
  });

  it('export carries the deciding verdict of a human approval whose run still waits for its token', async () => {
    // financial_op has no executor here: approved, the run stays open until the caller redeems its token.
    const p = proposal('financial_op', { target: { account: `audit-open-${randomUUID().slice(0, 8)}` } });
    expect((await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow })).status).toBe('awaiting_human');
    const approved = outcome(await cli(['decide', String(p.proposal_id), 'approve', '--approver', 'scott']));
    expect(approved.status).toBe('approved');
    let record: AuditRecord | undefined;
    for (let attempt = 0; attempt < 6 && !record; attempt++) {
      const run = await cli(['audit', 'export', '--since', '1h']);
      expect(run.code, run.stderr).toBe(0);
      const records = run.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as AuditRecord);
      record = records.find((r) => r.proposal_id === p.proposal_id && r.status === 'approved');
      if (!record) await new Promise((r) => setTimeout(r, 500));
    }
    expect(record).toMatchObject({
      status: 'approved',
      closed_at: null,
      verdict: { verdict: 'APPROVE', decided_by: 'human:scott', tier: 'human-only' },
      decisions: [{ decision: 'approve', approver: 'scott', accepted: true }],
    });
    expect(record?.verdicts.map((v) => v.verdict)).toEqual(['APPROVE']);
    // `list` says what the open run waits for: its token.
    const mine = (r: { proposal_id: string; status: string }) => r.proposal_id === p.proposal_id;
    const rows = await listUntil(['--since', '1h'], (all) => all.some((r) => mine(r) && r.status === 'approved'));
    expect(rows.find(mine)).toMatchObject({
      status: 'approved',
      waiting_for: 'token',
      closed_at: null,
      subject: `financial_op {"account":"${(p.target as { account: string }).account}"}`,
    });
    // The export never carries a token that can still be redeemed.
    expect(JSON.stringify(record)).not.toContain(approved.capability?.token ?? 'no token in the outcome');
    expect(approved.capability?.token).toBeTruthy();
  });

  it('replay reports no nondeterminism over the closed proposals', async () => {
    // At least one closed proposal of this file's own.
    const done = await submitAndWait(
      sys.client,
      proposal('memory_write', { parameters: { content: `replay ${randomUUID()}` } }),
      {
        taskQueue: sys.taskQueues.workflow,
      },
    );
    expect(done.status).toBe('executed');
    const run = await cli(['audit', 'replay', '--since', '1h']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      replayed: number;
      ok: number;
      nondeterministic: number;
      failed: number;
    };
    expect(summary.nondeterministic).toBe(0);
    expect(summary.failed).toBe(0);
    expect(summary.replayed).toBeGreaterThan(0);
    expect(summary.ok).toBe(summary.replayed);
  });
});
