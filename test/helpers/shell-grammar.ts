/**
 * A seeded generator of shell lines for the gate's differential test (test/security/shell-differential.test.ts,
 * issue 37): lines an agent could send, built from a small grammar over the default allowlist's programs and the
 * dangerous ones, so that the test can run every line the gate allows at once and watch what it really does.
 *
 * Why a grammar and not a list: the holes the gate has had (a backtick in an unquoted heredoc body, an option
 * smuggled in by a glob that matches a file named `-exec`, grep reading an operand outside the roots, an allowlisted
 * program that writes) are combinations, and a list only holds the combinations someone thought of. Every
 * construct below is there because bash gives it a meaning the parser has to see: quoting of every kind,
 * backslash-newline inside a word, globs that match option-named files, tildes, braces, substitutions, heredocs,
 * here-strings, redirections, wrappers that run their arguments, pipes and lists.
 *
 * Pure and deterministic: line `i` of seed `s` depends on `(s, i)` only, so one failing line can be regenerated
 * alone (`lineAt`). No dependency: a 32-bit PRNG (mulberry32) is all it needs.
 */

import {
  INSIDE,
  INSIDE_MORE,
  OUTSIDE,
  PROTECTED,
  OPTION_FILES,
  GLOBS,
  TILDES,
  BRACES,
  SUBSTITUTIONS,
  TEXT,
  PROGRAMS,
  GIT_SUB,
  GIT_OTHER,
  GIT_GLOBAL,
  DANGEROUS,
  WRAPPERS,
  ASSIGNMENTS,
  REDIRECTS,
  SEPARATORS,
  HEREDOC_BODIES,
} from './shell-grammar-words';

/** A PRNG in [0, 1) from a 32-bit seed (mulberry32: tiny, fast, good enough to spread choices). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rand, p: number): boolean => r() < p;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** One word as written, quoted in one of bash's ways (the value is the same; only the parser's view differs). */
function quote(r: Rand, w: string): string {
  if (w === '' || /[\s'"\\$`]/.test(w) || chance(r, 0.55)) return w === '' ? pick(r, ["''", '""']) : w;
  switch (int(r, 0, 8)) {
    case 0:
      return `'${w}'`;
    case 1:
      return `"${w}"`;
    case 2:
      return `$'${w}'`;
    case 3: // half quoted: "sr"c
      return w.length > 1 ? `"${w.slice(0, 1)}"${w.slice(1)}` : `"${w}"`;
    case 4: // a backslash before a letter (removed by bash)
      return w.length > 1 ? `${w.slice(0, 1)}\\${w.slice(1)}` : `\\${w}`;
    case 5: // backslash-newline inside the word (a line continuation: bash joins the halves)
      return w.length > 1 ? `${w.slice(0, 1)}\\\n${w.slice(1)}` : w;
    case 6:
      return `''${w}`;
    case 7:
      return `$"${w}"`;
    default:
      return w.length > 2 ? `${w.slice(0, 1)}'${w.slice(1, 2)}'${w.slice(2)}` : w;
  }
}

/** An operand of a path-taking program: mostly inside, often outside, protected, option-named, globbed or odd. */
function pathOperand(r: Rand): string {
  const x = r();
  if (x < 0.38) return quote(r, pick(r, chance(r, 0.7) ? INSIDE : INSIDE_MORE));
  if (x < 0.5) return quote(r, pick(r, OUTSIDE));
  if (x < 0.62) return quote(r, pick(r, PROTECTED));
  if (x < 0.7) return quote(r, pick(r, OPTION_FILES));
  if (x < 0.85) return pick(r, GLOBS);
  if (x < 0.9) return pick(r, TILDES);
  if (x < 0.94) return pick(r, BRACES);
  return pick(r, SUBSTITUTIONS);
}

/** Splits an option fragment into words, quoting each on its own. */
const words = (r: Rand, fragment: string): string[] =>
  fragment
    .split(' ')
    .filter((w) => w !== '')
    .map((w) => quote(r, w));

function allowlisted(r: Rand, name: string): string[] {
  const spec = PROGRAMS[name]!;
  const out: string[] = [quote(r, name)];
  const nOpts = int(r, 0, 2);
  for (let i = 0; i < nOpts; i += 1) {
    const bad = spec.bad.length > 0 && (spec.good.length === 0 || chance(r, 0.3));
    out.push(...words(r, pick(r, bad ? spec.bad : spec.good)));
  }
  if (spec.operands === 'pattern') {
    if (!out.includes('--files'))
      out.push(quote(r, pick(r, ['foo', 'TODO', 'import', 'root', 'CANARY', '', '.', 'x'])));
  } else if (spec.operands === 'text') {
    for (let i = int(r, 0, 3); i > 0; i -= 1) out.push(chance(r, 0.7) ? quote(r, pick(r, TEXT)) : pathOperand(r));
    return out;
  } else if (spec.operands === 'programs') {
    for (let i = int(r, 1, 2); i > 0; i -= 1)
      out.push(quote(r, pick(r, ['node', 'git', 'ls', 'sh', '/etc/passwd', '.env', 'pwn.sh'])));
    return out;
  } else if (spec.operands === 'none') {
    if (chance(r, 0.2)) out.push(pathOperand(r));
    return out;
  }
  for (let i = int(r, 0, 2); i > 0; i -= 1) out.push(pathOperand(r));
  // Options after operands (GNU tools take them anywhere), sometimes.
  if (chance(r, 0.1))
    out.push(...words(r, pick(r, spec.bad.length > 0 ? spec.bad : spec.good.length > 0 ? spec.good : ['-x'])));
  return out;
}

function git(r: Rand): string[] {
  const out = [quote(r, 'git')];
  if (chance(r, 0.08)) out.push(...words(r, pick(r, GIT_GLOBAL)));
  if (chance(r, 0.08)) return [...out, ...words(r, pick(r, GIT_OTHER))];
  const sub = pick(r, Object.keys(GIT_SUB));
  const spec = GIT_SUB[sub]!;
  out.push(quote(r, sub));
  for (let i = int(r, 0, 2); i > 0; i -= 1) out.push(...words(r, pick(r, chance(r, 0.3) ? spec.bad : spec.good)));
  if (chance(r, 0.12)) out.push(pathOperand(r));
  return out;
}

/** One simple command, with a wrapper or assignment sometimes, and redirections sometimes. */
function command(r: Rand): string {
  const x = r();
  let argv: string[];
  if (x < 0.62) argv = allowlisted(r, pick(r, Object.keys(PROGRAMS)));
  else if (x < 0.84) argv = git(r);
  else argv = [pick(r, DANGEROUS)];
  if (chance(r, 0.07)) argv.unshift(pick(r, WRAPPERS));
  if (chance(r, 0.04)) argv.unshift(pick(r, ASSIGNMENTS));
  let line = argv.join(' ');
  for (let i = chance(r, 0.25) ? int(r, 1, 2) : 0; i > 0; i -= 1) line += ` ${pick(r, REDIRECTS)}`;
  return line;
}

/** A heredoc feeding cat or grep: delimiter quoted or not, `<<-` with tabs, a body bash may expand. */
function heredoc(r: Rand): string {
  const delim = pick(r, ['EOF', "'EOF'", '"EOF"', 'E\\OF', 'END']);
  const bare = delim.replace(/['"\\]/g, '');
  const dash = chance(r, 0.2);
  const body = pick(r, HEREDOC_BODIES);
  const reader = pick(r, ['cat', 'cat -n', 'grep hello', 'wc -l', 'head -5', 'git log --oneline', 'sh']);
  const tail = chance(r, 0.3) ? pick(r, [' | wc -l', ' > out.txt', ' && ls', ' 2>/dev/null']) : '';
  const tab = dash ? '\t' : '';
  return `${reader} <<${dash ? '-' : ''}${delim}${tail}\n${tab}${body.replace(/\n/g, `\n${tab}`)}\n${tab}${bare}`;
}

/** A clean allowlisted command: the program, an allowed option sometimes, an operand inside the project. */
function clean(r: Rand): string[] {
  const name = pick(r, [...Object.keys(PROGRAMS), 'git', 'git']);
  if (name === 'git') {
    const sub = pick(r, Object.keys(GIT_SUB));
    return ['git', sub, ...words(r, pick(r, GIT_SUB[sub]!.good))];
  }
  const spec = PROGRAMS[name]!;
  const out = [name];
  if (spec.good.length > 0 && chance(r, 0.5)) out.push(...words(r, pick(r, spec.good)));
  if (spec.operands === 'pattern') out.push(pick(r, ['foo', 'TODO', 'import']));
  if (spec.operands === 'text')
    out.push(
      pick(
        r,
        TEXT.filter((t) => t !== ''),
      ),
    );
  if (spec.operands === 'programs') out.push(pick(r, ['node', 'git', 'ls']));
  if (spec.operands !== 'none' && spec.operands !== 'programs' && chance(r, 0.7)) out.push(pick(r, INSIDE));
  return out;
}

/**
 * A probe: one clean allowlisted command with exactly one thing changed (a refused option, a risky operand, a
 * redirection, a wrapper, an assignment, a heredoc, a quoting twist). Most of what the gate gets wrong is one step
 * away from what it must allow, and a line with several changes is judged for the first one.
 */
function probe(r: Rand): string {
  const argv = clean(r);
  const name = argv[0]!;
  const bad = name === 'git' ? GIT_SUB[argv[1]!]!.bad : PROGRAMS[name]!.bad;
  switch (int(r, 0, 11)) {
    case 0:
    case 1:
      if (bad.length > 0) argv.splice(int(r, 1, argv.length), 0, ...words(r, pick(r, bad)));
      break;
    case 2:
    case 3:
    case 4:
      argv.push(pathOperand(r));
      break;
    case 5:
      argv.push(pick(r, [...GLOBS, ...OPTION_FILES]));
      break;
    case 6:
      return `${argv.join(' ')} ${pick(r, REDIRECTS)}`;
    case 7:
      return `${pick(r, [...WRAPPERS, ...ASSIGNMENTS])} ${argv.join(' ')}`;
    case 8:
      return heredoc(r);
    case 9:
      return argv.map((w) => quote(r, w)).join(' ');
    case 10:
      return `${argv.join(' ')}${pick(r, SEPARATORS)}${clean(r).join(' ')}`;
    default:
      argv.push(pick(r, [...TILDES, ...BRACES, ...SUBSTITUTIONS]));
  }
  return argv.join(' ');
}

/** A whole line: commands joined by pipes and lists, sometimes grouped, substituted, commented or heredoc'd. */
function line(r: Rand): string {
  if (chance(r, 0.45)) return probe(r);
  if (chance(r, 0.06)) return heredoc(r);
  const n = chance(r, 0.6) ? 1 : int(r, 2, 3);
  let out = command(r);
  for (let i = 1; i < n; i += 1) out += pick(r, SEPARATORS) + command(r);
  const y = r();
  if (y < 0.03) out = `(${out})`;
  else if (y < 0.05) out = `{ ${out}; }`;
  else if (y < 0.07) out = `echo $(${out})`;
  else if (y < 0.08) out = `for f in src/*.ts; do ${out}; done`;
  else if (y < 0.09) out = `if true; then ${out}; fi`;
  else if (y < 0.1) out = `! ${out}`;
  else if (y < 0.11) out = `f() { ${out}; }; f`;
  else if (y < 0.12) out = `[[ -f .env ]] && ${out}`;
  else if (y < 0.13) out = `(( 1 )) && ${out}`;
  if (chance(r, 0.05)) out += pick(r, [' # comment', ' #$(touch PWNED)', '  # `id`', '#notacomment']);
  return out;
}

/** Line `index` of the sample for `seed`: independent of every other line. */
export function lineAt(seed: number, index: number): string {
  const r = prng((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  r();
  return line(r);
}

/** `count` lines for `seed` (line i is `lineAt(seed, i)`). */
export function generateLines(seed: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => lineAt(seed, i));
}
