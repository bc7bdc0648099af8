import { describe, expect, expectTypeOf, it } from 'vitest';
import { jsonSchemaOf, SCHEMAS } from '../../src/cli/schema';
import { proposalWorkflowId } from '../../src/client/proposals';
import { ClarificationSchema, HumanDecisionSchema } from '../../src/contracts/messages';
import {
  canonicalJson,
  isAction,
  knownProposal,
  KNOWN_ACTION_TYPES,
  MAX_PROPOSAL_BYTES,
  parseProposal,
  safeParseProposal,
  searchableTarget,
  targetKey,
  type Proposal,
  type ProposalOf,
} from '../../src/contracts/proposal';
import { BadInputError } from '../../src/contracts/errors';
import { proposal } from '../helpers/system';

/** A valid proposal of every known action type (proposal() lacks the ones below). */
function valid(type: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const extra: Record<string, Record<string, unknown>> = {
    impersonation: {
      target: { identity: 'scott@example.org' },
      parameters: { purpose: 'reply to the vendor as Scott' },
    },
    credential_rotation: { target: { credential: 'forgejo-bot-token' }, parameters: { reason: 'leaked in a log' } },
    mcp_tool_call: {
      target: { server: 'filesystem', tool: 'write_file' },
      parameters: { arguments: { path: '/srv/ws/a.txt', content: 'a' }, tool_definition_hash: 'a'.repeat(64) },
    },
    tool_call: { target: { server: 'builtin', tool: 'message' }, parameters: { arguments: { to: 'ops', text: 'hi' } } },
    shell_command: {
      target: { cwd: '/srv/ws' },
      parameters: {
        command: 'ls -la',
        parsed: { reducible: true, commands: [{ argv: ['ls', '-la'], redirects: [] }] },
      },
    },
    file_edit: { target: { paths: ['/srv/ws/a.txt'] }, parameters: { change: 'write', content: 'a' } },
    web_request: { target: { url: 'https://example.org/' }, parameters: { prompt: 'summarise' } },
    program_config_edit: {
      target: { paths: ['/srv/ws/.mcp.json'] },
      parameters: { change: 'write', content: '{}', why_judged: '.mcp.json matches .mcp.json' },
    },
    web_request_sensitive: {
      target: { url: 'http://169.254.169.254/' },
      parameters: { why_judged: 'reaches a link-local address', unmapped_input: { extractMode: 'text' } },
    },
  };
  return proposal(type, { ...(extra[type] ?? {}), ...overrides });
}

function errorOf(input: unknown): string {
  const r = safeParseProposal(input);
  if (r.ok)
    throw new Error(`expected a validation error, got a valid proposal: ${JSON.stringify(input).slice(0, 200)}`);
  return r.refusal.reason;
}

function parsed(input: Record<string, unknown>): Proposal {
  return parseProposal(input);
}

describe('proposal validation', () => {
  it.each(KNOWN_ACTION_TYPES)('accepts a valid %s proposal and keeps its action', (type) => {
    const input = valid(type);
    const r = safeParseProposal(input);
    expect(r.ok, r.ok ? '' : r.refusal.reason).toBe(true);
    if (!r.ok) return;
    expect(r.value.action_type).toBe(type);
    expect(r.value.proposal_id).toBe(input.proposal_id);
    expect(r.value.target).toMatchObject(input.target as object);
    expect(parseProposal(input)).toEqual(r.value);
  });

  it('fills defaults: cited_evidence, scope_claim, and per-type defaults (file mode create, exec host local)', () => {
    const p = parsed({ ...valid('file_write'), cited_evidence: undefined, scope_claim: undefined });
    expect(p.cited_evidence).toEqual([]);
    expect(p.scope_claim).toEqual({});
    expect(p.parameters.mode).toBe('create');
    const e = parsed(valid('exec', { target: {} }));
    expect(e.target.host).toBe('local');
    const m = parsed(valid('memory_write', { target: {} }));
    expect(m.target.store).toBe('memory');
  });

  it('names the field and the rule for a wrong type in the parameters', () => {
    expect(errorOf(valid('exec', { parameters: { command: 'ls -la' } }))).toBe(
      'proposal.parameters.command: Invalid input: expected array, received string',
    );
    expect(errorOf(valid('issue_comment', { target: { repo: 'sscoble/speckl', issue: '42' } }))).toBe(
      'proposal.target.issue: Invalid input: expected number, received string',
    );
    expect(
      errorOf(valid('forgejo_pr_create', { parameters: { files_changed: ['a.ts'], estimated_diff_lines: -1 } })),
    ).toMatch(/^proposal\.parameters\.estimated_diff_lines: Too small/);
    expect(errorOf(valid('financial_op', { parameters: { amount: 10, currency: 'euro' } }))).toBe(
      'proposal.parameters.currency: expected an ISO 4217 code such as EUR',
    );
  });

  it('names envelope fields with a wrong type or missing', () => {
    expect(errorOf({ ...valid('memory_write'), justification: 5 })).toBe(
      'proposal.justification: Invalid input: expected string, received number',
    );
    const { proposal_id: _drop, ...noId } = valid('memory_write');
    expect(errorOf(noId)).toMatch(/^proposal\.proposal_id: Invalid input: expected string, received undefined$/);
    expect(
      errorOf({ ...valid('memory_write'), cited_evidence: [{ type: 'issue', url: 'javascript:alert(1)' }] }),
    ).toMatch(/proposal\.cited_evidence\.0\.url: expected an http\(s\) URL/);
    expect(errorOf({ ...valid('memory_write'), agent_id: 'not an agent' })).toMatch(
      /^proposal\.agent_id: expected an agent id/,
    );
  });

  it('reports every problem of a proposal, target and parameters together', () => {
    const err = errorOf(valid('discord_message', { target: { channel_id: 'general' }, parameters: { content: '' } }));
    expect(err).toContain('proposal.target.channel_id: expected a Discord snowflake id');
    expect(err).toContain('proposal.parameters.content: Too small');
  });

  it('refuses unknown top-level fields (strict envelope), naming the key', () => {
    expect(errorOf({ ...valid('memory_write'), run_as_root: true })).toBe('proposal: Unrecognized key: "run_as_root"');
  });

  it('refuses unknown target and parameter fields for known action types', () => {
    expect(errorOf(valid('file_write', { target: { path: 'a.txt', follow_symlinks: true } }))).toBe(
      'proposal.target: Unrecognized key: "follow_symlinks"',
    );
    expect(errorOf(valid('exec', { parameters: { command: ['ls'], shell: true } }))).toBe(
      'proposal.parameters: Unrecognized key: "shell"',
    );
    expect(errorOf({ ...valid('forgejo_pr_create'), scope_claim: { files_only: ['src/'], anything_else: 1 } })).toBe(
      'proposal.scope_claim: Unrecognized key: "anything_else"',
    );
  });

  it.each(['rm -rf', 'Memory_Write', '1abc', '', 'a'.repeat(65), 'memory-write'])(
    'refuses the malformed action_type %j',
    (t) => {
      expect(errorOf(valid('memory_write', { action_type: t }))).toMatch(/^proposal\.action_type: /);
    },
  );

  it('accepts a well-formed unknown action type with any target and parameters (it routes to a human)', () => {
    const p = parsed(
      valid('deploy_to_production', { target: { cluster: 'eu-1' }, parameters: { version: 'v2', force: true } }),
    );
    expect(p.action_type).toBe('deploy_to_production');
    expect(p.parameters).toEqual({ version: 'v2', force: true });
  });

  it('refuses an oversize proposal with a BadInputError stating the limit', () => {
    const big = valid('deploy_thing', { parameters: { blob: 'x'.repeat(MAX_PROPOSAL_BYTES) } });
    expect(() => parseProposal(big)).toThrow(BadInputError);
    expect(() => parseProposal(big)).toThrow(
      new RegExp(`^proposal: \\d+ bytes is over the ${MAX_PROPOSAL_BYTES}-byte limit$`),
    );
    // Counted in UTF-8 bytes, not characters: 100k three-byte characters are 300 kB.
    const wide = valid('deploy_thing', { parameters: { blob: '€'.repeat(100_000) } });
    expect(() => parseProposal(wide)).toThrow(/over the .*-byte limit/);
    // Just under the limit is fine.
    const ok = valid('deploy_thing', { parameters: { blob: 'x'.repeat(MAX_PROPOSAL_BYTES - 2000) } });
    expect(parseProposal(ok).action_type).toBe('deploy_thing');
  });

  it('refuses NUL bytes in paths, naming the path field', () => {
    expect(errorOf(valid('file_write', { target: { path: 'notes/a\0.txt' } }))).toBe(
      'proposal.target.path: must not contain NUL bytes',
    );
    expect(
      errorOf(
        valid('forgejo_pr_create', {
          parameters: { files_changed: ['src/ok.ts', 'src/\0x.ts'], estimated_diff_lines: 3 },
        }),
      ),
    ).toBe('proposal.parameters.files_changed.1: must not contain NUL bytes');
    expect(errorOf(valid('exec', { parameters: { command: ['ls'], cwd: 'work\0' } }))).toBe(
      'proposal.parameters.cwd: must not contain NUL bytes',
    );
    expect(errorOf(valid('exec', { parameters: { command: ['echo', 'a\0b'] } }))).toBe(
      'proposal.parameters.command.1: must not contain NUL bytes',
    );
  });

  it('refuses exec whose argv is not an array of strings, or is empty', () => {
    expect(errorOf(valid('exec', { parameters: { command: { 0: 'ls' } } }))).toMatch(
      /^proposal\.parameters\.command: Invalid input: expected array/,
    );
    expect(errorOf(valid('exec', { parameters: { command: ['ls', 7] } }))).toBe(
      'proposal.parameters.command.1: Invalid input: expected string, received number',
    );
    expect(errorOf(valid('exec', { parameters: { command: [] } }))).toMatch(
      /^proposal\.parameters\.command: Too small/,
    );
  });

  it('refuses non-objects outright', () => {
    expect(errorOf(null)).toMatch(/^proposal: Invalid input: expected object/);
    expect(errorOf([valid('memory_write')])).toMatch(/^proposal: Invalid input: expected object/);
    expect(() => parseProposal('{"proposal_id":"x"}')).toThrow(BadInputError);
  });
});

describe('ClarificationSchema', () => {
  it('needs at least one of justification, cited_evidence, scope_claim', () => {
    for (const empty of [{}, { cited_evidence: [] }]) {
      const r = ClarificationSchema.safeParse(empty);
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toBe(
        'a clarification needs at least one of justification, cited_evidence, scope_claim',
      );
    }
  });

  it('accepts each field on its own and refuses unknown fields', () => {
    expect(ClarificationSchema.parse({ justification: 'because issue 42 asks for it' })).toEqual({
      justification: 'because issue 42 asks for it',
    });
    expect(
      ClarificationSchema.parse({ cited_evidence: [{ type: 'issue', url: 'https://example.org/i/1' }] }).cited_evidence,
    ).toHaveLength(1);
    expect(ClarificationSchema.parse({ scope_claim: { max_lines: 10 } }).scope_claim).toEqual({ max_lines: 10 });
    const r = ClarificationSchema.safeParse({ justification: 'x', action_type: 'exec' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.code).toBe('unrecognized_keys');
  });
});

describe('HumanDecisionSchema', () => {
  it('accepts approve and reject from a well-formed approver, defaulting via to api', () => {
    expect(HumanDecisionSchema.parse({ decision: 'approve', approver: 'scott' })).toEqual({
      decision: 'approve',
      approver: 'scott',
      via: 'api',
    });
    expect(
      HumanDecisionSchema.parse({ decision: 'reject', approver: 'discord:1234', reason: 'no', via: 'discord' }).via,
    ).toBe('discord');
  });

  it.each([
    ['a decision word other than approve|reject', { decision: 'maybe', approver: 'scott' }, 'decision'],
    ['an approver id with spaces', { decision: 'approve', approver: 'scott smith' }, 'approver'],
    ['an unknown channel', { decision: 'approve', approver: 'scott', via: 'email' }, 'via'],
    ['a missing approver', { decision: 'approve' }, 'approver'],
  ])('refuses %s, naming the field', (_name, input, field) => {
    const r = HumanDecisionSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual([field]);
  });

  it('refuses unknown fields', () => {
    const r = HumanDecisionSchema.safeParse({ decision: 'approve', approver: 'scott', override: true });
    expect(r.success).toBe(false);
  });
});

describe('typed proposals per action type', () => {
  it('isAction narrows to the action type, with its parsed target and parameters (defaults applied)', () => {
    const p = parsed(valid('exec', { target: {}, parameters: { command: ['git', 'status'] } }));
    expect(isAction(p, 'file_write')).toBe(false);
    if (!isAction(p, 'exec')) throw new Error('expected an exec proposal');
    expectTypeOf(p).toExtend<ProposalOf<'exec'>>();
    expectTypeOf(p.parameters.command).toEqualTypeOf<string[]>();
    expectTypeOf(p.target.host).toEqualTypeOf<string>();
    expect(p.target.host).toBe('local');
    expect(p.parameters.command).toEqual(['git', 'status']);
  });

  it('knownProposal gives a union a switch narrows; an unknown action type is not in it', () => {
    const known = knownProposal(parsed(valid('forgejo_pr_create')));
    if (known?.action_type !== 'forgejo_pr_create') throw new Error('expected a forgejo_pr_create');
    expectTypeOf(known.parameters.estimated_diff_lines).toEqualTypeOf<number>();
    expect(known.parameters.files_changed).toEqual(['src/schema/validator.ts', 'src/schema/types.ts']);
    const unknown = parsed(valid('deploy_thing', { target: { env: 'prod' } }));
    expect(knownProposal(unknown)).toBeUndefined();
    expect(unknown.target).toEqual({ env: 'prod' });
  });
});

describe('targetKey and searchableTarget', () => {
  it.each([
    ['memory_write', {}, 'memory:memory'],
    ['vault_note_create', {}, 'vault:main/notes/standup.md'],
    ['issue_comment', {}, 'sscoble/speckl#42'],
    ['discord_message', {}, 'discord:123456789012345678'],
    ['forgejo_pr_create', {}, 'forgejo:sscoble/speckl'],
    ['file_write', {}, 'file:.agent-judge/workspace/out.txt'],
    ['exec', { parameters: { command: ['git', 'status'] } }, 'exec:local:git'],
    ['web_publish', {}, 'web:https://example.org/post'],
    ['financial_op', {}, 'account:ops'],
    ['impersonation', {}, 'identity:scott@example.org'],
    ['credential_rotation', {}, 'credential:forgejo-bot-token'],
  ])('%s lands on a stable target key', (type, overrides, key) => {
    expect(targetKey(parsed(valid(type, overrides)))).toBe(key);
  });

  it('an unknown action type keys on its canonical target, whatever the key order', () => {
    const a = parsed(valid('deploy_thing', { target: { b: 1, a: 2 } }));
    const b = parsed(valid('deploy_thing', { target: { a: 2, b: 1 } }));
    expect(targetKey(a)).toBe('deploy_thing:{"a":2,"b":1}');
    expect(targetKey(b)).toBe(targetKey(a));
    const long = parsed(valid('deploy_thing', { target: { x: 'y'.repeat(1000) } }));
    expect(targetKey(long).length).toBe(256);
  });

  it('searchableTarget removes quotes and backslashes so it can sit inside a visibility query', () => {
    const p = parsed(valid('deploy_thing', { target: { name: `it's "quoted" \\ here` } }));
    const s = searchableTarget(p);
    expect(s).not.toMatch(/["'\\]/);
    expect(s).toBe('deploy_thing:{_name_:_it_s __quoted__ __ here_}');
    expect(searchableTarget(parsed(valid('file_write', { target: { path: "a'b.txt" } })))).toBe('file:a_b.txt');
  });
});

describe('canonicalJson', () => {
  it('serialises equal content to equal text regardless of key order, at every depth', () => {
    const a = { z: 1, a: { y: [3, { q: 1, p: 2 }], x: null }, m: 'text' };
    const b = { m: 'text', a: { x: null, y: [3, { p: 2, q: 1 }] }, z: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[3,{"p":2,"q":1}]},"m":"text","z":1}');
  });

  it('keeps array order and drops undefined fields', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
    // Only plain data: a bare undefined has no JSON form (fingerprints and signatures refuse it).
    expect(() => canonicalJson(undefined)).toThrow(/cannot encode undefined/);
  });
});

describe('proposalWorkflowId', () => {
  it('is a fingerprint of the content, independent of proposal_id and key order', () => {
    const input = valid('forgejo_pr_create');
    const a = parsed(input);
    const b = parsed({ ...Object.fromEntries(Object.entries(input).reverse()), proposal_id: 'another-id-entirely' });
    expect(proposalWorkflowId(a)).toMatch(/^proposal-[0-9a-f]{32}$/);
    expect(proposalWorkflowId(b)).toBe(proposalWorkflowId(a));
  });

  it('treats defaults and explicit defaults alike', () => {
    const input = valid('file_write', { cited_evidence: undefined });
    const explicit = { ...input, cited_evidence: [], parameters: { ...(input.parameters as object), mode: 'create' } };
    expect(proposalWorkflowId(parsed(explicit))).toBe(proposalWorkflowId(parsed(input)));
  });

  it('changes when the justification, the scope or the action changes', () => {
    const input = valid('forgejo_pr_create');
    const base = proposalWorkflowId(parsed(input));
    const ids = [
      proposalWorkflowId(parsed({ ...input, justification: `${String(input.justification)} (revised)` })),
      proposalWorkflowId(
        parsed({
          ...input,
          scope_claim: { files_only: ['src/schema/'], max_lines: 60, no_existing_code_deletion: true },
        }),
      ),
      proposalWorkflowId(
        parsed({ ...input, cited_evidence: [{ type: 'issue', url: 'https://example.org/issues/43' }] }),
      ),
      proposalWorkflowId(
        parsed({ ...input, parameters: { files_changed: ['src/schema/validator.ts'], estimated_diff_lines: 45 } }),
      ),
    ];
    expect(new Set([base, ...ids]).size).toBe(5);
  });
});

describe('JSON Schema export', () => {
  type JsonSchema = {
    type?: string;
    properties?: Record<string, JsonSchema>;
    anyOf?: JsonSchema[];
    const?: string;
    pattern?: string;
  };

  it.each(Object.keys(SCHEMAS))('%s exports as an object schema with properties', (name) => {
    const schema = jsonSchemaOf(name as keyof typeof SCHEMAS) as JsonSchema & { $schema?: string };
    expect(schema.$schema).toMatch(/json-schema\.org/);
    // The proposal is a union of one object schema per action type (plus the catch-all).
    const branches = schema.anyOf ?? [schema];
    for (const b of branches) {
      expect(b.type).toBe('object');
      expect(Object.keys(b.properties ?? {}).length).toBeGreaterThan(0);
    }
  });

  it('spells out every known action type, and the catch-all branch cannot match a known one', () => {
    const schema = jsonSchemaOf('proposal') as JsonSchema;
    const branches = schema.anyOf ?? [];
    const consts = branches.map((b) => b.properties?.action_type?.const).filter(Boolean);
    expect(consts.sort()).toEqual([...KNOWN_ACTION_TYPES].sort());
    const catchAll = branches.find((b) => b.properties?.action_type?.const === undefined);
    const pattern = new RegExp(catchAll?.properties?.action_type?.pattern ?? '(?!)');
    for (const known of KNOWN_ACTION_TYPES) expect(pattern.test(known), known).toBe(false);
    expect(pattern.test('deploy_thing')).toBe(true);
    expect(pattern.test('memory_write_v2')).toBe(true);
    expect(pattern.test('rm -rf')).toBe(false);
  });

  it('proposal_id may be left out (named by content), every other envelope field stays required', () => {
    const schema = jsonSchemaOf('proposal') as JsonSchema & { anyOf?: Array<{ required?: string[] }> };
    for (const branch of schema.anyOf ?? []) {
      expect(branch.required).not.toContain('proposal_id');
      expect(branch.required).toEqual(expect.arrayContaining(['agent_id', 'action_type', 'justification']));
    }
  });

  it('exec parameters declare command as an array of strings, with no extra properties', () => {
    const schema = jsonSchemaOf('proposal') as JsonSchema;
    const exec = schema.anyOf?.find((b) => b.properties?.action_type?.const === 'exec');
    const params = exec?.properties?.parameters as JsonSchema & {
      additionalProperties?: boolean;
      properties: Record<string, JsonSchema & { items?: JsonSchema }>;
    };
    expect(params.properties.command?.type).toBe('array');
    expect(params.properties.command?.items?.type).toBe('string');
    expect(params.additionalProperties).toBe(false);
  });
});

describe("the proposal's user_task (optional)", () => {
  const base = parseProposal(proposal('exec', { parameters: { command: ['echo', 'hi'] } }));

  it('is in the JSON Schema export with its size limit', () => {
    const json = JSON.stringify(jsonSchemaOf('proposal'));
    expect(json).toContain('"user_task":{"type":"string","minLength":1,"maxLength":8192');
  });

  it('is refused when empty or over 8 KiB, naming the field', () => {
    for (const user_task of ['', 'x'.repeat(8 * 1024 + 1)]) {
      const r = safeParseProposal({ ...base, user_task });
      expect(r.ok ? '' : r.refusal.reason).toMatch(/proposal\.user_task/);
    }
  });

  it('leaves the content fingerprint of proposals without it unchanged, and is part of it when present', () => {
    const { user_task: _none, ...withoutField } = { ...base, user_task: undefined };
    expect(proposalWorkflowId({ ...base, user_task: undefined })).toBe(proposalWorkflowId(withoutField));
    expect(proposalWorkflowId({ ...base, user_task: 'say hi' })).not.toBe(proposalWorkflowId(base));
  });
});
