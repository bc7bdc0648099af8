/**
 * The replay as one self-contained HTML file, built like `agent-judge report --format html` (src/audit/report-html.ts:
 * its stylesheet, axes and chart boxes): the transition matrix, the metrics under both with a chart of their shifts,
 * and every changed proposal with both sides' rule or reason. No script, no external request; every recorded text is
 * escaped.
 */
import { axes, chartBox, CSS, esc, PAD, plotH, plotW, svgOpen } from '../audit/report-html';
import { OUTCOMES } from './decide';
import { approvesWhatAPersonRejected, REPLAY_METRICS, type ReplayRow } from './compare';
import { METRIC_TEXT, metricText, shiftText, type ReplayLabels } from './render';
import type { ReplayResult } from './run';

/** Each metric as a pair of bars (recorded, candidate), each pair on its own scale, values written on the bars. */
function shiftChart(result: ReplayResult): string {
  const groups = REPLAY_METRICS.length;
  const groupW = plotW / groups;
  const barW = groupW / 3.2;
  let s = svgOpen('Metric shifts: recorded and candidate');
  s += axes(
    [],
    1,
    REPLAY_METRICS.map((name, i) => ({ x: PAD.l + groupW * (i + 0.5), label: METRIC_TEXT[name].label.split(' ')[0]! })),
  );
  REPLAY_METRICS.forEach((name, i) => {
    const a = result.metrics.recorded[name].value;
    const b = result.metrics.candidate[name].value;
    const top = Math.max(
      a ?? 0,
      b ?? 0,
      METRIC_TEXT[name].unit === 'ratio' && name !== 'clarifyCyclesPerApproval' ? 1 : 0.001,
    );
    const y = (v: number) => PAD.t + plotH - (v / top) * plotH * 0.9;
    [a, b].forEach((v, j) => {
      const x = PAD.l + groupW * i + barW * (0.5 + j * 1.1);
      const cls = j === 0 ? 'p50' : 'p95';
      const who = j === 0 ? 'recorded' : 'candidate';
      if (v === null) return;
      s +=
        `<rect x="${x}" y="${y(v)}" width="${barW}" height="${PAD.t + plotH - y(v)}" class="bar ${cls}">` +
        `<title>${esc(`${METRIC_TEXT[name].label}, ${who}: ${metricText(name, v)}`)}</title></rect>`;
      const label = esc(metricText(name, v));
      s += `<text x="${x + barW / 2}" y="${y(v) - 4}" text-anchor="middle" class="val">${label}</text>`;
    });
  });
  return `${s}</svg>`;
}

function matrixTable(result: ReplayResult): string {
  const cols = OUTCOMES.map((o) => `<th>${esc(o)}</th>`).join('');
  const head = `<thead><tr><th>recorded \\ candidate</th>${cols}</tr></thead>`;
  const rows = OUTCOMES.map((from) => {
    const cells = OUTCOMES.map((to) => {
      const n = result.matrix[from][to];
      const cls = n > 0 && from !== to ? ' class="num off-target"' : ' class="num"';
      return `<td${cls}>${n}</td>`;
    });
    return `<tr><th>${esc(from)}</th>${cells.join('')}</tr>`;
  });
  return `<table>${head}<tbody>${rows.join('')}</tbody></table>`;
}

function metricsTable(result: ReplayResult): string {
  const rows = REPLAY_METRICS.map((name) => {
    const a = result.metrics.recorded[name];
    const b = result.metrics.candidate[name];
    return (
      `<tr><td>${esc(METRIC_TEXT[name].label)}</td><td class="num">${esc(metricText(name, a.value))}</td>` +
      `<td class="num">${esc(metricText(name, b.value))}</td>` +
      `<td class="num">${esc(shiftText(name, a.value, b.value))}</td>` +
      `<td class="num">${a.numerator}/${a.denominator} → ${b.numerator}/${b.denominator}</td></tr>`
    );
  });
  return (
    '<table><thead><tr><th>Metric</th><th>recorded</th><th>candidate</th><th>shift</th><th>counts</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

function side(r: ReplayRow, which: 'recorded' | 'candidate'): string {
  const s = r[which];
  const how =
    which === 'candidate' && r.candidate.gate ? `gate: ${r.candidate.gate}` : `${s.decided_by} · ${s.tier ?? '–'}`;
  const rule = s.rule ? ` · ${esc(s.rule)}` : '';
  return `<b>${esc(s.outcome)}</b> <span class="meta">${esc(how)}${rule}</span><br>${esc(s.reason)}`;
}

function changedTable(result: ReplayResult): string {
  if (result.changed.length === 0)
    return '<p class="meta">None: the candidate decides every replayed proposal as recorded.</p>';
  const rows = result.changed.map((r) => {
    const flag = approvesWhatAPersonRejected(r)
      ? '<span class="state breached">approves what a person rejected</span><br>'
      : '';
    const person = r.recorded.person ? `<br><span class="meta">a person: ${esc(r.recorded.person)}</span>` : '';
    return (
      `<tr><td>${flag}${esc(r.proposal_id)}<br><span class="meta">${esc(r.agent_id)} · ${esc(r.action_type)} · ` +
      `${esc(r.started_at.replace('T', ' ').slice(0, 19))}</span></td><td>${side(r, 'recorded')}${person}</td>` +
      `<td>${side(r, 'candidate')}</td></tr>`
    );
  });
  const head = '<thead><tr><th>Proposal</th><th>Recorded</th><th>Candidate</th></tr></thead>';
  return `<table>${head}<tbody>${rows.join('')}</tbody></table>`;
}

const LEGEND = 'light: recorded, dark: candidate; each metric on its own scale';

/** The replay report as one HTML file. */
export function renderReplayHtml(result: ReplayResult, labels: ReplayLabels): string {
  const dangerous = result.changed.filter(approvesWhatAPersonRejected).length;
  const status =
    dangerous > 0
      ? `<div class="status bad">The candidate approves ${dangerous} proposal(s) a person rejected.</div>`
      : `<div class="status good">The candidate approves nothing a person rejected.</div>`;
  const m = result.model;
  const model = [
    m.plan
      ? `${m.plan.proposals} proposal(s) needed the candidate model ${esc(m.plan.model)}; ${m.called} call(s).`
      : '',
    `${m.reused} recorded model answer(s) reused.`,
    m.needs_model > 0 ? `${m.needs_model} proposal(s) need a model (their prompt changed).` : '',
  ].join(' ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>agent-judge replay</title>
<style>${CSS}</style></head><body>
<h1>Replay: ${esc(labels.candidate)}</h1>
<div class="meta">${result.replayed} recorded proposals (${result.from_archive} from the archive),
${esc(labels.window)};
recorded under ${esc(labels.recorded)}. Nothing was executed, escalated, notified or signalled.</div>
${status}
<h2>Transitions</h2>${matrixTable(result)}
<h2>Metrics (seed 000 §6) over ${result.days.toFixed(1)} days</h2>${metricsTable(result)}
<div class="charts">${chartBox('Metric shifts', shiftChart(result), LEGEND)}</div>
<p class="meta">${model}</p>
<h2>Changed proposals (${result.changed.length})</h2>${changedTable(result)}
</body></html>
`;
}
