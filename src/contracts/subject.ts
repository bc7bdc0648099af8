/**
 * What an approver is asked about, in one line: the command, the path or the URL (not the target key, which for a
 * shell command is only `shell:<cwd>:<program>`). `list`, `status` and the inbox show it; a proposal's run carries it
 * in its memo from the start, so `list` reads it from visibility. Pure, and free of zod: the `status` command's fast
 * path (src/client/status-rpc.ts) and the workflow bundle both call it; the fields are read defensively.
 */
import { canonicalJson } from './canonical-json';
import type { Proposal } from './proposal';

/** The memo key under which a proposal's run carries its subject (src/client/proposals/submit.ts writes it). */
export const SUBJECT_MEMO_KEY = 'subject';

/** Long enough for a command line an approver reads; longer ones are cut with a count of what is left out. */
export const MAX_SUBJECT_CHARS = 500;

function cut(text: string): string {
  if (text.length <= MAX_SUBJECT_CHARS) return text;
  return `${text.slice(0, MAX_SUBJECT_CHARS)}… (${text.length - MAX_SUBJECT_CHARS} more characters)`;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The command, path or URL of `proposal`; else its type and target. Untrusted text: render it as such. */
export function proposalSubject(proposal: Pick<Proposal, 'action_type' | 'target' | 'parameters'>): string {
  const target = proposal.target ?? {};
  const parameters = proposal.parameters ?? {};
  const command = parameters.command;
  const found = ((): string | undefined => {
    switch (proposal.action_type) {
      case 'shell_command':
        return text(command) && `${text(command)} (in ${text(target.cwd) ?? '?'})`;
      case 'exec':
        return Array.isArray(command)
          ? `${command.map(String).join(' ')} (on ${text(target.host) ?? 'local'})`
          : undefined;
      case 'file_write':
        return text(target.path);
      case 'file_edit':
      case 'program_config_edit':
        return Array.isArray(target.paths) ? target.paths.map(String).join(', ') : undefined;
      case 'web_request':
      case 'web_request_sensitive':
      case 'web_publish':
        return text(target.url) ?? (text(target.query) && `search: ${text(target.query)}`);
      case 'mcp_tool_call':
      case 'tool_call':
        return `${text(target.server) ?? '?'}/${text(target.tool) ?? '?'} ${canonicalJson(parameters.arguments ?? {})}`;
      default:
        return undefined;
    }
  })();
  return cut(found ?? `${proposal.action_type} ${canonicalJson(proposal.target ?? {})}`);
}
