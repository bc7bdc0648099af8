import { z } from 'zod';
import type { JudgeSettings } from '../contracts/judge-settings';
import { isAction, type Evidence, type Proposal } from '../contracts/proposal';
import type { EvidenceStatus } from '../contracts/lifecycle';

export type { EvidenceStatus } from '../contracts/lifecycle';

export interface EvidenceCheck {
  /** Index into `cited_evidence`. */
  index: number;
  status: EvidenceStatus;
  /**
   * Why, in the judge service's own words. Never echoes actor-supplied text beyond validated
   * repository names, so it is safe to hand to the model as a trusted fact.
   */
  detail: string;
}

export interface EvidenceReport {
  checks: EvidenceCheck[];
  verified: number;
  failed: number;
  unverifiable: number;
  otherRepo: number;
}

/** An issue or pull request named by a forge URL (`.../owner/repo/issues/42`). */
export interface ForgeRef {
  host: string;
  owner: string;
  repo: string;
  kind: 'issue' | 'pull';
  number: number;
}

/** How to reach Forgejo; the token comes from the judge process's environment, never the policy. */
export interface EvidenceOptions {
  fetch?: typeof fetch;
  forgejoToken?: string;
}

const ISSUE_KINDS: Record<string, ForgeRef['kind']> = { issues: 'issue', pulls: 'pull', pull: 'pull' };
const SAFE_REPO_PART = /^[A-Za-z0-9_.-]{1,100}$/;

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Reads `owner/repo/(issues|pulls)/N` out of a URL, after any web prefix (Forgejo behind
 * `/forgejo/`). Segments are percent-decoded, so a homoglyph stays visible as a different name.
 */
export function parseForgeUrl(url: string): ForgeRef | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const segments = parsed.pathname.split('/').filter(Boolean).map(decodeSegment);
  for (let i = 2; i + 1 < segments.length; i++) {
    const kind = ISSUE_KINDS[segments[i] as string];
    const num = segments[i + 1] as string;
    if (kind && /^[1-9][0-9]{0,9}$/.test(num)) {
      return {
        host: parsed.host,
        owner: segments[i - 2] as string,
        repo: segments[i - 1] as string,
        kind,
        number: Number(num),
      };
    }
  }
  return null;
}

/** The repository a proposal acts on, for the action types that have one. */
export function targetRepoOf(proposal: Proposal): string | null {
  if (isAction(proposal, 'forgejo_pr_create') || isAction(proposal, 'issue_comment')) return proposal.target.repo;
  return null;
}

const sameRepo = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const isIssueLike = (e: Evidence) => /^(issue|issues|pr|pull|pull_request|pulls|merge_request)$/i.test(e.type);

/** The part of the policy evidence verification reads, with the Forgejo web host worked out. */
interface ResolvedSettings {
  allowedHosts: Set<string>;
  forgejo?: { apiBase: string; webHost: string; timeoutMs: number };
}

function resolveSettings(settings: JudgeSettings | undefined): ResolvedSettings {
  const allowedHosts = new Set(settings?.allowedEvidenceHosts ?? []);
  const fj = settings?.forgejo;
  if (!fj) return { allowedHosts };
  const apiBase = fj.apiBaseUrl.replace(/\/+$/, '');
  const web = fj.webUrl ?? apiBase.replace(/\/api\/v1$/, '');
  const webHost = new URL(web).host;
  // The configured Forgejo is allowed by definition.
  allowedHosts.add(webHost);
  return { allowedHosts, forgejo: { apiBase, webHost, timeoutMs: fj.timeoutMs } };
}

const ForgejoIssue = z.object({
  number: z.number(),
  state: z.string(),
  repository: z.object({ full_name: z.string() }).nullish(),
  pull_request: z.unknown().nullish(),
});

type Lookup =
  | { found: true; state: string; fullName: string | null; isPull: boolean }
  | { found: false; why: 'missing' | 'unreachable'; detail: string };

async function lookupForgejo(
  ref: ForgeRef,
  forgejo: NonNullable<ResolvedSettings['forgejo']>,
  options: EvidenceOptions,
): Promise<Lookup> {
  const repo = `${encodeURIComponent(ref.owner)}/${encodeURIComponent(ref.repo)}`;
  const url = `${forgejo.apiBase}/repos/${repo}/issues/${ref.number}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.forgejoToken) headers.authorization = `token ${options.forgejoToken}`;
  try {
    const res = await (options.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(forgejo.timeoutMs) });
    if (res.status === 404) {
      await res.body?.cancel();
      return { found: false, why: 'missing', detail: 'the Forgejo API reports no such issue or pull request' };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return { found: false, why: 'unreachable', detail: `the Forgejo API answered HTTP ${res.status}` };
    }
    const body = ForgejoIssue.safeParse(await res.json());
    if (!body.success)
      return { found: false, why: 'unreachable', detail: 'the Forgejo API answered with an unexpected shape' };
    return {
      found: true,
      state: body.data.state,
      fullName: body.data.repository?.full_name ?? null,
      isPull: body.data.pull_request !== null && body.data.pull_request !== undefined,
    };
  } catch (err) {
    const name = (err as Error).name;
    const why =
      name === 'TimeoutError' || name === 'AbortError'
        ? `timed out after ${forgejo.timeoutMs} ms`
        : 'could not be reached';
    return { found: false, why: 'unreachable', detail: `the Forgejo API ${why}` };
  }
}

async function checkOne(
  e: Evidence,
  index: number,
  targetRepo: string | null,
  settings: ResolvedSettings,
  options: EvidenceOptions,
): Promise<EvidenceCheck> {
  const check = (status: EvidenceStatus, detail: string): EvidenceCheck => ({ index, status, detail });
  if (!e.url) return check('unverifiable', 'no URL to check (a source reference is taken on trust)');
  const ref = parseForgeUrl(e.url);

  // Evidence for another repository is checked first: no host setting makes it acceptable.
  if (ref && targetRepo && !sameRepo(`${ref.owner}/${ref.repo}`, targetRepo)) {
    return check('other-repo', `the URL names a different repository than the target ${targetRepo}`);
  }
  if (!ref && !isIssueLike(e)) return check('unverifiable', 'a URL that is not an issue or pull request; not checked');

  const host = new URL(e.url).host;
  if (settings.allowedHosts.size === 0) {
    return check('unverifiable', 'the policy lists no evidence hosts, so the host cannot be checked');
  }
  if (!settings.allowedHosts.has(host))
    return check('failed', 'the URL is on a host the policy does not allow for evidence');
  if (!ref) return check('failed', 'an issue or pull request citation whose URL is not an issue or pull request URL');

  const fj = settings.forgejo;
  if (!fj || host !== fj.webHost)
    return check('unverifiable', 'allowed host; existence not checked (no Forgejo API for this host)');
  if (!SAFE_REPO_PART.test(ref.owner) || !SAFE_REPO_PART.test(ref.repo)) {
    return check('failed', 'the repository name in the URL is not a valid Forgejo name');
  }
  const found = await lookupForgejo(ref, fj, options);
  if (!found.found) return check(found.why === 'missing' ? 'failed' : 'unverifiable', found.detail);
  if (targetRepo && found.fullName && !sameRepo(found.fullName, targetRepo)) {
    return check('other-repo', `Forgejo says it belongs to a different repository than the target ${targetRepo}`);
  }
  const what = found.isPull ? 'pull request' : 'issue';
  if (found.state !== 'open')
    return check('failed', `the ${what} exists but is ${found.state === 'closed' ? 'closed' : 'not open'}`);
  return check('verified', `the ${what} exists and is open${targetRepo ? ` in ${targetRepo}` : ''}`);
}

/**
 * Checks every cited evidence item (in parallel, each bounded by the Forgejo timeout). Never
 * throws: an unreachable Forgejo makes items unverifiable, it does not fail the judge.
 */
export async function verifyEvidence(
  proposal: Proposal,
  settings: JudgeSettings | undefined,
  options: EvidenceOptions = {},
): Promise<EvidenceReport> {
  const resolved = resolveSettings(settings);
  const targetRepo = targetRepoOf(proposal);
  const checks = await Promise.all(
    proposal.cited_evidence.map((e, i) => checkOne(e, i, targetRepo, resolved, options)),
  );
  return evidenceReport(checks);
}

/** The report of a set of checks: the checks and how many ended in each status. */
export function evidenceReport(checks: EvidenceCheck[]): EvidenceReport {
  const count = (s: EvidenceStatus) => checks.filter((c) => c.status === s).length;
  return {
    checks,
    verified: count('verified'),
    failed: count('failed'),
    unverifiable: count('unverifiable'),
    otherRepo: count('other-repo'),
  };
}

/** One line per check, for verdict reasons: `cited_evidence[1]: failed (the issue ... is closed)`. */
export function describeChecks(checks: readonly EvidenceCheck[]): string {
  return checks.map((c) => `cited_evidence[${c.index}]: ${c.status} (${c.detail})`).join('; ');
}
