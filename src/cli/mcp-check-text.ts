/**
 * `mcp check` for a person at a terminal: the upstream's tools as a table (the rule, tier and action type each maps
 * to), then the unmapped ones named with what happens to them. Tool names are the upstream's text: the table shows
 * them through the one display rule for untrusted text (./table.ts). Pure: fed the check's JSON, returns text.
 */
import { displayText } from '../contracts/untrusted-text';
import { renderTable } from './table';

/** What `mcp check` found (the JSON it prints off a terminal). */
export interface McpCheck {
  server: string;
  tools: ReadonlyArray<{
    tool: string;
    rule: string | null;
    tier: string;
    action_type: string | null;
    unmapped: boolean;
  }>;
  unmapped: readonly string[];
}

export function renderMcpCheck(check: McpCheck): string {
  const table = renderTable(
    [
      { header: 'TOOL', max: 48 },
      { header: 'RULE', max: 32 },
      { header: 'TIER', max: 20 },
      { header: 'ACTION TYPE', max: 32 },
    ],
    check.tools.map((t) => [t.tool, t.unmapped ? '(unmapped)' : t.rule, t.tier, t.action_type ?? '(set by the rule)']),
    `${displayText(check.server)}: the upstream lists no tools`,
  );
  const count = check.tools.length;
  const summary =
    check.unmapped.length === 0
      ? `${count} tool${count === 1 ? '' : 's'} of ${displayText(check.server)}, every one mapped by a rule`
      : `${check.unmapped.length} of ${count} tools of ${displayText(check.server)} match no rule: each call to them ` +
        `is an mcp_tool_call at the tier shown (add rules under spec.mcp to map them)`;
  return `${table}\n${summary}\n`;
}
