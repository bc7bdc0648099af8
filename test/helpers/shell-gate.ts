/**
 * The one place the shell differential test (test/security/shell-differential.test.ts) calls the gate: parse the
 * line, take the default policy's verdict. Kept to the two public calls (`parseShell`, `shellVerdict`) so that the
 * gate's internals can be rewritten without touching the test, and so that a run against an older checkout only has
 * to repoint these imports.
 */
import { parseShell } from '../../src/gate/shell/parse';
import { shellVerdict } from '../../src/gate/shell/rules';
import { defaultPolicyWith } from '../../src/policy/load';

export interface GateAnswer {
  kind: 'allow' | 'deny' | 'judge';
  /** The rule (allow, deny) or the reason (judge), for the failure message. */
  detail: string;
  /** The names of the line's commands as the parser lists them (`argv[0]` of each, path stripped). */
  programs: string[];
}

const { shell, files } = defaultPolicyWith().spec.hooks;
/** The protected path components of the default policy (`spec.hooks.files.protect`), lower-case. */
export const DEFAULT_PROTECT: readonly string[] = files.protect.map((p) => p.toLowerCase());

/** The default policy's verdict on `line`, run in `root` (the only hook root). */
export async function gateVerdict(line: string, root: string): Promise<GateAnswer> {
  const parsed = await parseShell(line);
  const v = shellVerdict(parsed, shell, { cwd: root, roots: [root], protect: DEFAULT_PROTECT });
  const detail = v.kind === 'judge' ? v.why : v.rule;
  const programs = parsed.commands.map((c) => (c.argv[0] ?? '').split('/').pop() ?? '');
  return { kind: v.kind, detail, programs };
}
