/**
 * `agent-judge hook doctor <runtime>`: proves the hook is active. It reads agent-judge's pre-tool entry from the
 * runtime's own settings file, runs that command exactly as the runtime does (`sh -c`, the hook input on stdin, the
 * project as working directory, the entry's timeout) with one harmless call (a listing the policy runs without a
 * proposal), and looks for that call in the gate's audit log. It also says whether the runtime itself will run the
 * hook (src/hooks/trust.ts): a hook the runtime skips proves nothing by answering.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentJudgeError } from '../contracts/errors';
import type { HookRuntime } from '../contracts/hooks';
import { readRunningDev } from '../config/user-state';
import { hooksAuditLogPath } from '../audit/mcp-log';
import { scopeOf } from './hook-install';
import { printJson } from './io';

/** The pre-tool event each runtime's settings name. */
const PRE_EVENT: Record<HookRuntime, string> = {
  'claude-code': 'PreToolUse',
  codex: 'PreToolUse',
  gemini: 'BeforeTool',
};

/** How long the audit line may take to appear after the gate answered (it is written off the call's latency). */
const AUDIT_WAIT_MS = 5000;

/** One harmless call in the runtime's own hook input: a listing, which the default policy runs without a proposal. */
function harmlessInput(runtime: HookRuntime, dir: string, sessionId: string): Record<string, unknown> {
  const base = { session_id: sessionId, cwd: dir, hook_event_name: PRE_EVENT[runtime] };
  switch (runtime) {
    case 'claude-code':
      return {
        ...base,
        transcript_path: '',
        permission_mode: 'default',
        tool_name: 'Glob',
        tool_input: { pattern: 'README*' },
        tool_use_id: `toolu_doctor_${sessionId.slice(-12)}`,
      };
    case 'codex':
      return {
        ...base,
        turn_id: 'doctor',
        transcript_path: null,
        model: 'doctor',
        permission_mode: 'default',
        tool_name: 'Bash',
        tool_input: { command: 'pwd' },
        tool_use_id: `call_doctor_${sessionId.slice(-12)}`,
      };
    case 'gemini':
      return {
        ...base,
        transcript_path: '',
        timestamp: new Date().toISOString(),
        tool_name: 'list_directory',
        tool_input: { dir_path: dir },
      };
  }
}

/** agent-judge's pre-tool entry in the settings (as install recognises its own), or null. */
function ourPreEntry(
  settings: Record<string, unknown>,
  runtime: HookRuntime,
  ours: (hook: Record<string, unknown>, runtime: HookRuntime) => boolean,
): Record<string, unknown> | null {
  const groups = (settings.hooks as Record<string, unknown> | undefined)?.[PRE_EVENT[runtime]];
  if (!Array.isArray(groups)) return null;
  for (const g of groups as Array<{ hooks?: unknown }>) {
    for (const h of Array.isArray(g?.hooks) ? (g.hooks as Array<Record<string, unknown>>) : []) {
      if (ours(h, runtime)) return h;
    }
  }
  return null;
}

function runAsRuntime(
  command: string,
  input: string,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn('sh', ['-c', command], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** The gate's audit line for `sessionId`, waited for a few seconds. */
async function auditedCall(file: string, sessionId: string): Promise<Record<string, unknown> | null> {
  const until = Date.now() + AUDIT_WAIT_MS;
  for (;;) {
    if (existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n').reverse()) {
        if (!line.includes(sessionId)) continue;
        try {
          const entry = JSON.parse(line) as { record?: Record<string, unknown> };
          if (entry.record?.session_id === sessionId) return entry.record;
        } catch {
          // a line being written
        }
      }
    }
    if (Date.now() > until) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function runHookDoctor(
  runtime: HookRuntime,
  flags: { project?: boolean; user?: boolean; dir?: string },
): Promise<number> {
  const scope = scopeOf(flags);
  const dir = resolve(flags.dir ?? '.');
  const { settingsPath, readSettings, HTTP_TOKEN_ENV, ours } = await import('../hooks/install');
  const path = settingsPath(runtime, scope, dir, homedir());
  const entry = ourPreEntry(readSettings(path), runtime, ours);
  if (!entry) {
    throw new AgentJudgeError(`${path} has no agent-judge hook: agent-judge hook install ${runtime}`);
  }
  const { trustState } = await import('../hooks/trust');
  const trust = trustState(runtime, { scope, projectDir: dir, home: homedir(), settingsFile: path });
  const sessionId = `agent-judge-doctor-${randomUUID()}`;
  const input = JSON.stringify(harmlessInput(runtime, dir, sessionId));
  const timeoutMs = Number(entry.timeout ?? 60) * (runtime === 'gemini' ? 1 : 1000);
  let ran: { code: number | null; stdout: string; stderr: string };
  if (typeof entry.command === 'string') {
    ran = await runAsRuntime(entry.command, input, dir, timeoutMs);
  } else {
    // Claude Code's http hook: the POST it makes, with the header its settings' env fills in.
    const settingsEnv = (readSettings(path).env ?? {}) as Record<string, string>;
    const res = await fetch(String(entry.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${settingsEnv[HTTP_TOKEN_ENV] ?? ''}` },
      body: input,
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((err: Error) => err);
    ran =
      res instanceof Error
        ? { code: 2, stdout: '', stderr: res.message }
        : { code: res.ok ? 0 : 2, stdout: res.ok ? await res.text() : '', stderr: res.ok ? '' : await res.text() };
  }
  const dev = readRunningDev();
  const auditLog = dev?.gate?.audit_log ?? hooksAuditLogPath(join(dev?.cwd ?? '.', '.agent-judge'));
  const seen = ran.code === 0 ? await auditedCall(auditLog, sessionId) : null;
  const works = seen !== null && trust.state !== 'untrusted';
  printJson({
    runtime,
    settings: path,
    hook: typeof entry.command === 'string' ? entry.command : entry.url,
    call: { session_id: sessionId, ...(JSON.parse(input) as { tool_name: string; tool_input: unknown }) },
    exit_code: ran.code,
    ...(ran.stderr.trim() ? { stderr: ran.stderr.trim().slice(0, 2000) } : {}),
    gate_saw_it: seen
      ? { kind: seen.kind, rule: seen.rule, agent: seen.agent, at: seen.at, audit_log: auditLog }
      : ran.code === 0
        ? `the hook answered, but ${auditLog} holds no line for this call: is the gate the running agent-judge dev's?`
        : 'no: the hook blocked the call (see stderr)',
    trust,
    verdict: works
      ? `the hook runs and the gate sees its calls`
      : seen
        ? `the gate sees the hook's calls, but ${runtime} will not run the hook yet: ${trust.step ?? trust.detail}`
        : 'the hook does not reach the gate',
  });
  return works ? 0 : 1;
}
