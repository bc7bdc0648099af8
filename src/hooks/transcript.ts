/**
 * The user's task as a runtime's session transcript records it: the first message the user typed (Claude Code's
 * transcript is JSON Lines, one `{type: "user", message: {role: "user", content}}` per user turn). Untrusted text,
 * read only from the runtime's own transcript folder, bounded, and cached per transcript.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import type { HookRuntime } from '../contracts/hooks';

/** The most of a transcript read to find the first user message. */
const MAX_READ = 256 * 1024;
const cache = new Map<string, string | null>();

/** The folder a runtime keeps its transcripts in: nothing outside it is read. */
function transcriptDir(runtime: HookRuntime): string | null {
  return runtime === 'claude-code' ? join(homedir(), '.claude', 'projects') : null;
}

/** The first user message of `path`, or undefined (no such file, not under the runtime's folder, none found). */
export function firstUserMessage(path: string, runtime: HookRuntime, dir = transcriptDir(runtime)): string | undefined {
  if (dir === null || !path.endsWith('.jsonl')) return undefined;
  if (cache.has(path)) return cache.get(path) ?? undefined;
  let found: string | null = null;
  try {
    const real = realpathSync(path);
    if (!real.startsWith(realpathSync(dir) + sep) || !statSync(real).isFile()) return undefined;
    const fd = openSync(real, 'r');
    const buf = Buffer.alloc(MAX_READ);
    let n: number;
    try {
      n = readSync(fd, buf, 0, MAX_READ, 0);
    } finally {
      closeSync(fd);
    }
    for (const line of buf.subarray(0, n).toString('utf8').split('\n')) {
      found = userText(line);
      if (found !== null) break;
    }
  } catch {
    return undefined;
  }
  // Only a found task is cached: an empty transcript may get its first message later.
  if (found !== null) cache.set(path, found);
  return found ?? undefined;
}

function userText(line: string): string | null {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  const e = entry as { type?: unknown; isMeta?: unknown; message?: { role?: unknown; content?: unknown } };
  if (e.type !== 'user' || e.isMeta === true || e.message?.role !== 'user') return null;
  const content = e.message.content;
  if (typeof content === 'string') return content.trim() || null;
  if (Array.isArray(content)) {
    const texts = (content as unknown[])
      .filter(
        (c): c is { type: 'text'; text: string } =>
          c !== null &&
          typeof c === 'object' &&
          (c as { type?: unknown }).type === 'text' &&
          typeof (c as { text?: unknown }).text === 'string',
      )
      .map((c) => c.text);
    return texts.length > 0 ? texts.join('\n').trim() || null : null;
  }
  return null;
}
