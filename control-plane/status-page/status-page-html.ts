/**
 * The status page's document: the layout and styles inline, the script from /ui/app.js.
 * Nothing external (fonts, CDNs): it works on a cluster with no internet.
 */
export const statusPageHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kinference status</title>
<link rel="icon" href="/ui/icon.svg">
<style>
  :root { --ink: #1d2430; --muted: #6a7383; --line: #e3e6eb; --ok: #2f8f5b; --high: #c2410c; --bg: #f7f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
  header { display: flex; gap: 1.5rem; align-items: baseline; padding: .8rem 1.2rem; background: #fff; border-bottom: 1px solid var(--line); }
  header h1 { font-size: 1.1rem; margin: 0; }
  header span { color: var(--muted); }
  #error { color: var(--high); }
  main { display: grid; grid-template-columns: minmax(0, 5fr) minmax(260px, 2fr); gap: 1rem; padding: 1rem 1.2rem; }
  section, .panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; margin-bottom: 1rem; }
  h2 { font-size: .95rem; margin: 0 0 .5rem; }
  h3 { font-size: .9rem; margin: 0 0 .4rem; }
  h3 small { color: var(--muted); font-weight: normal; }
  table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
  th, td { text-align: left; padding: .2rem .35rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
  .decisions td, .decisions th { font-size: 12.5px; }
  th { color: var(--muted); font-weight: 500; }
  td.num { text-align: right; }
  .bar { display: inline-block; width: 64px; height: 8px; background: var(--line); border-radius: 4px; vertical-align: middle; overflow: hidden; }
  .fill { display: block; height: 100%; background: var(--ok); }
  .fill.high { background: var(--high); }
  .dot { display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: .4rem; }
  .dot.up { background: var(--ok); } .dot.down { background: var(--high); }
  .trust { padding: 0 .35rem; border-radius: 3px; background: var(--line); }
  .trust.precise { background: #dcf2e4; } .trust.approximate { background: #fdf0d5; } .trust.load-only { background: #fde2d9; }
  .decisions { max-height: 420px; overflow: auto; }
  svg { width: 100%; max-width: 320px; }
  svg circle { fill: #3b6fd8; fill-opacity: .6; }
  svg line.agree { stroke: var(--muted); stroke-dasharray: 4 3; }
  svg text { font-size: 10px; fill: var(--muted); }
  svg line.tick { stroke: var(--muted); }
  svg line.axis { stroke: var(--line); }
  #legend dt { font-weight: 500; margin-top: .3rem; }
  #legend dd { margin: 0 0 0 .8rem; color: var(--muted); font-size: 12.5px; white-space: normal; }
  .empty { color: var(--muted); }
  .condition { margin: .2rem 0 .4rem; padding: .3rem .5rem; border-left: 3px solid var(--high); background: #fdf0e9; font-size: 12.5px; white-space: normal; }
</style>
</head>
<body>
<header><h1>Kinference</h1><span id="snapshot">…</span><span>updated <span id="updated">–</span></span><span id="error"></span></header>
<main>
  <div>
    <div id="pools"></div>
    <section><h2>Decisions</h2><div class="decisions"><table>
      <thead><tr><th>time</th><th>request</th><th>tenant</th><th>rule</th><th>pool</th><th>pod</th><th>matched</th><th>predicted ms</th><th>actual ms</th><th>outcome</th></tr></thead>
      <tbody id="decisions"></tbody></table></div></section>
  </div>
  <div>
    <div class="panel"><h2>Predicted vs actual TTFT</h2><div id="chart"></div></div>
    <div class="panel"><h2>Tenants' quotas</h2><div id="tenants"></div></div>
    <div class="panel" id="legend"><h2>Reading the pods</h2><dl>
      <dt>KV blocks held (index)</dt><dd>Cached blocks the KV index holds for the pod, from its KV events: the prefixes a request can reuse there.</dd>
      <dt>KV in use (vLLM)</dt><dd>vLLM's <code>kv_cache_usage_perc</code>: the share of KV blocks running requests hold. It reads 0% on an idle pod, however many cached blocks it keeps for reuse.</dd>
      <dt>trust <span class="trust precise">precise</span></dt><dd>The cached tokens the index predicted agree with the <code>cached_tokens</code> the pod reports: predicted hits count in full.</dd>
      <dt>trust <span class="trust approximate">approximate</span></dt><dd>They disagree by more than the pool's tolerance (the drift, a moving average of the relative error, is shown beside it): predicted hits are discounted when scoring. The pod is promoted back once drift falls under half the tolerance.</dd>
      <dt>trust <span class="trust load-only">load-only</span></dt><dd>They disagree by more than twice the tolerance: the index is ignored and the pod routed on load alone until it agrees again.</dd>
    </dl></div>
  </div>
</main>
<script type="module" src="/ui/app.js"></script>
</body>
</html>
`

/**
 * What a browser gets instead of the page when it may not see it: why, and how to log in.
 * No script, nothing external; the message is the server's own, escaped all the same.
 */
export function loginPageHtml(message: string, sessionTtlMs: number): string {
  const hours = Math.round((sessionTtlMs / 3_600_000) * 10) / 10
  const text = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kinference status: log in</title>
<link rel="icon" href="/ui/icon.svg">
<style>
  body { margin: 0; font: 14px/1.5 system-ui, sans-serif; color: #1d2430; background: #f7f8fa; }
  main { max-width: 36rem; margin: 4rem auto; padding: 1rem 1.4rem; background: #fff; border: 1px solid #e3e6eb; border-radius: 6px; }
  h1 { font-size: 1.1rem; margin: 0 0 .6rem; }
  code { background: #eef0f3; padding: 0 .25rem; border-radius: 3px; }
  #why { color: #c2410c; }
  form { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .8rem 0; }
  input { flex: 1; min-width: 14rem; padding: .35rem .5rem; font: inherit; border: 1px solid #c9ced6; border-radius: 4px; }
  button { padding: .35rem .8rem; font: inherit; border: 1px solid #3b6fd8; border-radius: 4px; background: #3b6fd8; color: #fff; }
</style>
</head>
<body>
<main>
<h1>Kinference status</h1>
<p id="why">${text}</p>
<form method="post" action="/ui">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Open the status page</button>
</form>
<p>The admin token is the scorer's <code>KINFERENCE_ADMIN_TOKEN</code> (<code>npm start</code>
prints the page's whole address, <code>/ui?token=</code> followed by it). It is checked once;
this browser then holds a session that lasts ${hours === 1 ? '1 hour' : `${hours} hours`}, or
until the admin token changes.</p>
</main>
</body>
</html>
`
}
