/**
 * Shell command lines as the hooks layer sees them: parsed with tree-sitter's bash grammar (`tree-sitter-bash`, run
 * by `web-tree-sitter` as WebAssembly) into the simple commands they hold, or the reason they do not reduce to such.
 *
 * Why this parser: it parses real bash (pipelines, `&&`/`||`, redirections, heredocs, subshells, `$(...)`, loops,
 * functions), it is the grammar GitHub and editors use and is released with the tree-sitter project itself, it runs
 * on Node 20 without a native build, and a parse takes well under a millisecond once loaded. mvdan/sh, the other
 * real bash parser, has no maintained JavaScript form that exposes its syntax tree (its GopherJS package is
 * deprecated; `sh-syntax` returns commands without their words), and `shell-quote` / `bash-parser` tokenise rather
 * than parse (no `$(...)` nesting, no compound commands). tree-sitter recovers from syntax errors instead of failing:
 * a tree with an error node is treated as not parsed (never allowed on the strength of a guess).
 *
 * Reduction is deliberately narrow, because a reducible line may run with no judge: a line reduces only when it is
 * provably literal, i.e. only simple commands joined by pipes, `&&`, `||`, `;` or `&`, every word made of characters
 * bash takes as themselves (no glob, tilde, brace, parameter, arithmetic, command or process substitution: see
 * {@link literalWord}), double-quoted strings with no `$` or backquote, heredocs whose body cannot expand and ends
 * where bash ends it, no backslash-newline. The check reads the words' own text, not only tree-sitter's node types:
 * where the grammar and bash disagree (a backquoted command inside a heredoc body), the text still decides. Everything
 * else is not reduced, and the judge sees it. Every command found anywhere in the tree (inside substitutions and
 * loops, inside `sh -c '...'` and `eval '...'` too) is still listed with its words, so deny rules see `rm -rf`
 * wherever it hides.
 */
import { createRequire } from 'node:module';
import type { Node as SyntaxNode, Parser as TsParser } from 'web-tree-sitter';

/** One simple command: its words (literal, quotes removed; as written when not literal) and its redirections. */
export interface SimpleCommand {
  argv: string[];
  redirects: Array<{ op: string; target: string }>;
  /** Variable assignments before the command (`FOO=bar cmd`): never allowlisted. */
  assignments: number;
  /** Every word of this command is literal (no expansion). */
  literal: boolean;
  /** The command is the second or later stage of a pipeline (it reads another command's output). */
  piped: boolean;
  /** The command sits inside a substitution, subshell, loop, function or other compound command. */
  nested: boolean;
}

export interface ParsedShell {
  /** The whole line is simple commands of literal words, joined by pipes, lists and literal redirections. */
  reducible: boolean;
  /** Why not, when not (the first construct that is not reduced). */
  why?: string;
  /** Every simple command in the line, in source order. */
  commands: SimpleCommand[];
}

/** Longest command line parsed (bytes of UTF-8); longer ones are not reduced. */
export const MAX_SHELL_LINE = 64 * 1024;
/** Most simple commands listed from one line. */
const MAX_COMMANDS = 64;

let loading: Promise<TsParser> | undefined;

/** The bash parser, loaded once per process (about 40 ms). */
export function shellParser(): Promise<TsParser> {
  loading ??= (async () => {
    const { Parser, Language } = await import('web-tree-sitter');
    await Parser.init();
    const wasm = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
    const parser = new Parser();
    parser.setLanguage(await Language.load(wasm));
    return parser;
  })();
  return loading;
}

/** Node types a reducible line may contain (besides anonymous tokens such as `&&`, `|`, `>`). */
const REDUCIBLE = new Set([
  'program',
  'list',
  'pipeline',
  'command',
  'command_name',
  'word',
  'string',
  'string_content',
  'raw_string',
  'number',
  'concatenation',
  'redirected_statement',
  'file_redirect',
  'file_descriptor',
  'heredoc_redirect',
  'heredoc_start',
  'heredoc_body',
  'heredoc_content',
  'heredoc_end',
  'comment',
]);

/** Constructs under which a command counts as nested. */
const NESTING = new Set([
  'command_substitution',
  'process_substitution',
  'subshell',
  'compound_statement',
  'for_statement',
  'c_style_for_statement',
  'while_statement',
  'if_statement',
  'case_statement',
  'function_definition',
  'arithmetic_expansion',
  'expansion',
  'negated_command',
]);

/** How deep `sh -c '...'` and `eval '...'` are parsed again for deny rules. */
const MAX_NESTED_SCRIPTS = 3;
/** Shells whose `-c` argument is a script of its own: its commands are listed (nested) for the deny rules. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/** Parses one command line (see the module comment). Never throws for the line's own sake. */
export async function parseShell(line: string): Promise<ParsedShell> {
  if (Buffer.byteLength(line, 'utf8') > MAX_SHELL_LINE) {
    return { reducible: false, why: `the command is longer than ${MAX_SHELL_LINE} bytes`, commands: [] };
  }
  if (line.includes('\0')) return { reducible: false, why: 'the command holds a NUL byte', commands: [] };
  const parser = await shellParser();
  const parsed = parseWith(parser, line, 0);
  if (parsed.commands.length === 0 && parsed.reducible) {
    return { reducible: false, why: 'no command in the line', commands: [] };
  }
  // bash removes a backslash-newline before it splits words (`r\<newline>m` is `rm`); tree-sitter splits there. The
  // line is never reduced, and the deny rules also see the line as bash joins it.
  if (/\\\r?\n/.test(line)) {
    const joined = parseWith(parser, line.replace(/\\\r?\n/g, ''), 0);
    const commands = [...parsed.commands, ...joined.commands.map((c) => ({ ...c, nested: true }))];
    return {
      reducible: false,
      why: 'the line continues over a backslash-newline',
      commands: commands.slice(0, MAX_COMMANDS),
    };
  }
  return parsed;
}

function parseWith(parser: TsParser, line: string, depth: number): ParsedShell {
  const tree = parser.parse(line);
  if (!tree) return { reducible: false, why: 'the shell parser gave no tree', commands: [] };
  try {
    const root = tree.rootNode;
    const commands: SimpleCommand[] = [];
    collectCommands(root, false, false, commands);
    if (depth < MAX_NESTED_SCRIPTS) {
      for (const script of nestedScripts(commands)) {
        if (commands.length > MAX_COMMANDS) break;
        const inner = parseWith(parser, script, depth + 1);
        commands.push(...inner.commands.map((c) => ({ ...c, nested: true })));
      }
    }
    if (root.hasError) {
      return { reducible: false, why: 'the command does not parse as bash', commands: commands.slice(0, MAX_COMMANDS) };
    }
    const why = firstIrreducible(root, line);
    const listed = commands.slice(0, MAX_COMMANDS);
    if (commands.length > MAX_COMMANDS) {
      return { reducible: false, why: `more than ${MAX_COMMANDS} commands in one line`, commands: listed };
    }
    if (commands.length === 0) return { reducible: false, why: 'no command in the line', commands: listed };
    return why === null ? { reducible: true, commands: listed } : { reducible: false, why, commands: listed };
  } finally {
    tree.delete();
  }
}

/**
 * The scripts a command runs as shell code of its own: `sh -c SCRIPT` (any shell, `-c` alone or bundled as `-ec`)
 * and `eval WORDS`. They are parsed again so a deny rule sees `bash -c 'rm -rf /'`; such a line is never reduced.
 */
function nestedScripts(commands: readonly SimpleCommand[]): string[] {
  const scripts: string[] = [];
  for (const cmd of commands) {
    const program = cmd.argv[0]?.split('/').pop() ?? '';
    if (program === 'eval') scripts.push(cmd.argv.slice(1).join(' '));
    if (!SHELLS.has(program)) continue;
    const c = cmd.argv.findIndex((a, i) => i > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(a));
    const script = c > 0 ? cmd.argv.slice(c + 1).find((a) => !a.startsWith('-')) : undefined;
    if (script !== undefined) scripts.push(script);
  }
  return scripts;
}

function firstIrreducible(node: SyntaxNode, line: string): string | null {
  if (node.isNamed && !REDUCIBLE.has(node.type)) return describe(node);
  if ((node.type === 'word' || node.type === 'number') && !literalWord(node.text)) {
    return `the word ${JSON.stringify(node.text)} is not literal (bash may expand it)`;
  }
  if (node.type === 'string' && !literalDoubleQuoted(node.text)) {
    return `the string ${JSON.stringify(node.text)} is not literal (bash may expand it)`;
  }
  if (node.type === 'heredoc_redirect') {
    const why = heredocProblem(node, line);
    if (why !== null) return why;
  }
  if (node.type === 'comment' && node.startIndex > 0 && !/[ \t\n;&|()]/.test(line[node.startIndex - 1] ?? '')) {
    return `a comment starts inside a word (${JSON.stringify(node.text.slice(0, 40))})`;
  }
  for (const c of node.children) {
    if (!c) continue;
    const found = firstIrreducible(c, line);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Why a heredoc cannot be taken as literal stdin, or null. Its body is literal only when the delimiter is quoted,
 * or when the body holds no `$`, backquote or backslash (tree-sitter does not parse a backquoted command in a body:
 * bash runs it). The body must also end exactly where bash ends it: a plain delimiter, its terminating line exactly the
 * delimiter (tabs before it for `<<-`), and no earlier line that bash would take as the end.
 */
function heredocProblem(node: SyntaxNode, line: string): string | null {
  const parts = node.namedChildren.filter((c): c is SyntaxNode => c !== null);
  const start = parts.find((c) => c.type === 'heredoc_start');
  const end = parts.find((c) => c.type === 'heredoc_end');
  const body = parts.find((c) => c.type === 'heredoc_body');
  const extra = parts.find(
    (c) => !['heredoc_start', 'heredoc_body', 'heredoc_content', 'heredoc_end'].includes(c.type),
  );
  if (extra) return `a command or redirection follows a heredoc on its line (${describe(extra)})`;
  if (!start || !end) return 'a heredoc without its end';
  const quoted = /['"\\]/.test(start.text);
  const delimiter = start.text.replace(/['"\\]/g, '');
  const plainQuote = /^(?:'[A-Za-z_][A-Za-z0-9_]*'|"[A-Za-z_][A-Za-z0-9_]*"|[A-Za-z_][A-Za-z0-9_]*)$/;
  if (!plainQuote.test(start.text)) return `the heredoc delimiter ${JSON.stringify(start.text)} is not a plain word`;
  if (end.text !== delimiter) return `the heredoc ends with ${JSON.stringify(end.text)}, not ${delimiter}`;
  const stripTabs = node.children.some((c) => c?.type === '<<-');
  const lineStart = line.lastIndexOf('\n', end.startIndex - 1) + 1;
  const lineEnd = line.indexOf('\n', end.endIndex);
  const endLine = line.slice(lineStart, lineEnd === -1 ? line.length : lineEnd);
  if ((stripTabs ? endLine.replace(/^\t+/, '') : endLine) !== delimiter) {
    return `the heredoc's last line ${JSON.stringify(endLine)} is not exactly ${delimiter}`;
  }
  const text = body?.text ?? '';
  for (const l of text.split('\n').slice(0, -1)) {
    if ((stripTabs ? l.replace(/^\t+/, '') : l) === delimiter) return 'the heredoc body holds its own delimiter line';
  }
  if (!quoted && /[$`\\]/.test(text)) {
    return 'the heredoc body expands (its delimiter is not quoted and it holds $, a backquote or a backslash)';
  }
  return null;
}

function describe(node: SyntaxNode): string {
  const text = node.text.length > 60 ? `${node.text.slice(0, 60)}…` : node.text;
  return `${node.type.replace(/_/g, ' ')} ${JSON.stringify(text)}`;
}

/**
 * A bare word is literal when every character is one bash takes as itself: letters, digits and `._/:@%+,=^-`, a
 * backslash-escaped character (not a newline), and `~` where bash does not expand it (not first, not after `=` or
 * `:`). Anything else (a glob `* ? [`, a brace, `$`, a backquote, `!`, parentheses, `#`, a control or non-ASCII
 * character) may mean something to bash that the words as written do not show: such a word is not literal.
 */
export function literalWord(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\') {
      if (i + 1 >= text.length || text[i + 1] === '\n' || text[i + 1] === '\r') return false;
      i += 1;
      continue;
    }
    if (ch === '~') {
      if (i === 0 || text[i - 1] === '=' || text[i - 1] === ':') return false;
      continue;
    }
    if (!/[A-Za-z0-9._/:@%+,=^-]/.test(ch)) return false;
  }
  return true;
}

/**
 * A double-quoted string (quotes included) is literal when nothing in it expands: no `$` followed by anything and
 * no backquote, outside a backslash escape. Checked on the text itself, whatever nodes tree-sitter made of it.
 */
function literalDoubleQuoted(text: string): boolean {
  const inner = text.slice(1, -1);
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (ch === '\\') {
      i += 1;
      continue;
    }
    if (ch === '`' || (ch === '$' && i + 1 < inner.length) || ch === '!') return false;
  }
  return true;
}

/** Removes the quoting of a literal argument node (word, string, raw string, concatenation of them). */
function literalValue(node: SyntaxNode): string | null {
  switch (node.type) {
    case 'word':
    case 'number':
      return literalWord(node.text) ? node.text.replace(/\\(.)/g, '$1') : null;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string': {
      for (const c of node.namedChildren) if (c && c.type !== 'string_content') return null;
      if (!literalDoubleQuoted(node.text)) return null;
      return node.text.slice(1, -1).replace(/\\([$`"\\\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch));
    }
    case 'concatenation': {
      let out = '';
      // An unnamed piece (a bare `$`, say) is text bash reads that the named pieces do not show.
      if (node.children.some((c) => c !== null && !c.isNamed)) return null;
      for (const c of node.namedChildren) {
        const v = c ? literalValue(c) : null;
        if (v === null) return null;
        out += v;
      }
      return out;
    }
    default:
      return null;
  }
}

function collectCommands(node: SyntaxNode, nested: boolean, piped: boolean, out: SimpleCommand[]): void {
  if (out.length > MAX_COMMANDS) return;
  if (node.type === 'command') {
    out.push(simpleCommand(node, nested, piped));
    // Substitutions inside the words are commands of their own.
    for (const c of node.namedChildren) if (c) collectCommands(c, true, false, out);
    return;
  }
  if (node.type === 'redirected_statement') {
    const body = node.childForFieldName('body');
    const before = out.length;
    if (body) collectCommands(body, nested, piped, out);
    const redirects = node.childrenForFieldName('redirect').filter((r): r is SyntaxNode => r !== null);
    // tree-sitter-bash attaches a trailing redirection to the whole statement (`a && b > f`): every command of the
    // statement is given it, which over-reports writes, never under-reports them.
    for (const cmd of out.slice(before)) cmd.redirects.push(...redirects.map(redirectOf));
    for (const r of redirects) for (const c of r.namedChildren) if (c) collectCommands(c, true, false, out);
    return;
  }
  if (node.type === 'pipeline') {
    let stage = 0;
    for (const c of node.namedChildren) {
      if (!c) continue;
      collectCommands(c, nested, piped || stage > 0, out);
      stage += 1;
    }
    return;
  }
  const inner = nested || NESTING.has(node.type);
  for (const c of node.namedChildren) if (c) collectCommands(c, inner, false, out);
}

function simpleCommand(node: SyntaxNode, nested: boolean, piped: boolean): SimpleCommand {
  const argv: string[] = [];
  const redirects: SimpleCommand['redirects'] = [];
  let assignments = 0;
  let literal = true;
  for (const c of node.namedChildren) {
    if (!c) continue;
    if (c.type === 'variable_assignment') {
      assignments += 1;
      continue;
    }
    if (c.type === 'file_redirect' || c.type === 'heredoc_redirect' || c.type === 'herestring_redirect') {
      redirects.push(redirectOf(c));
      continue;
    }
    const target = c.type === 'command_name' ? (c.firstNamedChild ?? c) : c;
    const value = literalValue(target);
    if (value === null) literal = false;
    argv.push(value ?? target.text);
  }
  if (argv.length === 0) argv.push('');
  return { argv, redirects, assignments, literal, piped, nested };
}

function redirectOf(node: SyntaxNode): { op: string; target: string } {
  if (node.type === 'heredoc_redirect') return { op: '<<', target: '' };
  if (node.type === 'herestring_redirect') return { op: '<<<', target: '' };
  let op = '';
  for (const c of node.children) if (c && !c.isNamed) op += c.text;
  const dest = node.childForFieldName('destination') ?? node.lastNamedChild;
  const value = dest ? literalValue(dest) : null;
  return { op: op || '>', target: value ?? dest?.text ?? '' };
}
