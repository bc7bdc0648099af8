/** The pure parts of MCP Tasks (src/mcp/tasks.ts): capabilities merged, taskSupport marked, ttl bounded, records. */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isOwnTaskId,
  MAX_TASK_TTL_MS,
  TaskRecords,
  taskIdOf,
  taskTtlMs,
  withTaskCapabilities,
  withTaskSupport,
  type TaskRecord,
} from '../../src/mcp/tasks';

describe('MCP tasks', () => {
  it("merges the proxy's task support into the upstream's capabilities, removing nothing", () => {
    const upstream = {
      protocolVersion: '2025-11-25',
      capabilities: { tools: { listChanged: true }, tasks: { list: { x: 1 }, requests: { sampling: {} } } },
    };
    expect(withTaskCapabilities(upstream)).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: {
        tools: { listChanged: true },
        tasks: { list: { x: 1 }, cancel: {}, requests: { sampling: {}, tools: { call: {} } } },
      },
    });
    expect(withTaskCapabilities({ capabilities: {} }).capabilities).toEqual({
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
  });

  it('marks judged tools optional; no-judge tools and required ones keep the upstream value', () => {
    const rules = { rules: [{ name: 'read', tool: 'read_*', tier: 'no-judge' as const }] };
    const r = withTaskSupport(
      {
        tools: [
          { name: 'read_file', execution: { taskSupport: 'forbidden' } },
          { name: 'write_file', execution: { taskSupport: 'forbidden' } },
          { name: 'long_job', execution: { taskSupport: 'required' } },
          { name: 'plain' },
        ],
        nextCursor: 'c',
      },
      rules,
      'fs',
    );
    expect(r).toEqual({
      tools: [
        { name: 'read_file', execution: { taskSupport: 'forbidden' } },
        { name: 'write_file', execution: { taskSupport: 'optional' } },
        { name: 'long_job', execution: { taskSupport: 'required' } },
        { name: 'plain', execution: { taskSupport: 'optional' } },
      ],
      nextCursor: 'c',
    });
  });

  it('bounds the ttl: at least the hold, at most 24 h, 1 h by default', () => {
    expect(taskTtlMs(undefined, 10_000)).toBe(3_600_000);
    expect(taskTtlMs(5, 10_000)).toBe(10_000);
    expect(taskTtlMs(1e12, 10_000)).toBe(MAX_TASK_TTL_MS);
    expect(taskTtlMs('soon', 10_000)).toBe(3_600_000);
  });

  it("task ids are the workflow's, prefixed; records are this agent's and server's only, mode 0600", () => {
    expect(taskIdOf('proposal-abc')).toBe('agent-judge/task/proposal-abc');
    expect(isOwnTaskId('agent-judge/task/proposal-abc')).toBe(true);
    expect(isOwnTaskId('upstream-7')).toBe(false);
    const dir = join(mkdtempSync(join(tmpdir(), 'aj-tasks-')), 'mcp-tasks');
    const records = new TaskRecords(dir);
    const at = new Date().toISOString();
    const record: TaskRecord = {
      task_id: taskIdOf('proposal-abc'),
      workflow_id: 'proposal-abc',
      proposal_id: 'mcp-abc',
      sequence: 0,
      agent: '@engineering',
      server: 'fs',
      tool: 'write_file',
      tool_definition_hash: 'a'.repeat(64),
      arguments: { path: '/tmp/x' },
      agent_statement: {},
      request_params: { name: 'write_file', arguments: { path: '/tmp/x' } },
      created_at: at,
      last_updated_at: at,
      ttl_ms: 60_000,
      status: 'working',
      status_message: null,
    };
    records.write(record);
    expect(records.read(record.task_id, '@engineering', 'fs')).toEqual(record);
    expect(records.read(record.task_id, '@other', 'fs')).toBeNull();
    expect(records.read(record.task_id, '@engineering', 'git')).toBeNull();
    expect(records.read(taskIdOf('proposal-none'), '@engineering', 'fs')).toBeNull();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
