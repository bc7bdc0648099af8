/**
 * The tools the tests drive (promtool, prometheus, headless Chromium, the MCP Inspector, the conformance suite, the
 * Codex CLI, Node 22, Node 24 and OpenClaw, the real model, strace, rg and tree), as the test setup found or
 * installed them (scripts/test-tools.mjs). A missing tool fails the test that needs it with the reason: never a skip,
 * in CI or on a laptop.
 */
import { inject } from 'vitest';
import type { TestTools } from '../../scripts/test-tools.mjs';

export function toolPath(name: keyof TestTools): string {
  const path = inject('tools')[name];
  if (path) return path;
  const why = inject('missingTools')[name] ?? 'not provided by the test setup';
  throw new Error(`${name} is missing (${why}); run \`node scripts/test-tools.mjs\` to install the test tools`);
}
