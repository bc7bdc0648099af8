/**
 * Issue 37's findings, one regression test each: shell lines the hook gate allowed at once (no judge, no person) that
 * made bash run or read what the analysis did not see. Each case failed before the fix; the differential test
 * (test/security/shell-differential.test.ts) proves the general property on generated lines.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseShell } from '../../src/gate/shell/parse';
import { shellVerdict } from '../../src/gate/shell/rules';
import { MAX_WALK_ENTRIES } from '../../src/gate/shell/walk';
import { defaultPolicyWith } from '../../src/policy/load';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'aj-holes-')));
const root = join(base, 'project');
for (const dir of ['src/lib', 'docs', '.agent-judge', '.git']) mkdirSync(join(root, dir), { recursive: true });
writeFileSync(join(root, '.agent-judge', 'capability.key'), 'CANARY-KEY');
writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n');
writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
writeFileSync(join(root, 'README.md'), '# readme\n');
// What an agent can make with one ordinary Write: files named like options.
writeFileSync(join(root, '-exec'), '');
writeFileSync(join(root, '-delete'), '');
symlinkSync('/etc', join(root, 'etc-link'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const policy = defaultPolicyWith();
const shell = policy.spec.hooks.shell;
const protect = policy.spec.hooks.files.protect.map((p) => p.toLowerCase());
const where = { cwd: root, roots: [root], protect };

async function verdict(line: string, cwd = root) {
  return shellVerdict(await parseShell(line), shell, { ...where, cwd });
}

const kinds = async (lines: readonly string[], cwd = root) =>
  Object.fromEntries(await Promise.all(lines.map(async (l) => [l, (await verdict(l, cwd)).kind] as const)));

describe('only a provably literal line runs at once', () => {
  it('a backquoted command in an unquoted heredoc body is judged (bash runs it; tree-sitter shows text)', async () => {
    const line = 'cat <<EOF\n`id -un > x; sudo -n true`\nEOF';
    expect(await verdict(line)).toMatchObject({
      kind: 'judge',
      why: expect.stringContaining('heredoc body expands') as string,
    });
    // $(...) and a backslash too; a quoted delimiter keeps the body literal, and a body with none is literal.
    expect(await kinds(['cat <<EOF\n$(id)\nEOF', 'cat <<EOF\na\\\nb\nEOF'])).toEqual({
      'cat <<EOF\n$(id)\nEOF': 'judge',
      'cat <<EOF\na\\\nb\nEOF': 'judge',
    });
    expect(await verdict("cat <<'EOF'\n`id` $HOME\nEOF")).toMatchObject({ kind: 'allow' });
    expect(await verdict('wc -l <<EOF\nplain text\nEOF')).toMatchObject({ kind: 'allow' });
  });

  it('a heredoc that bash ends elsewhere than the parser is judged', async () => {
    for (const line of [
      'cat <<EOF\nEOF \nls\nEOF',
      'cat <<-EOF\n  EOF\nEOF',
      'cat <<E"O"F\nx\nEOF',
      'cat <<EOF | sh\nid\nEOF',
    ]) {
      expect((await verdict(line)).kind, JSON.stringify(line)).not.toBe('allow');
    }
  });

  it('globs that bash expands into option-named files are judged, whatever the program', async () => {
    expect(
      await kinds(['find . ?exec sh pwn.sh \\;', 'find . ?delete', 'find . [-]exec id \\;', 'find . *exec']),
    ).toEqual({
      'find . ?exec sh pwn.sh \\;': 'judge',
      'find . ?delete': 'judge',
      'find . [-]exec id \\;': 'judge',
      'find . *exec': 'judge',
    });
    expect((await verdict('git diff [-]-output=x')).kind).toBe('judge');
    expect((await verdict('ls *.md')).kind).toBe('judge');
    // Quoted, the same characters are text: find's own -name pattern is fine.
    expect((await verdict("find . -name '*.ts'")).kind).toBe('allow');
  });

  it('tildes, braces, $ and ! in bare words are judged, also after = (bash expands a=~/x)', async () => {
    for (const line of [
      'cat ~/.bashrc',
      'echo a=~/x',
      'cat {a,b}.ts',
      'echo $HOME',
      'echo "$(id)"',
      "echo $'\\x41'",
      'ls !(x)',
    ]) {
      expect((await verdict(line)).kind, line).not.toBe('allow');
    }
    expect((await verdict('git log --oneline HEAD~3')).kind).toBe('allow');
  });
});

describe("an allowlisted program's operands are paths the gate checks", () => {
  it('grep and rg operands stay inside the roots and off files.protect (the pattern aside)', async () => {
    expect(
      await kinds(['grep -r "" .agent-judge/capability.key', 'grep root /etc/passwd', 'rg key .agent-judge']),
    ).toEqual({
      'grep -r "" .agent-judge/capability.key': 'judge',
      'grep root /etc/passwd': 'judge',
      'rg key .agent-judge': 'judge',
    });
    expect((await verdict('grep -n export src/a.ts')).kind).toBe('allow');
    // The pattern is not a path: a pattern that looks like one is fine.
    expect((await verdict('grep -rn /etc/passwd src')).kind).toBe('allow');
  });

  it('a recursive read of a tree holding a protected name is judged; of a clean tree it runs', async () => {
    expect(await verdict('grep -rn CANARY .')).toMatchObject({
      kind: 'judge',
      why: expect.stringMatching(/reads every file under "\.".*(\.agent-judge|\.git)/) as string,
    });
    expect((await verdict('grep -rn CANARY')).kind).toBe('judge'); // no operand: the working directory
    expect((await verdict('rg CANARY')).kind).toBe('judge');
    expect(await kinds(['grep -rn export src', 'rg export src', 'rg -n export src docs'])).toEqual({
      'grep -rn export src': 'allow',
      'rg export src': 'allow',
      'rg -n export src docs': 'allow',
    });
    expect((await verdict('grep -n export src/a.ts', join(root, 'src'))).kind).toBe('allow');
  });

  it('a link in a walked tree leading out of the roots is judged; so is a tree too large to check', async () => {
    const linked = join(root, 'linked');
    mkdirSync(linked);
    symlinkSync('/etc', join(linked, 'out'));
    expect(await verdict('grep -rn root linked')).toMatchObject({
      kind: 'judge',
      why: expect.stringContaining('link') as string,
    });
    const big = join(root, 'big');
    mkdirSync(big);
    for (let i = 0; i <= MAX_WALK_ENTRIES; i++) writeFileSync(join(big, `f${i}`), '');
    expect(await verdict('rg x big')).toMatchObject({
      kind: 'judge',
      why: expect.stringContaining('too many') as string,
    });
  });

  it('a path through a link is resolved as the kernel does: link/.. is the parent of its target', async () => {
    expect(await verdict('cat etc-link/../etc/passwd')).toMatchObject({
      kind: 'judge',
      why: expect.stringContaining('outside the hook roots') as string,
    });
  });

  it('a line run from a working directory outside the roots, or in a protected one, is judged', async () => {
    expect((await verdict('ls', base)).kind).toBe('judge');
    expect((await verdict('ls', join(root, '.agent-judge'))).kind).toBe('judge');
  });
});

describe('the allowlist reads, never writes', () => {
  it('git branch lists, never creates; file takes no option (file -C writes a .mgc)', async () => {
    expect(await kinds(['git branch', 'git branch -a', 'git branch --show-current'])).toEqual({
      'git branch': 'allow',
      'git branch -a': 'allow',
      'git branch --show-current': 'allow',
    });
    expect(
      await kinds(['git branch evil', 'file -C -m README.md', 'tree -o out', 'rg --pre sh x src', 'find . -fprint x']),
    ).toEqual({
      'git branch evil': 'judge',
      'file -C -m README.md': 'judge',
      'tree -o out': 'judge',
      'rg --pre sh x src': 'judge',
      'find . -fprint x': 'judge',
    });
    expect((await verdict('file README.md')).kind).toBe('allow');
  });

  it('every default entry with no options list allows none', async () => {
    for (const entry of shell.allow.filter((e) => !e.options || e.options.length === 0)) {
      expect((await verdict(`${entry.command} ${entry.subcommands?.[0] ?? ''} --help`)).kind, entry.command).toBe(
        'judge',
      );
    }
  });

  it('`--` is read only for git (paths after it); for grep or find it is judged', async () => {
    expect((await verdict('git diff -- src/a.ts')).kind).toBe('allow');
    expect((await verdict('git log -- /etc/passwd')).kind).toBe('judge');
    expect((await verdict('grep -- -r /etc/passwd')).kind).toBe('judge');
    expect((await verdict('find -- -exec')).kind).toBe('judge');
  });

  it('only /dev/null is written', async () => {
    expect(
      await kinds(['ls > out', 'ls 2> err', 'ls &> all', 'ls >> log', 'cat <> README.md', 'ls >/dev/null 2>&1']),
    ).toEqual({
      'ls > out': 'judge',
      'ls 2> err': 'judge',
      'ls &> all': 'judge',
      'ls >> log': 'judge',
      'cat <> README.md': 'judge',
      'ls >/dev/null 2>&1': 'allow',
    });
  });
});

describe('deny rules see through wrappers, nested scripts and line continuations', () => {
  it.each([
    'command rm -rf /',
    'env sudo id',
    'env FOO=1 sudo id',
    'nice -n 5 rm -rf build',
    'timeout 5 sudo id',
    'nohup rm -rf build',
    'stdbuf -o0 sudo id',
    'find . | xargs rm -rf',
    'exec sudo id',
    'time sudo id',
    "bash -c 'rm -rf /'",
    "sh -ec 'sudo id'",
    "eval 'sudo id'",
    'r\\\nm -rf /',
    'rm --rec --force build',
    'nice env timeout 5 sudo id',
  ])('%j is refused', async (line) => {
    expect(await verdict(line)).toMatchObject({ kind: 'deny' });
  });
});
