/** The hook adapter of each runtime (one file per runtime beside this one). */
import type { GateRuntime } from '../contracts/hooks';
import type { HookAdapter } from './adapter';
import { claudeCode } from './claude-code';
import { codex } from './codex';
import { gemini } from './gemini';
import { openclaw } from './openclaw';

const ADAPTERS: Record<GateRuntime, HookAdapter> = { 'claude-code': claudeCode, codex, gemini, openclaw };

/** The adapter that reads and answers `runtime`'s hooks. */
export function hookAdapter(runtime: GateRuntime): HookAdapter {
  return ADAPTERS[runtime];
}
