/**
 * The report as one self-contained HTML file: inline CSS and inline SVG charts (approval rate over time, latency
 * percentiles by tier, escalations per day), no script, no external request, so it can be mailed, archived or
 * opened offline. Every text from the records is escaped (agents write justifications and reasons).
 */
import { formatChange, formatValue, METRIC_LABELS, metricBands, reviewLine, sampleText, type Report } from './report';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text from records as HTML text (agents write justifications and reasons). */
export const esc = (s: string | number | null | undefined): string =>
  (s === null || s === undefined ? '–' : String(s)).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

/** One chart's size and padding, shared by every chart of the reports (the replay report's too). */
export const W = 640;
export const H = 220;
export const PAD = { l: 48, r: 16, t: 16, b: 36 };
export const plotW = W - PAD.l - PAD.r;
export const plotH = H - PAD.t - PAD.b;

/** An SVG chart's opening tag with its accessible title. */
export function svgOpen(title: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" ` +
    `aria-label="${esc(title)}"><title>${esc(title)}</title>`
  );
}

/** The x axis, horizontal grid lines with their labels, and x labels. */
export function axes(
  yTicks: Array<{ v: number; label: string }>,
  yMax: number,
  xLabels: Array<{ x: number; label: string }>,
) {
  const y = (v: number) => PAD.t + plotH - (v / yMax) * plotH;
  let s = `<line x1="${PAD.l}" y1="${PAD.t + plotH}" x2="${W - PAD.r}" y2="${PAD.t + plotH}" class="axis"/>`;
  for (const t of yTicks) {
    s += `<line x1="${PAD.l}" y1="${y(t.v)}" x2="${W - PAD.r}" y2="${y(t.v)}" class="grid"/>`;
    s += `<text x="${PAD.l - 6}" y="${y(t.v) + 4}" text-anchor="end" class="tick">${esc(t.label)}</text>`;
  }
  for (const l of xLabels)
    s += `<text x="${l.x}" y="${H - PAD.b + 16}" text-anchor="middle" class="tick">${esc(l.label)}</text>`;
  return s;
}

/** Only every n-th day is labelled when there are many. */
function dayLabels(days: string[], xOf: (i: number) => number): Array<{ x: number; label: string }> {
  const every = Math.max(1, Math.ceil(days.length / 10));
  return days.flatMap((d, i) => (i % every === 0 ? [{ x: xOf(i), label: d.slice(5) }] : []));
}

function approvalChart(r: Report): string {
  const pts = r.charts.approvalByDay;
  const m = r.metrics.find((x) => x.name === 'approvalRate')!;
  const n = pts.length;
  const xOf = (i: number) => PAD.l + (n <= 1 ? plotW / 2 : (i / (n - 1)) * plotW);
  const y = (v: number) => PAD.t + plotH - v * plotH;
  let s = svgOpen('Judge approval rate per day');
  if (m.target.min !== undefined || m.target.max !== undefined) {
    const top = y(m.target.max ?? 1);
    const bottom = y(m.target.min ?? 0);
    s += `<rect x="${PAD.l}" y="${top}" width="${plotW}" height="${bottom - top}" class="band">`;
    s += '<title>target</title></rect>';
  }
  s += axes(
    [0, 0.25, 0.5, 0.75, 1].map((v) => ({ v, label: `${v * 100}%` })),
    1,
    dayLabels(
      pts.map((p) => p.day),
      xOf,
    ),
  );
  for (const a of [m.alert.below, m.alert.above])
    if (a !== undefined)
      s += `<line x1="${PAD.l}" y1="${y(a)}" x2="${W - PAD.r}" y2="${y(a)}" class="alert"><title>alert</title></line>`;
  const known = pts.map((p, i) => ({ ...p, i })).filter((p) => p.rate !== null);
  if (known.length > 1)
    s += `<polyline class="line" points="${known.map((p) => `${xOf(p.i)},${y(p.rate!)}`).join(' ')}"/>`;
  for (const p of known)
    s +=
      `<circle cx="${xOf(p.i)}" cy="${y(p.rate!)}" r="3.5" class="dot">` +
      `<title>${esc(p.day)}: ${(p.rate! * 100).toFixed(1)}% of ${p.judged}</title></circle>`;
  if (known.length === 0)
    s += `<text x="${W / 2}" y="${H / 2}" text-anchor="middle" class="empty">no judge verdicts</text>`;
  return `${s}</svg>`;
}

function latencyChart(r: Report): string {
  const tiers = r.charts.latencyByTier;
  const series = ['p50', 'p95', 'p99'] as const;
  const values = tiers.flatMap((t) => series.map((k) => t[k] ?? 0));
  const alerts = [
    r.metrics.find((m) => m.name === 'lightweightLatencyP95Seconds')!.alert.above ?? 0,
    r.metrics.find((m) => m.name === 'fullJudgeLatencyP95Seconds')!.alert.above ?? 0,
  ];
  const yMax = Math.max(0.001, ...values, ...alerts) * 1.1;
  const y = (v: number) => PAD.t + plotH - (v / yMax) * plotH;
  const groupW = plotW / tiers.length;
  const barW = groupW / (series.length + 1.5);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({ v: f * yMax, label: formatValue('seconds', f * yMax) }));
  let s = svgOpen('Decision latency percentiles by tier');
  s += axes(
    ticks,
    yMax,
    tiers.map((t, i) => ({ x: PAD.l + groupW * (i + 0.5), label: `${t.tier} (n=${t.n})` })),
  );
  tiers.forEach((t, i) => {
    const x0 = PAD.l + groupW * i + barW * 0.75;
    series.forEach((k, j) => {
      const v = t[k];
      if (v === null) return;
      const x = x0 + j * barW;
      s +=
        `<rect x="${x}" y="${y(v)}" width="${barW - 4}" height="${PAD.t + plotH - y(v)}" class="bar ${k}">` +
        `<title>${esc(t.tier)} ${k}: ${formatValue('seconds', v)}</title></rect>`;
      s += `<text x="${x + (barW - 4) / 2}" y="${y(v) - 4}" text-anchor="middle" class="val">${k}</text>`;
    });
    const a = alerts[i]!;
    s +=
      `<line x1="${PAD.l + groupW * i + 4}" y1="${y(a)}" x2="${PAD.l + groupW * (i + 1) - 4}" y2="${y(a)}" ` +
      `class="alert"><title>p95 alert: ${formatValue('seconds', a)}</title></line>`;
  });
  return `${s}</svg>`;
}

/** A horizontal threshold line across the plot. */
export function hline(yPos: number, cls: 'target' | 'alert'): string {
  return `<line x1="${PAD.l}" y1="${yPos}" x2="${W - PAD.r}" y2="${yPos}" class="${cls}"><title>${cls}</title></line>`;
}

function escalationChart(r: Report): string {
  const pts = r.charts.escalationsByDay;
  const m = r.metrics.find((x) => x.name === 'escalationsPerDay')!;
  const yMax = Math.max(1, ...pts.map((p) => p.count), m.alert.above ?? 0) * 1.1;
  const y = (v: number) => PAD.t + plotH - (v / yMax) * plotH;
  const slot = plotW / Math.max(1, pts.length);
  const xOf = (i: number) => PAD.l + slot * (i + 0.5);
  let s = svgOpen('Escalations to a person per day');
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({ v: f * yMax, label: (f * yMax).toFixed(f * yMax < 10 ? 1 : 0) }));
  s += axes(
    ticks,
    yMax,
    dayLabels(
      pts.map((p) => p.day),
      xOf,
    ),
  );
  pts.forEach((p, i) => {
    s +=
      `<rect x="${xOf(i) - slot * 0.35}" y="${y(p.count)}" width="${slot * 0.7}" ` +
      `height="${PAD.t + plotH - y(p.count)}" ` +
      `class="bar esc"><title>${esc(p.day)}: ${p.count}</title></rect>`;
  });
  if (m.target.max !== undefined) s += hline(y(m.target.max), 'target');
  if (m.alert.above !== undefined) s += hline(y(m.alert.above), 'alert');
  return `${s}</svg>`;
}

/** The reports' one stylesheet, inline. */
export const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px}
body{color:#1c2430;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde3ea;padding-bottom:4px}
.meta{color:#5b6775}.status{padding:8px 12px;border-radius:6px;margin:14px 0;font-weight:600}
.status.bad{background:#fde8e8;color:#9b1c1c}.status.good{background:#e6f6ec;color:#166534}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e5e9ef;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f9}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.state{font-weight:600;border-radius:4px;padding:1px 6px;white-space:nowrap}.ok{background:#e6f6ec;color:#166534}
.breached{background:#fde8e8;color:#9b1c1c}.off-target{background:#fff4db;color:#8a5a00}
.insufficient-sample,.no-data{background:#eef1f5;color:#5b6775}
.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{border:1px solid #e5e9ef;border-radius:6px;padding:8px}
.chart h3{font-size:14px;margin:0 0 4px}svg{max-width:100%;height:auto}
.axis{stroke:#8795a6}.grid{stroke:#eef1f5}.tick{font-size:11px;fill:#5b6775}.val{font-size:10px;fill:#5b6775}
.band{fill:#dff3e6}.alert{stroke:#d33;stroke-width:1.5;stroke-dasharray:5 4}.target{stroke:#2f9e58;stroke-dasharray:3 3}
.line{fill:none;stroke:#2563eb;stroke-width:2}.dot{fill:#2563eb}.bar.p50{fill:#93c5fd}.bar.p95{fill:#2563eb}
.bar.p99{fill:#1e3a8a}.bar.esc{fill:#f59e0b}.empty{fill:#8795a6;font-size:13px}.legend{font-size:12px;color:#5b6775}
`;

const th = (names: string[]) => `<thead><tr>${names.map((n) => `<th>${esc(n)}</th>`).join('')}</tr></thead>`;

function metricRow(m: Report['metrics'][number]): string {
  const b = metricBands(m);
  const cells = [
    `<td>${esc(m.label)}</td>`,
    `<td class="num">${esc(formatValue(m.unit, m.value, m.name))}</td>`,
    `<td class="num">${esc(sampleText(m))}</td>`,
    `<td>${esc(b.target)}</td>`,
    `<td>${esc(b.alert)}</td>`,
    `<td><span class="state ${m.state}">${esc(m.state)}</span></td>`,
    `<td class="num">${esc(formatChange(m))}</td>`,
  ];
  return `<tr>${cells.join('')}</tr>`;
}

function incidentRow(i: Report['incidents'][number]): string {
  const meta = (text: string) => `<span class="meta">${text}</span>`;
  const dispute = i.dispute ? `${esc(i.dispute.reason)}<br>${meta(`judge: ${esc(i.dispute.judge_position)}`)}` : '–';
  const decisions = i.decisions
    .map((d) => `<br>${meta(`${esc(d.approver)}: ${esc(d.decision)}${d.reason ? ` (${esc(d.reason)})` : ''}`)}`)
    .join('');
  const cells = [
    `<td>${esc(i.started_at.replace('T', ' ').slice(0, 19))}</td>`,
    `<td>${esc(i.proposal_id)}<br>${meta(`${esc(i.agent_id)} · ${esc(i.action_type)}`)}</td>`,
    `<td>${esc(i.verdict ?? i.status)}${i.escalated ? ` ${meta('(escalated)')}` : ''}</td>`,
    `<td>${esc(i.rule)}</td>`,
    `<td>${esc(i.reason)}</td>`,
    `<td>${dispute}</td>`,
    `<td>${esc(i.decided_by)}${decisions}</td>`,
    `<td class="num">${i.seconds_to_decide === null ? '–' : esc(`${i.seconds_to_decide.toFixed(1)} s`)}</td>`,
    `<td>${i.review_mark ? esc(`${i.review_mark.mark} (${i.review_mark.reviewer})`) : '–'}</td>`,
  ];
  return `<tr>${cells.join('')}</tr>`;
}

/** A chart with its heading and legend. */
export function chartBox(title: string, svg: string, legend: string): string {
  return `<div class="chart"><h3>${esc(title)}</h3>${svg}<div class="legend">${esc(legend)}</div></div>`;
}

/** The report as one HTML file with inline SVG charts and no script. */
export function renderHtml(r: Report): string {
  const rv = r.review;
  const review = rv
    ? `<p>${esc(reviewLine(rv))}</p><progress max="${Math.max(1, rv.in_review)}" value="${rv.marked}"></progress>`
    : '<p class="meta">No review for this period.</p>';
  const breached = r.breached.map((n) => METRIC_LABELS[n].label).join(', ');
  const status =
    r.breached.length > 0
      ? `<div class="status bad">Alert thresholds breached: ${esc(breached)}</div>`
      : '<div class="status good">No alert threshold breached.</div>';
  const meta = [
    `${r.range.start} – ${r.range.end}`,
    `${r.proposals} proposals`,
    `${r.approvals.human_decisions} human decisions, ${r.approvals.grant_uses} grant uses`,
    `policy ${r.policy}`,
  ];
  meta.push(`generated ${r.generated_at}`);
  const incidentHead = ['started', 'proposal', 'verdict', 'rule', 'reason', 'dispute', 'decided by'];
  incidentHead.push('time to decide', 'review');
  const incidents =
    r.incidents.length > 0
      ? `<table>${th(incidentHead)}<tbody>${r.incidents.map(incidentRow).join('')}</tbody></table>`
      : '<p class="meta">None.</p>';
  const title = `agent-judge ${r.kind} report: ${r.period}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title><style>${CSS}</style></head><body>
<h1>${esc(title)}</h1>
<div class="meta">${esc(meta.join(' · '))}</div>
${status}
<h2>Metrics</h2>
<table>${th(['metric', 'value', 'sample', 'target', 'alert', 'state', 'change'])}<tbody>
${r.metrics.map(metricRow).join('\n')}
</tbody></table>
<h2>Charts</h2>
<div class="charts">
${chartBox('Approval rate over time', approvalChart(r), 'green band: target · dashed red: alert thresholds')}
${chartBox('Latency percentiles by tier', latencyChart(r), 'p50 / p95 / p99 · dashed red: p95 alert')}
${chartBox('Escalations per day', escalationChart(r), 'dotted green: target · dashed red: alert')}
</div>
<h2>Review</h2>
${review}
<h2>REJECTs and escalations (${r.incidents.length})</h2>
${incidents}
</body></html>
`;
}
