/**
 * Does this process use the policy the workflow workers judge with? Compares a process's own policy document with
 * the one the workers published (src/contracts/policy-in-force.ts) and says, in one line, what differs. Pure: the
 * MCP proxy, the CLI, the Discord bot and the workers call it with what they read.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import type { PolicyInForce } from '../contracts/policy-in-force';

/**
 * SHA-256 of the canonical JSON of a policy document (a file laid over the default, before completion): the same
 * file gives the same digest on every host and in every process, whatever its working directory or environment.
 */
export function policyDocumentDigest(document: unknown): string {
  return toHex(sha256(utf8(canonicalJson(document))));
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Field paths whose values differ (mappings walked into, lists and scalars compared whole), in a stable order. */
export function documentDifferences(mine: unknown, theirs: unknown, at: string[] = []): string[] {
  if (isMapping(mine) && isMapping(theirs)) {
    const keys = [...new Set([...Object.keys(mine), ...Object.keys(theirs)])].sort();
    return keys.flatMap((k) => documentDifferences(mine[k], theirs[k], [...at, k]));
  }
  if (mine === undefined && theirs === undefined) return [];
  const same = mine !== undefined && theirs !== undefined && canonicalJson(mine) === canonicalJson(theirs);
  return same ? [] : [at.join('.')];
}

/** A process's own policy, as it loaded it. */
export interface OwnPolicy {
  /** The file it loaded. */
  source: string;
  document: unknown;
  document_sha256: string;
  /** The approvers as this process completed its policy (the file's and `AGENT_JUDGE_APPROVERS`). */
  approvers?: string[];
}

const APPROVERS_PATH = 'spec.escalation.approvers';

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return canonicalJson([...a].sort()) === canonicalJson([...b].sort());
}

/** The verdict of one comparison. */
export interface PolicyAgreement {
  /** `same`; `differs`; `unknown` when no workflow worker has published a policy on that queue. */
  state: 'same' | 'differs' | 'unknown';
  /** Field paths that differ (empty unless `differs`). */
  differences: string[];
  /** One line for a log or stderr. */
  message: string;
  /** The version of the workers' policy compared with (absent when unknown). */
  version?: number;
  /** The workers' policy digest (what their proposals record), when known. */
  policy_sha256?: string;
}

/** A value in a few characters, for a difference shown in one line. */
function brief(value: unknown): string {
  if (value === undefined) return '(not set)';
  const json = JSON.stringify(value);
  return json.length <= 60 ? json : `${json.slice(0, 57)}...`;
}

function valueAt(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const key of path.split('.')) cur = isMapping(cur) ? cur[key] : undefined;
  return cur;
}

/** Compares `mine` with what the workflow workers on `taskQueue` published (`record`, null when nothing was). */
export function comparePolicies(mine: OwnPolicy, record: PolicyInForce | null, taskQueue: string): PolicyAgreement {
  if (!record) {
    return {
      state: 'unknown',
      differences: [],
      message:
        `no workflow worker on task queue ${taskQueue} has published its policy (none has started yet, or it runs ` +
        `an older agent-judge): cannot tell whether ${mine.source} is the policy in force`,
    };
  }
  const theirs = record.current;
  const known = { version: theirs.version, policy_sha256: theirs.policy_sha256 };
  const who =
    `${theirs.source} ("${theirs.name}", version ${theirs.version}, ` +
    `published ${theirs.published_at} by ${theirs.publisher})`;
  // The effective approvers (environment included) when both sides say them: the documents alone miss
  // AGENT_JUDGE_APPROVERS, so a proxy would see the workers' approvers as [] while the workers accept someone.
  const effective = mine.approvers !== undefined && theirs.approvers !== undefined;
  const approversDiffer = effective && !sameList(mine.approvers!, theirs.approvers!);
  const documentsSame = theirs.document_sha256 === mine.document_sha256;
  const documentDiffs = documentsSame
    ? []
    : documentDifferences(mine.document, theirs.document).filter((p) => !(effective && p === APPROVERS_PATH));
  if (!approversDiffer && documentDiffs.length === 0 && (documentsSame || effective)) {
    return {
      state: 'same',
      differences: [],
      message: `policy ${mine.source} is the one the workflow workers on ${taskQueue} judge with: ${who}`,
      ...known,
    };
  }
  const differences = [...(approversDiffer ? [APPROVERS_PATH] : []), ...documentDiffs];
  const valueOf = (side: 'mine' | 'theirs', p: string) =>
    effective && p === APPROVERS_PATH
      ? side === 'mine'
        ? mine.approvers
        : theirs.approvers
      : valueAt(side === 'mine' ? mine.document : theirs.document, p);
  const shown = differences
    .slice(0, 3)
    .map((p) => `${p} (yours ${brief(valueOf('mine', p))}, theirs ${brief(valueOf('theirs', p))})`);
  const more = differences.length > 3 ? `, and ${differences.length - 3} more` : '';
  return {
    state: 'differs',
    differences,
    message:
      `WARNING: the workflow workers on ${taskQueue} judge with another policy than ${mine.source}: ${who}. ` +
      `Differing: ${shown.join('; ') || '(nothing in the documents; only their digests)'}${more}. What is judged ` +
      "and executed follows the workers' policy; this process still maps and decides with its own (docs/policy.md)",
    ...known,
  };
}
