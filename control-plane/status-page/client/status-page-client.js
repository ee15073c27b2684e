// @ts-check
/*
 * The status page's script, run in the browser as it is: plain JavaScript whose types
 * (JSDoc, from status-view.ts) tsc checks, so there is no bundler or build step and
 * nothing is fetched from the internet.
 */
/** @typedef {import('../status-view.ts').DecisionView} DecisionView */
/** @typedef {import('../status-view.ts').StatusPoolView} StatusPoolView */
/** @typedef {import('../status-view.ts').StatusView} StatusView */
/** @typedef {import('../status-view.ts').TenantView} TenantView */

const refreshMs = 2000
const maxRows = 200
const maxPoints = 500

/** @type {DecisionView[]} */
const decisions = []
let drawing = false

/** @param {string} id @returns {HTMLElement} */
function byId(id) {
  const element = document.getElementById(id)
  if (!element) throw new Error(`status page: #${id} is missing`)
  return element
}

/** @param {unknown} text */
function html(text) {
  return String(text ?? '').replace(/[&<>"']/g, (char) => `&#${char.codePointAt(0)};`)
}

/** @param {number | null} value */
const number = (value, digits = 0) => (value === null ? '–' : value.toFixed(digits))
/** @param {number | null} value */
const percent = (value) => (value === null ? '–' : `${(value * 100).toFixed(0)}%`)

/** @param {number | null} share */
function bar(share) {
  const width = share === null ? 0 : Math.max(0, Math.min(1, share)) * 100
  const level = share !== null && share >= 0.85 ? 'high' : 'ok'
  return `<span class="bar" title="${percent(share)}"><span class="fill ${level}" style="width:${width.toFixed(1)}%"></span></span> ${percent(share)}`
}

const kvHeldTitle =
  'Cached blocks the KV index holds for the pod, from its KV events: the prefixes it can reuse'
const kvInUseTitle =
  "vLLM's kv_cache_usage_perc: the share of KV blocks running requests hold; 0% on an idle pod however many cached blocks it keeps for reuse"

/** What each trust means, as the scorer demotes and promotes a pod (shared/routing/index-trust.ts). */
const trustMeaning = {
  precise:
    'the cached tokens the index predicts agree with what the pod reports: hits count in full',
  approximate:
    'the index and the pod disagree by more than the tolerance (drift): predicted hits are discounted when scoring',
  'load-only':
    'they disagree by more than twice the tolerance: the index is ignored and the pod routed on load alone',
}

/** @param {StatusPoolView['pods'][number]} pod */
function trustCell(pod) {
  const meaning = trustMeaning[/** @type {keyof typeof trustMeaning} */ (pod.trust)] ?? ''
  const drift = pod.drift === null ? '' : ` (drift ${pod.drift.toFixed(2)})`
  return `<span class="trust ${html(pod.trust)}" title="${html(meaning)}">${html(pod.trust)}</span>${pod.trust === 'precise' ? '' : html(drift)}`
}

/** @param {StatusPoolView} pool */
function poolTable(pool) {
  const rows = pool.pods
    .map(
      (pod) => `<tr data-pod="${html(pod.name)}">
        <td><span class="dot ${pod.ready ? 'up' : 'down'}"></span>${html(pod.name)}</td>
        <td class="num" data-col="kv-held">${number(pod.blocksIndexed)}</td>
        <td data-col="kv-in-use">${bar(pod.kvCacheUsage)}</td>
        <td class="num">${percent(pod.hitRate)}</td>
        <td class="num">${number(pod.waiting)}</td>
        <td class="num">${number(pod.running)}</td>
        <td data-col="trust">${trustCell(pod)}</td>
        <td class="num">${pod.lastEventAgeMs === null ? '–' : `${(pod.lastEventAgeMs / 1000).toFixed(1)} s`}</td>
      </tr>`,
    )
    .join('')
  return `<section class="pool"><h3>${html(pool.name)} <small>${html(pool.strategy ?? '')} · ${pool.pods.length} pods</small></h3>
    ${poolConditions(pool)}
    <table><thead><tr><th>pod</th><th title="${html(kvHeldTitle)}">KV blocks held (index)</th><th title="${html(kvInUseTitle)}">KV in use (vLLM)</th><th>hit rate</th><th>waiting</th><th>running</th><th>trust</th><th>last event</th></tr></thead>
    <tbody>${rows}</tbody></table></section>`
}

/**
 * The pool's conditions that are False (a tokenizer that cannot be loaded, counts the pods
 * disagree with), each with its reason, since when, and its message (the example in it).
 * @param {StatusPoolView} pool
 */
function poolConditions(pool) {
  return pool.conditions
    .filter((condition) => condition.status === 'False')
    .map(
      (c) =>
        `<p class="condition" data-condition="${html(c.type)}"><strong>${html(c.type)} False</strong> (${html(c.reason)}, since ${html(new Date(c.lastTransitionMs).toLocaleTimeString())}): ${html(c.message)}</p>`,
    )
    .join('')
}

/** @param {TenantView[]} tenants */
function tenantTable(tenants) {
  if (tenants.length === 0) return '<p class="empty">No quota use recorded.</p>'
  const rows = tenants.flatMap((tenant) =>
    tenant.buckets.map(
      (
        bucket,
      ) => `<tr data-tenant="${html(tenant.tenant)}"><td>${html(tenant.tenant)}</td><td>${html(bucket.name)}</td>
        <td class="num">${number(bucket.used)}</td><td class="num">${number(bucket.limit)}</td>
        <td>${bar(bucket.limit ? bucket.used / bucket.limit : null)}</td></tr>`,
    ),
  )
  return `<table><thead><tr><th>tenant</th><th>bucket</th><th>used</th><th>limit</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

/** @param {StatusView} status */
function renderStatus(status) {
  const snapshot = status.snapshot
  byId('snapshot').textContent = snapshot
    ? `config v${snapshot.version} (${snapshot.hash.replace(/^sha256:/, '').slice(0, 12)})`
    : 'no published config'
  byId('pools').innerHTML = status.pools.map(poolTable).join('')
  byId('tenants').innerHTML = tenantTable(status.tenants)
  byId('updated').textContent = new Date(status.generatedAtMs).toLocaleTimeString()
}

/** @param {DecisionView} d */
function decisionRow(d) {
  return `<tr data-id="${html(d.id)}"><td>${new Date(d.atMs).toLocaleTimeString()}</td><td title="${html(d.id)}">${html(d.id.slice(0, 8))}</td>
    <td>${html(d.tenant ?? '–')}</td><td>${html(d.rule ?? '–')}</td><td>${html(d.pool ?? d.backend ?? '–')}</td>
    <td>${html(d.pod ?? '–')}</td><td class="num">${number(d.matchedTokens)}</td>
    <td class="num">${number(d.predictedTtftMs)}</td><td class="num">${number(d.actualTtftMs)}</td>
    <td>${html(d.outcome ?? 'in flight')}</td></tr>`
}

function renderDecisions() {
  byId('decisions').innerHTML = decisions.slice(0, maxRows).map(decisionRow).join('')
  renderChart()
}

/** Predicted against actual TTFT (ms, log-log), with the line where they agree. */
function renderChart() {
  const points = decisions.flatMap((d) =>
    d.predictedTtftMs !== null && d.actualTtftMs !== null
      ? [{ predicted: d.predictedTtftMs, actual: d.actualTtftMs }]
      : [],
  )
  const size = 280
  // Room on the left and below for the ticks' values and the axes' titles.
  const pad = 48
  const values = points.flatMap((p) => [p.predicted, p.actual])
  const high = Math.log10(Math.max(1000, ...values))
  const low = Math.log10(Math.max(1, Math.min(10, ...values)))
  /** @param {number} ms */
  const at = (ms) => pad + ((Math.log10(Math.max(ms, 1)) - low) / (high - low)) * (size - 2 * pad)
  const dots = points
    .map(
      (p) =>
        `<circle cx="${at(p.predicted).toFixed(1)}" cy="${(size - at(p.actual)).toFixed(1)}" r="2.5"></circle>`,
    )
    .join('')
  byId('chart').innerHTML =
    `<svg viewBox="0 0 ${size} ${size}" role="img" aria-label="predicted vs actual TTFT">
    <line class="agree" x1="${pad}" y1="${size - pad}" x2="${size - pad}" y2="${pad}"></line>
    ${ticks(low, high, at, size, pad)}
    <text x="${size / 2}" y="${size - 12}" text-anchor="middle">predicted TTFT (log) →</text>
    <text x="${pad - 6}" y="12" text-anchor="start">actual TTFT (log) ↑</text>
    ${dots}</svg><p>${points.length} requests</p>`
}

/**
 * A tick and its value at each power of ten on both axes (10 ms, 100 ms, 1 s, ...).
 * @param {number} low @param {number} high log10 of the axes' ends
 * @param {(ms: number) => number} at @param {number} size @param {number} pad
 */
function ticks(low, high, at, size, pad) {
  const marks = []
  for (let power = Math.ceil(low); power <= Math.floor(high); power++) {
    const ms = 10 ** power
    const label = ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`
    const x = at(ms).toFixed(1)
    const y = (size - at(ms)).toFixed(1)
    marks.push(
      `<line class="tick" x1="${x}" y1="${size - pad}" x2="${x}" y2="${size - pad + 4}"></line>`,
      `<text class="tick x" x="${x}" y="${size - pad + 14}" text-anchor="middle">${label}</text>`,
      `<line class="tick" x1="${pad - 4}" y1="${y}" x2="${pad}" y2="${y}"></line>`,
      `<text class="tick y" x="${pad - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${label}</text>`,
    )
  }
  return marks.join('')
}

/** @param {MessageEvent<string>} event */
function onDecision(event) {
  /** @type {DecisionView} */
  const decision = JSON.parse(event.data)
  const known = decisions.findIndex((d) => d.id === decision.id)
  if (known >= 0) decisions.splice(known, 1)
  decisions.unshift(decision)
  decisions.length = Math.min(decisions.length, maxPoints)
  // A busy pool sends many a second: draw once per frame, not once per decision.
  if (!drawing) {
    drawing = true
    requestAnimationFrame(() => {
      drawing = false
      renderDecisions()
    })
  }
}

async function refresh() {
  try {
    const response = await fetch('/ui/api/status', { credentials: 'same-origin' })
    if (!response.ok) throw new Error(`status ${response.status}`)
    renderStatus(/** @type {StatusView} */ (await response.json()))
    byId('error').textContent = ''
  } catch (error) {
    byId('error').textContent = `could not refresh: ${/** @type {Error} */ (error).message}`
  }
}

function start() {
  void refresh()
  setInterval(() => void refresh(), refreshMs)
  const stream = new EventSource('/ui/api/decisions')
  stream.addEventListener('decision', /** @type {EventListener} */ (onDecision))
  renderChart()
}

start()
