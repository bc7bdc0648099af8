/** Shared setup for the judge tests: the default policy in a temp base directory, and the corpus. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JudgeSettings } from '../../src/contracts/judge-settings';
import type { CompliancePolicy } from '../../src/contracts/policy';
import type { Proposal } from '../../src/contracts/proposal';
import { parseCorpus, type EvalCase } from '../../src/judge/eval';
import { loadPolicy } from '../../src/policy/load';

export const CORPUS_PATH = fileURLToPath(new URL('../fixtures/judge-corpus.jsonl', import.meta.url));

/** The corpus cites issues on this host; the judge tests allow it as an evidence host. */
export const EVIDENCE_HOST = 'forge.example.test';

export function loadCorpus(): EvalCase[] {
  return parseCorpus(readFileSync(CORPUS_PATH, 'utf8'), 'judge-corpus.jsonl');
}

/** A fresh base directory, so file and exec roots (`.agent-judge/workspace`) resolve inside it. */
export function tempBaseDir(): string {
  return mkdtempSync(join(tmpdir(), 'agent-judge-judge-'));
}

/** The shipped default policy with a judge section (evidence host allowed, short timeouts). */
export async function judgePolicy(baseDir: string, judge: Partial<JudgeSettings> = {}): Promise<CompliancePolicy> {
  const policy = await loadPolicy({ baseDir, env: {} });
  // The corpus's exec cases run git in the workspace: here it is a repository the operator names.
  policy.spec.exec.git.repositories = [{ name: 'workspace', path: join(baseDir, '.agent-judge', 'workspace') }];
  policy.spec.judge = {
    withoutModel: 'escalate',
    apiKeyEnv: 'OLLAMA_API_KEY',
    timeoutMs: 5_000,
    seed: 0,
    allowedEvidenceHosts: [EVIDENCE_HOST],
    ...judge,
  };
  return policy;
}

/** A well-formed PR proposal the rules approve (scope and evidence in order). */
export function prProposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    proposal_id: 'p-schema-1',
    agent_id: '@engineering',
    action_type: 'forgejo_pr_create',
    target: { repo: 'sscoble/speckl', branch: 'feat/add-schema-validation', base: 'main' },
    parameters: { files_changed: ['src/schema/validator.ts', 'src/schema/types.ts'], estimated_diff_lines: 45 },
    justification: 'Implementing OpenAPI schema validation per issue #42',
    cited_evidence: [{ type: 'issue', url: `https://${EVIDENCE_HOST}/sscoble/speckl/issues/42` }],
    scope_claim: { files_only: ['src/schema/'], max_lines: 80 },
    ...overrides,
  };
}
