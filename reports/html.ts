import { cleanMessage, decidingChecks, reproducibility, targetNotes, writeOutput } from "./output.js";
import {
  type CheckReport,
  type Report,
  type Reporter,
  type RuleReport,
  type TranscriptEntry,
  targetName,
  type Verdict,
} from "./types.js";

// One self-contained file: no network, no external assets. Everything but the hex view of
// transcripts is rendered here; the small script filters, searches, opens the rule a link in
// the failure overview points to, and draws a transcript's hex view when it is first shown.

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const VERDICTS: Verdict[] = ["fail", "error", "warn", "pass", "skip"];

function transcript(entries: TranscriptEntry[]): string {
  const rows = entries.map((e) => {
    if (e.dir === "event")
      return `<tr class="event"><td class="t">+${e.t} ms</td><td class="dir">·</td><td><em>${esc(e.text ?? "")}</em></td></tr>`;
    const shown = e.base64 !== undefined ? Buffer.from(e.base64, "base64").length : Buffer.byteLength(e.text ?? "");
    const note = `${e.length} bytes${e.truncated ? `, first ${shown} shown` : ""}${e.base64 !== undefined ? ", not UTF-8" : ""}`;
    const text = e.text !== undefined ? esc(e.text) : `<span class="muted">(not valid UTF-8: see hex)</span>`;
    // The hex view is drawn by the page's script when asked for, from these bytes (base64) or
    // from the text beside it: a dump per entry would make a long transcript's page several
    // times larger than its data.
    const bytes = e.base64 !== undefined ? ` data-base64="${esc(e.base64)}"` : "";
    return (
      `<tr class="${e.dir}"><td class="t">+${e.t} ms</td><td class="dir" title="${e.dir === "send" ? "sent by the tool" : "received from the bridge"}">${e.dir === "send" ? "→" : "←"}</td>` +
      `<td><pre class="text">${text}</pre><pre class="hex" hidden${bytes}></pre><span class="muted">${note}</span></td></tr>`
    );
  });
  return (
    `<details class="transcript"><summary>Transcript (${entries.length} entries)</summary>` +
    `<div class="views"><button type="button" data-view="text" aria-pressed="true">text</button><button type="button" data-view="hex" aria-pressed="false">hex</button></div>` +
    `<table>${rows.join("")}</table></details>`
  );
}

function field(label: string, value: string | undefined, copy = false): string {
  if (value === undefined) return "";
  return `<dt>${label}</dt><dd><pre>${esc(value)}</pre>${copy ? `<button type="button" class="copy" data-copy="${esc(value)}">copy</button>` : ""}</dd>`;
}

function check(c: CheckReport): string {
  return (
    `<div class="check v-${c.verdict}"><h3><span class="badge ${c.verdict}">${c.verdict.toUpperCase()}</span> <code>${esc(c.id)}</code>` +
    `${c.reproduced?.grade === "flaky" ? ` <span class="badge warn">FLAKY</span>` : ""}` +
    `${c.durationMs !== undefined ? ` <span class="muted">${c.durationMs} ms</span>` : ""}</h3>` +
    (c.description ? `<p class="muted"><b>Sends:</b> ${esc(c.description)}</p>` : "") +
    (c.requirement ? `<p class="muted"><b>Requirement:</b> ${esc(c.requirement)}</p>` : "") +
    `<p class="message">${esc(cleanMessage(c.message))}</p>` +
    `<dl>${field("expected", c.expected)}${field("actual", c.actual)}${field("minimal case", c.counterexample)}` +
    `${c.reproduced ? field("rechecked", reproducibility(c)) : ""}${field("replay", c.replay, true)}` +
    `${c.seed !== undefined ? field("seed / path", `${c.seed}${c.path ? ` / ${c.path}` : ""}`) : ""}</dl>` +
    (c.transcript?.length ? transcript(c.transcript) : "") +
    `</div>`
  );
}

const anchor = (r: RuleReport) => `rule-${r.id}`;

/** At the top: every rule that failed or could not be judged, linked to its details, with why. */
function overview(report: Report): string {
  const bad = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error");
  if (report.blocked)
    return `<section class="overview"><h2>No check could be judged</h2><p>${esc(report.blocked)}</p></section>`;
  const notes = targetNotes(report)
    .map((n) => `<p class="target-note">${esc(n)}</p>`)
    .join("");
  if (!bad.length) return notes ? `<section class="overview">${notes}</section>` : "";
  const rulesOf = new Map(decidingChecks(report).map((d) => [d.check.id, d.rules]));
  const items = bad.map((r) => {
    const checks = r.checks.filter((c) => c.verdict === r.verdict);
    const why = checks.length
      ? checks
          .map((c) => {
            const others = (rulesOf.get(c.id) ?? []).filter((x) => x !== r).length;
            const also = others
              ? ` <span class="muted">(also ${others} other rule${others === 1 ? "" : "s"})</span>`
              : "";
            return `<code>${esc(c.id)}</code>: ${esc(firstLine(cleanMessage(c.message)))}${also}`;
          })
          .join("<br>")
      : esc(r.reason ?? "no verdict");
    return (
      `<li><span class="badge ${r.verdict}">${r.verdict.toUpperCase()}</span> ` +
      `<a href="#${esc(anchor(r))}"><code>${esc(r.id)}</code></a> <span class="level">${r.level}</span>` +
      `<div class="why">${why}</div></li>`
    );
  });
  return `<section class="overview"><h2>${bad.length} rule${bad.length === 1 ? "" : "s"} failed or not judged</h2>${notes}<ul>${items.join("")}</ul></section>`;
}

const firstLine = (text: string) => text.split("\n")[0] ?? "";

function rule(r: RuleReport): string {
  const search = [r.id, r.title, r.requirement, r.reason ?? "", ...r.checks.flatMap((c) => [c.id, c.message])]
    .join(" ")
    .toLowerCase();
  return (
    `<details class="rule v-${r.verdict}" id="${anchor(r)}" data-verdict="${r.verdict}" data-search="${esc(search)}"${r.verdict === "fail" || r.verdict === "error" ? " open" : ""}>` +
    `<summary><span class="badge ${r.verdict}">${r.verdict.toUpperCase()}</span> <code>${esc(r.id)}</code> <span class="title">${esc(r.title)}</span> <span class="level">${r.level}</span></summary>` +
    `<div class="body"><p><b>Rule:</b> ${esc(r.requirement)}</p>${r.reason ? `<p class="muted"><b>Why skipped:</b> ${esc(r.reason)}</p>` : ""}` +
    `${r.checks.map(check).join("")}</div></details>`
  );
}

const STYLE = `
:root{--fail:#c62828;--error:#8e24aa;--warn:#b26a00;--pass:#2e7d32;--skip:#757575;--bg:#fafafa;--line:#e0e0e0}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:var(--bg);color:#212121}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);padding:12px 24px;z-index:1}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;text-transform:uppercase;letter-spacing:.05em;color:#555;margin:20px 0 6px}
h3{font-size:14px;margin:0 0 6px}main{padding:0 24px 40px;max-width:1200px}
.meta,.muted{color:#616161}.controls{display:flex;gap:14px;align-items:center;flex-wrap:wrap;margin-top:8px}
input[type=search]{padding:6px 10px;border:1px solid #bbb;border-radius:6px;min-width:260px;font:inherit}
.badge{display:inline-block;min-width:48px;text-align:center;font-size:11px;font-weight:700;color:#fff;border-radius:4px;padding:1px 6px}
.badge.fail{background:var(--fail)}.badge.error{background:var(--error)}.badge.warn{background:var(--warn)}.badge.pass{background:var(--pass)}.badge.skip{background:var(--skip)}
details.rule{background:#fff;border:1px solid var(--line);border-left:4px solid var(--skip);border-radius:6px;margin:4px 0}
details.rule.v-fail{border-left-color:var(--fail)}details.rule.v-error{border-left-color:var(--error)}details.rule.v-warn{border-left-color:var(--warn)}details.rule.v-pass{border-left-color:var(--pass)}
details.rule>summary{cursor:pointer;padding:6px 10px;display:flex;gap:10px;align-items:center}
.title{flex:1}.level{font-size:11px;color:#757575}.body{padding:4px 14px 12px}
.check{border-top:1px dashed var(--line);padding:8px 0}dl{display:grid;grid-template-columns:110px 1fr;gap:2px 10px;margin:6px 0}
dt{color:#616161;font-weight:600}dd{margin:0;display:flex;gap:6px;align-items:flex-start}
pre{margin:0;white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#f5f5f5;padding:3px 6px;border-radius:4px;flex:1}
.transcript{margin-top:6px}.transcript table{border-collapse:collapse;width:100%;margin-top:4px}.transcript td{vertical-align:top;padding:2px 6px;border-bottom:1px solid #eee}
.transcript .t{white-space:nowrap;color:#757575;font-size:12px;width:80px}.transcript .dir{font-weight:700;width:20px}
tr.send .dir{color:#1565c0}tr.recv .dir{color:#2e7d32}tr.event td{color:#757575}
button{font:inherit;font-size:12px;border:1px solid #bbb;background:#fff;border-radius:4px;padding:1px 8px;cursor:pointer}button[aria-pressed=true]{background:#e3f2fd;border-color:#1565c0}
.chips label{margin-right:10px;white-space:nowrap}.empty{padding:20px;color:#757575}
details.rule{scroll-margin-top:110px}.message{white-space:pre-wrap}
.overview{background:#fff;border:1px solid var(--line);border-left:4px solid var(--fail);border-radius:6px;margin:16px 0 8px;padding:4px 14px 10px}
.overview ul{list-style:none;margin:0;padding:0}.overview li{padding:5px 0;border-top:1px solid #eee}.overview li:first-child{border-top:0}
.overview .why{margin:2px 0 0 58px;color:#424242}.overview a{color:#1565c0}
`;

const SCRIPT = `
const boxes=[...document.querySelectorAll('input[data-verdict]')];const search=document.getElementById('search');
function apply(){const on=new Set(boxes.filter(b=>b.checked).map(b=>b.dataset.verdict));const q=search.value.trim().toLowerCase();let shown=0;
for(const r of document.querySelectorAll('details.rule')){const ok=on.has(r.dataset.verdict)&&(!q||r.dataset.search.includes(q));r.hidden=!ok;if(ok)shown++;}
for(const g of document.querySelectorAll('section.group')){g.hidden=![...g.querySelectorAll('details.rule')].some(r=>!r.hidden);}
document.getElementById('empty').hidden=shown>0;document.getElementById('shown').textContent=shown;}
boxes.forEach(b=>b.addEventListener('change',apply));search.addEventListener('input',apply);
function bytesOf(p){if(p.dataset.base64!==undefined){const s=atob(p.dataset.base64);return Uint8Array.from(s,c=>c.charCodeAt(0));}
return new TextEncoder().encode(p.parentElement.querySelector('pre.text').textContent);}
function hexDump(bytes){const lines=[];for(let at=0;at<bytes.length;at+=16){const row=[...bytes.subarray(at,at+16)];
const hex=row.map(b=>b.toString(16).padStart(2,'0')).join(' ').padEnd(47);const ascii=row.map(b=>b>=32&&b<127?String.fromCharCode(b):'.').join('');
lines.push(at.toString(16).padStart(6,'0')+'  '+hex+'  |'+ascii+'|');}return lines.join('\\n');}
function reveal(id){const r=document.getElementById(id);if(!r||!r.matches('details.rule'))return;
if(r.hidden){search.value='';for(const b of boxes)if(b.dataset.verdict===r.dataset.verdict)b.checked=true;apply();}r.open=true;}
document.addEventListener('click',e=>{const a=e.target.closest('a[href^="#rule-"]');if(a){reveal(decodeURIComponent(a.getAttribute('href').slice(1)));return;}
const b=e.target.closest('button');if(!b)return;
if(b.dataset.view){const t=b.closest('.transcript');for(const x of t.querySelectorAll('button[data-view]'))x.setAttribute('aria-pressed',String(x===b));
for(const p of t.querySelectorAll('pre.text'))p.hidden=b.dataset.view!=='text';
for(const p of t.querySelectorAll('pre.hex')){if(b.dataset.view==='hex'&&!p.dataset.drawn){p.textContent=hexDump(bytesOf(p));p.dataset.drawn='1';}p.hidden=b.dataset.view!=='hex';}}
if(b.dataset.copy!==undefined&&navigator.clipboard){navigator.clipboard.writeText(b.dataset.copy);b.textContent='copied';}});
apply();if(location.hash.startsWith('#rule-'))reveal(decodeURIComponent(location.hash.slice(1)));
`;

export function renderHtml(report: Report): string {
  const groups = [...new Set(report.rules.map((r) => r.group))];
  const chips = VERDICTS.map(
    (v) =>
      `<label><input type="checkbox" data-verdict="${v}" checked> <span class="badge ${v}">${v.toUpperCase()}</span> ${report.summary[v]}</label>`,
  ).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>AiControl conformance: ${esc(targetName(report.target))}</title><style>${STYLE}</style></head>
<body><header><h1>AiControl conformance report</h1>
<div class="meta">${esc(report.target.label ?? targetName(report.target))} · seed ${report.seed} · ${esc(report.startedAt)} · ${(report.durationMs / 1000).toFixed(1)} s · ${esc(report.tool.name)} ${esc(report.tool.version)}</div>
<div class="controls"><input type="search" id="search" placeholder="Search rules, checks, messages" aria-label="Search"><span class="chips">${chips}</span><span class="muted"><span id="shown">${report.rules.length}</span> of ${report.rules.length} rules shown</span></div></header>
<main>${overview(report)}${groups
    .map(
      (g) =>
        `<section class="group"><h2>${esc(g)}</h2>${report.rules
          .filter((r) => r.group === g)
          .map(rule)
          .join("")}</section>`,
    )
    .join("")}
<p id="empty" class="empty" hidden>No rule matches the filter.</p></main>
<script>${SCRIPT}</script></body></html>
`;
}

export function htmlReporter(file: string, stdout?: (text: string) => void): Reporter {
  return { name: "html", onRunEnd: (report) => writeOutput(file, renderHtml(report), stdout) };
}
