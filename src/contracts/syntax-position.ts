/**
 * Where a JSON text breaks, as a person finds it in an editor: `line 3, column 14: <the parser's words>`. JSON.parse
 * names only a character offset (Node 20: "... in JSON at position 41"), or none at the end of the text.
 */
export function jsonSyntaxProblem(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const match = /at position (\d+)/.exec(message);
  const offset = match ? Number(match[1]) : text.length;
  const { line, column } = lineAndColumn(text, offset);
  // Node 22 adds its own "(line L column C)"; the words stay the parser's.
  const words = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '');
  return `line ${line}, column ${column}: ${words}`;
}

/** 1-based line and column of a character offset (the column in UTF-16 units, as editors and JSON.parse count). */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: before.length - lastBreak };
}
