import { readFile } from 'node:fs/promises';
import { AgentJudgeError, BadInputError, LimitExceededError, PolicyError } from '../contracts/errors';
import { jsonTextDepthProblem } from '../contracts/json-depth';
import { jsonForDisplay } from '../contracts/untrusted-text';
import { jsonSyntaxProblem } from '../contracts/syntax-position';

/**
 * Prints one JSON document on stdout: what scripts read. Written by the one display rule for JSON
 * (`jsonForDisplay`): it parses to the same value, but an agent's direction override, zero-width space or fake
 * ✅ is a `\u` escape, so `list` or `status --json` on a terminal cannot reorder, hide or fake anything.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${jsonForDisplay(JSON.stringify(value, null, 2))}\n`);
}

/**
 * Reads a JSON document from a file path or `-` (stdin); bad JSON is bad input (exit 2). Nesting
 * is bounded before `JSON.parse`, which would otherwise build a value too deep for anything after it.
 */
export async function readJsonInput(source: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = source === '-' ? await readStdin() : await readFile(source, 'utf8');
  } catch (err) {
    throw new BadInputError(`${what}: cannot read ${source === '-' ? 'stdin' : source} (${(err as Error).message})`);
  }
  const tooDeep = jsonTextDepthProblem(text, what);
  if (tooDeep) throw new BadInputError(tooDeep);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadInputError(`${what}: not valid JSON (${jsonSyntaxProblem(text, err)})`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Exit code of a request a per-agent limit refused (3 is a KNOCK denied or a breached threshold). */
export const LIMIT_EXCEEDED_EXIT_CODE = 4;

/** Exit codes: 0 ok, 2 bad input, 4 a per-agent limit, 1 anything else. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof BadInputError || err instanceof PolicyError) return 2;
  if (err instanceof LimitExceededError) return LIMIT_EXCEEDED_EXIT_CODE;
  if (err && typeof err === 'object' && (err as { exitCode?: unknown }).exitCode === 2) return 2;
  return 1;
}

/**
 * One readable line on stderr, whatever the error: messages of our own errors can quote input
 * (`JSON.parse` quotes the text around a syntax error, newlines included), so every kind is flattened
 * here, in the one place that prints errors, rather than at each throw.
 */
export function describeError(err: unknown): string {
  return `agent-judge: ${errorText(err)}`.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ');
}

function errorText(err: unknown): string {
  if (err instanceof AgentJudgeError) return err.message;
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error && cause.message !== err.message ? ` (${cause.message})` : '';
    return `${err.message}${detail}`;
  }
  return String(err);
}
