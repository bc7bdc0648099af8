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
  if (theirs.document_sha256 === mine.document_sha256) {
    return {
      state: 'same',
      differences: [],
      message: `policy ${mine.source} is the one the workflow workers on ${taskQueue} judge with: ${who}`,
      ...known,
    };
  }
  const differences = documentDifferences(mine.document, theirs.document);
  const shown = differences
    .slice(0, 3)
    .map((p) => `${p} (yours ${brief(valueAt(mine.document, p))}, theirs ${brief(valueAt(theirs.document, p))})`);
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
