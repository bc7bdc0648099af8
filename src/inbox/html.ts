/**
 * HTML building blocks of the inbox's pages: escaping, and the one way agent-controlled text reaches a page. Every
 * string a proposal carries (justification, target, parameters, evidence titles, the judge's reasoning about them) is
 * hostile input: it goes through the one display rule (contracts/untrusted-text.ts: invisible and format characters
 * named, line breaks as ⏎, agent-judge's own marks as `(icon)`), is HTML-escaped, and is shown only inside a framed
 * block labelled as the agent's, so no line of it can pass for one of ours.
 */
import { displayText } from '../contracts/untrusted-text';

/** Text escaped for HTML element content and for double- or single-quoted attribute values. */
export function escapeHtml(raw: string): string {
  return raw
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A fragment of HTML that is already safe: only the functions here make one. */
export interface Html {
  readonly html: string;
}

/** Template tag: interpolated strings are escaped, interpolated {@link Html} (and arrays of it) are kept. */
export function markup(parts: TemplateStringsArray, ...values: unknown[]): Html {
  let out = parts[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (parts[i + 1] ?? '');
  });
  return { html: out };
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (typeof value === 'object' && 'html' in value && typeof (value as Html).html === 'string')
    return (value as Html).html;
  return escapeHtml(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
}

/**
 * Agent-controlled text on one line, inline: escaped, line breaks shown as ⏎, invisible and format characters named
 * (`⟨U+202E⟩`), agent-judge's marks (✅, ❌...) as `(icon)`. `class="agent"` frames it.
 */
export function agentInline(raw: string): Html {
  return markup`<span class="agent">${displayText(raw)}</span>`;
}

/**
 * Agent-controlled text that keeps its lines (content, a diff, a justification): in a framed `<pre>` block labelled
 * with `label`, so every line of it sits visibly inside the agent's frame, never at the start of one of ours.
 */
export function agentBlock(label: string, raw: string): Html {
  const text = displayText(raw, { keepLines: true });
  return markup`<figure class="agent-block"><figcaption>${label}</figcaption><pre class="agent">${text}</pre></figure>`;
}

/** Where an MCP tool call's arguments live: what follows it in an edit path is an argument name the agent chose. */
const ARGUMENTS_PREFIX = 'parameters.arguments.';

/**
 * An edit path as a label ("Approve with edits", "Approved with edits"): ours as is, an argument name (set by the
 * agent, like everything in the call) inside the agent's frame, so it can neither reorder the label nor carry one of
 * our marks.
 */
export function editPathLabel(path: string): Html {
  return path.startsWith(ARGUMENTS_PREFIX)
    ? markup`${ARGUMENTS_PREFIX}${agentInline(path.slice(ARGUMENTS_PREFIX.length))}`
    : markup`${path}`;
}

/**
 * For a value an editable textarea must hold raw (the approver edits the exact bytes) but that holds something it
 * would hide or reorder (a direction override, a zero-width space): the value once more, shown by the rule.
 */
export function hiddenCharactersNote(value: string, keepLines: boolean): Html | string {
  return displayText(value, { keepLines }) === value
    ? ''
    : markup`<br /><span class="muted">holds invisible or format characters; shown safely:</span>
        ${agentInline(value)}`;
}

/** A whole page: small CSS for a phone, no script but what the page passes (inline, with its nonce). */
export function page(
  title: string,
  body: Html,
  options: { script?: string; nonce?: string; csrf?: string } = {},
): string {
  const script =
    options.script && options.nonce
      ? markup`<script nonce="${options.nonce}">
          ${{ html: options.script }};
        </script>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.csrf ? markup`<meta name="csrf-token" content="${options.csrf}" />`.html : ''}
<title>${escapeHtml(title)} · agent-judge inbox</title>
<style>${STYLE}</style></head>
<body><header><a href="/">agent-judge inbox</a></header><main>
${body.html}
</main>${render(script)}</body></html>
`;
}

const STYLE = `
body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f6f7}
header{background:#1d1d1f;padding:.6em 1em}header a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:46em;margin:0 auto;padding:1em}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.4em}
.card{background:#fff;border:1px solid #ddd;border-radius:8px;padding:.8em 1em;margin:.6em 0}
.card a{font-weight:600}
.agent{font-family:ui-monospace,monospace;background:#fff8e6;border:1px dashed #d9a400;border-radius:3px;
padding:0 .25em;overflow-wrap:anywhere}
figure.agent-block{margin:.5em 0}figure.agent-block figcaption{font-size:.8em;color:#775c00}
pre.agent{display:block;white-space:pre-wrap;padding:.5em;margin:0;max-height:30em;overflow:auto}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em .8em}dt{color:#555}dd{margin:0;overflow-wrap:anywhere}
.notice{padding:.6em 1em;border-radius:6px;background:#e8f0fe}.error{background:#fde8e8}.ok{background:#e6f4ea}
textarea{width:100%;box-sizing:border-box;font:inherit;min-height:4em}
button{font:inherit;padding:.6em 1.2em;border-radius:6px;border:0;margin:.4em .4em .4em 0;cursor:pointer}
.approve{background:#23a55a;color:#fff}.reject{background:#da373c;color:#fff}.plain{background:#ddd}
.muted{color:#666;font-size:.9em}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3em;
border-bottom:1px solid #eee;vertical-align:top}
`;
