/* The bias explorer (hooks/explorers.py, EXPLORERS["bias"]): ALiBi's and T5's additive biases.
 *
 * It draws; posenc computes (hooks/explorer_data.py writes the numbers at build time, fetched
 * when first needed):
 * - ALiBi: posenc.alibi_slopes(n) and their log2 for every head count (data/bias/alibi.json).
 *   The bias of query i and key j is the slope times the distance, m * (0 - (i - j)), or
 *   m * (0 - |i - j|) bidirectionally: the one multiplication posenc.alibi_bias does in float64.
 * - T5: posenc.t5_bucket of every relative position a 256-token map holds, for every number of
 *   buckets and max_distance, as runs of equal buckets (data/bias/t5-<direction>.json), with
 *   the readout's numbers; a setting posenc refuses has none.
 * tests/test_browser_explorers_bias_mrope.py compares what is shown with posenc.
 */
import { chart, colour, el, fmt, line, num, setup, table } from "./common.js"

const file = (v) => new URL(
  `data/bias/${v.scheme === "t5" ? `t5-${v.direction}` : "alibi"}.json`, import.meta.url).href

/* posenc.alibi_bias(T, T, n, causal)[h, i, j] for the slope m of head h. */
export const alibi = (m, i, j, causal) =>
  causal ? (j <= i ? m * (0 - (i - j)) : -Infinity) : m * (0 - Math.abs(i - j))

/* The bucket of each relative position -span..span from the runs posenc's buckets make. */
export function t5Buckets(runs) {
  const out = []
  for (const [bucket, count] of runs) for (let k = 0; k < count; k++) out.push(bucket)
  const span = (out.length - 1) / 2
  return (rel) => out[rel + span]
}

const sup = (node) => {
  const out = document.createElement("sup")
  out.append(node)
  return out
}

const RAMP = Array.from({ length: 256 }, (_, k) => colour(k / 255).match(/\d+/g).map(Number))

function limit(ctx, name, max) {
  const input = ctx.control(name)
  input.max = String(max)
  if (+input.value > max) input.value = String(max)
  return +input.value
}

/* The map: a T x T picture (one pixel per query and key, drawn on a canvas and shown as an SVG
 * <image>) in a square with its axes, and the colour scale beside it. */
const MAP = { x: 56, y: 8, size: 186 }
const MASKED = "fill: var(--md-default-fg-color--lightest)"

function heatmap(ctx, T, value, lo, hi, qi, kj, ends) {
  const { text } = ctx
  const svg = ctx.plot("map")
  svg.replaceChildren()
  const pixels = document.createElement("canvas")
  pixels.width = pixels.height = T
  const image = new ImageData(T, T)
  const row = []
  let masked = false
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++) {
      const v = value(i, j)
      if (i === qi) row.push(v)
      if (v === -Infinity) {
        masked = true  // transparent: the masked colour behind shows through
        continue
      }
      const rgb = RAMP[Math.round(255 * (hi > lo ? (v - lo) / (hi - lo) : 1))]
      image.data.set([...rgb, 255], 4 * (i * T + j))
    }
  pixels.getContext("2d").putImageData(image, 0, 0)
  const { x, y, size } = MAP
  const cell = size / T
  const axes = el("g", { class: "pe-axis" }, svg)
  el("rect", { x, y, width: size, height: size, style: MASKED }, svg)
  const picture = el("image", {
    x, y, width: size, height: size, preserveAspectRatio: "none", href: pixels.toDataURL(),
    style: "image-rendering: pixelated",
  }, svg)
  picture.dataset.k = "row"  // query qi's row, exact
  picture.dataset.v = row.map(String).join(" ")
  el("rect", { x: x + kj * cell - 1, y: y + qi * cell - 1, width: cell + 2, height: cell + 2,
    style: "fill: none; stroke: var(--md-default-fg-color); stroke-width: 1.5" }, svg)
  el("path", { d: `M${x},${y}V${y + size}H${x + size}` }, axes)
  for (const t of [0, T - 1]) {
    const at = (t + 0.5) * cell
    el("text", { x: x + at, y: y + size + 13, "text-anchor": "middle" }, axes).textContent = String(t)
    el("text", { x: x - 4, y: y + at + 4, "text-anchor": "end" }, axes).textContent = String(t)
  }
  el("text", { x: x + size / 2, y: y + size + 26, "text-anchor": "middle" }, axes).textContent = text.key
  el("text", { x: 14, y: y + size / 2, "text-anchor": "middle",
    transform: `rotate(-90 14 ${y + size / 2})` }, axes).textContent = text.query
  // the colour scale, from hi (top) to lo
  const bar = x + size + 14
  for (let k = 0; k < 32; k++)
    el("rect", { x: bar, y: y + (k * size) / 32, width: 10, height: size / 32 + 0.5,
      fill: colour(1 - k / 31) }, svg)
  el("text", { x: bar + 13, y: y + 9 }, axes).textContent = ends[1]
  el("text", { x: bar + 13, y: y + size }, axes).textContent = ends[0]
  if (masked) {
    el("rect", { x: bar, y: y + size + 8, width: 10, height: 10, style: MASKED }, svg)
    el("text", { x: bar + 13, y: y + size + 17 }, axes).textContent = text.masked
  }
}

function render(v, ctx, data) {
  const { text } = ctx
  const t5 = v.scheme === "t5"
  const bidi = v.direction === "bidirectional"
  const T = +v.tokens
  for (const name of ["heads", "head"]) ctx.control(name).disabled = t5
  for (const name of ["buckets", "maxdist"]) ctx.control(name).disabled = !t5
  const heads = +v.heads
  const h = limit(ctx, "head", heads - 1)
  const qi = limit(ctx, "qi", T - 1)
  const kj = limit(ctx, "kj", T - 1)
  ctx.readout.replaceChildren()
  const svg = ctx.plot("side")
  if (!t5) {
    const [m, logs] = data[heads]
    const causal = !bidi
    // one colour scale for every head: the steepest head's farthest bias is the darkest
    const steep = Math.max(...m)
    const low = steep * (0 - (T - 1))
    heatmap(ctx, T, (i, j) => alibi(m[h], i, j, causal), low, 0, qi, kj, [fmt(low, 3), "0"])
    const p = line(ctx.readout, text.alibi, {
      h: String(h), n: String(heads), m: num(m[h], "slope"), log2: sup(num(logs[h], "log2")),
      i: String(qi), j: String(kj), v: num(alibi(m[h], qi, kj, causal), "bias"),
    })
    if (causal && kj > qi) p.append(` (${text.masked})`)
    line(ctx.readout, text.alibi_far, { far: num(m[h] * (0 - (T - 1)), "far") })
    const c = chart(svg, { min: -0.5, max: heads - 0.5, label: text.head },
      { min: -8, max: 0, label: text.slope })
    const xs = m.map((_, k) => k)
    const path = c.line(xs, logs, "pe-s1")
    path.dataset.k = "slopes"
    path.dataset.v = m.map(String).join(" ")
    c.dots(xs, logs, xs.map((k) => (k === h ? "pe-d2" : "pe-d1")), heads > 32 ? 1.6 : 2.6)
    table(ctx, text.cols_alibi, m.map((s, k) => [String(k), num(s), num(logs[k])]))
    return
  }
  const N = +v.buckets, D = +v.maxdist
  const rule = data[`${N}-${D}`]
  if (!rule.runs) {
    heatmap(ctx, T, () => -Infinity, 0, 1, qi, kj, ["", ""])
    line(ctx.readout, text.t5_refused, { D: String(D), e: String(rule.exact), N: String(N) })
    svg.replaceChildren()
    table(ctx, text.cols_t5, [])
    return
  }
  const bucket = t5Buckets(rule.runs)
  // the decoder masks keys after the query (their bucket is 0)
  heatmap(ctx, T, (i, j) => (!bidi && j > i ? -Infinity : bucket(j - i)), 0, N - 1, qi, kj,
    ["0", String(N - 1)])
  const rel = kj - qi
  const p5 = line(ctx.readout, text.t5, {
    i: String(qi), j: String(kj), rel: num(rel, "rel"), b: num(bucket(rel), "bucket"), N: String(N),
  })
  if (!bidi && rel > 0) p5.append(` (${text.masked})`)
  line(ctx.readout, text.t5_far, {
    exact: String(rule.exact), far: num(rule.far, "far"), last: num(rule.last, "last"),
  })
  const rels = Array.from({ length: 2 * T - 1 }, (_, k) => k - (T - 1))
  const buckets = rels.map(bucket)
  const c = chart(svg, { min: -(T - 1), max: T - 1, label: text.rel },
    { min: 0, max: N - 1, label: text.bucket })
  c.line(rels, buckets, "pe-s1", "buckets")
  c.dots([rel], [bucket(rel)], ["pe-d2"], 3)
  const ranges = Array.from({ length: N }, () => [])
  rels.forEach((r, k) => ranges[buckets[k]].push(r))
  table(ctx, text.cols_t5, ranges.map((rs, b) => {
    const span = rs.length === 0 ? "—"
      : rs.length === 1 ? fmt(rs[0]) : `${fmt(rs[0])} … ${fmt(rs[rs.length - 1])}`
    const cell = document.createElement("span")
    cell.textContent = span
    cell.dataset.v = rs.length ? `${rs[0]} ${rs[rs.length - 1]}` : ""
    return [String(b), cell]
  }))
}

export function mount(box) {
  const ctx = setup(box, render, file)
  const svg = ctx.plot("map")
  // a click on the map picks that query and key (the number fields do it from the keyboard)
  svg.addEventListener("click", (event) => {
    const picture = svg.querySelector("image")
    if (!picture) return
    const r = picture.getBoundingClientRect()
    const T = +ctx.control("tokens").value
    const fx = (event.clientX - r.left) / r.width, fy = (event.clientY - r.top) / r.height
    if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return
    for (const [name, f] of [["qi", fy], ["kj", fx]]) {
      const input = ctx.control(name)
      input.value = String(Math.min(T - 1, Math.floor(f * T)))
      input.dispatchEvent(new Event("change", { bubbles: true }))
    }
  })
  return ctx
}
