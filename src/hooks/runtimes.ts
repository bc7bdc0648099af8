/** The hook adapter of each runtime (one file per runtime beside this one). */
import type { HookRuntime } from '../contracts/hooks';
import type { HookAdapter } from './adapter';
import { claudeCode } from './claude-code';
import { codex } from './codex';
import { gemini } from './gemini';

const ADAPTERS: Record<HookRuntime, HookAdapter> = { 'claude-code': claudeCode, codex, gemini };

/** The adapter that reads and answers `runtime`'s hooks. */
export function hookAdapter(runtime: HookRuntime): HookAdapter {
  return ADAPTERS[runtime];
}
