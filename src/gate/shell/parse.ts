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
 * Reduction is deliberately narrow: a line reduces when it is only simple commands of literal words (quoted or not,
 * no expansion of any kind) joined by pipes, `&&`, `||`, `;` or `&`, with literal redirections. Everything else (a
 * variable, `$(...)`, a glob brace or tilde, a loop, a subshell, a function, an assignment) is not reduced, and the
 * judge sees it. Every command found anywhere in the tree (inside substitutions and loops too) is still listed with
 * its words as written, so deny rules see `rm -rf` wherever it hides.
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

/** Parses one command line (see the module comment). Never throws for the line's own sake. */
export async function parseShell(line: string): Promise<ParsedShell> {
  if (Buffer.byteLength(line, 'utf8') > MAX_SHELL_LINE) {
    return { reducible: false, why: `the command is longer than ${MAX_SHELL_LINE} bytes`, commands: [] };
  }
  if (line.includes('\0')) return { reducible: false, why: 'the command holds a NUL byte', commands: [] };
  const parser = await shellParser();
  const tree = parser.parse(line);
  if (!tree) return { reducible: false, why: 'the shell parser gave no tree', commands: [] };
  try {
    const root = tree.rootNode;
    const commands: SimpleCommand[] = [];
    collectCommands(root, false, false, commands);
    if (root.hasError) {
      return { reducible: false, why: 'the command does not parse as bash', commands: commands.slice(0, MAX_COMMANDS) };
    }
    const why = firstIrreducible(root);
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

function firstIrreducible(node: SyntaxNode): string | null {
  if (node.isNamed && !REDUCIBLE.has(node.type)) return describe(node);
  if (node.type === 'word' && !literalWord(node.text)) return `the word ${JSON.stringify(node.text)} expands`;
  if (node.type === 'heredoc_redirect' || node.type === 'heredoc_body') {
    // A heredoc body expands unless its delimiter is quoted; tree-sitter shows the expansions as child nodes.
    for (const c of node.namedChildren) {
      if (c && !['heredoc_start', 'heredoc_body', 'heredoc_content', 'heredoc_end'].includes(c.type)) {
        return describe(c);
      }
    }
  }
  for (const c of node.children) {
    if (!c) continue;
    const found = firstIrreducible(c);
    if (found !== null) return found;
  }
  return null;
}

function describe(node: SyntaxNode): string {
  const text = node.text.length > 60 ? `${node.text.slice(0, 60)}…` : node.text;
  return `${node.type.replace(/_/g, ' ')} ${JSON.stringify(text)}`;
}

/**
 * A bare word is literal when nothing in it expands: no `$`, backquote, brace or tilde expansion, and no glob
 * pattern that could reach `.` or `..` (a `*` or `?` elsewhere only matches names inside the directory written).
 */
function literalWord(text: string): boolean {
  if (/[$`{}]/.test(text) || text.startsWith('~')) return false;
  for (const part of text.split('/')) {
    if (/[*?[]/.test(part) && part.startsWith('.')) return false;
  }
  return true;
}

/** Removes the quoting of a literal argument node (word, string, raw string, concatenation of them). */
function literalValue(node: SyntaxNode): string | null {
  switch (node.type) {
    case 'word':
    case 'number':
      return literalWord(node.text) ? node.text.replace(/\\(.)/gs, '$1').replace(/\\\n/g, '') : null;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string': {
      for (const c of node.namedChildren) if (c && c.type !== 'string_content') return null;
      return node.text.slice(1, -1).replace(/\\([$`"\\\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch));
    }
    case 'concatenation': {
      let out = '';
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
