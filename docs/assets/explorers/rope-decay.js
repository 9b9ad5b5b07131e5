/* Explorer 2 (rope page, long-range decay): the score of q = k rotated by RoPE against the
 * distance r = m − n, RoFormer's bound on it (§3.4.3, by Abel summation), and the relative-
 * position property live: the score with the key at n is the score with the key at 0.
 *
 * It draws; posenc computes. hooks/explorer_data.py writes, at build time, one file per base,
 * head dimension, pairing and q = k (fetched when first needed): θᵢ (posenc.rope_frequencies),
 * hᵢ = |q⁽ⁱ⁾|², the score q·k of posenc.apply_rope at every distance drawn with the key at 0,
 * the score with the key at each position n offered (as its difference from the one at 0), the
 * bound (|q·k| ≤ max_j |h_j − h_{j−1}| · Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{l<j} e^{i r θ_l}) and,
 * per probe distance, the readout's and the table's numbers.
 * tests/test_browser_explorers.py compares every shown number with posenc.
 */
import { chart, el, line, num, setup, table } from "./common.js"

const file = (v) =>
  new URL(`data/rope-decay/${v.base}-${v.dim}-${v.pairing}-${v.vector}.json`, import.meta.url).href

/* Everything the explorer shows, for one setting, from its file. */
export function compute(v, data) {
  const at = new Map(data.r.map((r, k) => [r, k]))
  const rs = data.ranges[v.range]
  const pick = (values) => rs.map((r) => values[at.get(r)])
  const at0 = pick(data.score)
  const shift = data.shifted[v.key]
  const atN = pick(shift.diff).map((x, k) => at0[k] + x)
  const probe = data.probes[v.probe]
  return {
    n: Number(v.key), probe: Number(v.probe), theta: data.theta, h: data.h, qq: data.qq, rs, at0, atN,
    bounds: pick(data.bound), diff: shift.max[v.range], probeScore: probe.score,
    probeBound: probe.bound, S: probe.S, term: probe.term,
  }
}

export function mount(box) {
  setup(box, (values, ctx, data) => {
    const r = compute(values, data)
    const t = ctx.text
    const R = r.rs[r.rs.length - 1]
    const split = R > 1024
    /* beyond r = 128 the axis is logarithmic (35 % of the width is linear, 0 to 128) */
    const sx = split
      ? ([p, q]) => (x) => x <= 128
        ? p + (x / 128) * 0.35 * (q - p)
        : p + (0.35 + (0.65 * Math.log(x / 128)) / Math.log(R / 128)) * (q - p)
      : undefined
    const xticks = split ? [0, 128, 1000, 10000].filter((x) => x <= R) : undefined
    const xaxis = { min: 0, max: R, label: t.r }

    const norm = r.at0.map((s) => s / r.qq)
    const normN = r.atN.map((s) => s / r.qq)
    const lo = Math.min(-0.2, ...norm), hi = Math.max(1, ...norm)
    const a = chart(ctx.plot("score"), xaxis, { min: lo, max: hi * 1.05, label: t.score }, { sx, xticks })
    a.hline(0, "pe-ref")
    a.line(r.rs, norm, "pe-s1", "score")
    a.line(r.rs, normN, "pe-s3", "score_shifted")
    a.legend([["n = 0", "pe-s1"], [`n = ${r.n}`, "pe-s3"]])
    if (split) el("text", { x: 200, y: 22, class: "pe-label", "text-anchor": "middle" }, ctx.plot("score")).textContent = t.log

    const size = r.at0.map(Math.abs)
    const top = Math.max(...r.bounds, ...size)
    const floor = top * 1e-4
    const c = chart(ctx.plot("bound"), xaxis, { min: floor, max: top * 2, log: true, label: t.size }, { sx, xticks })
    c.line(r.rs, r.bounds, "pe-s2", "bound")
    c.line(r.rs, size.map((s) => Math.max(s, floor)), "pe-s1")
    c.legend([[t.bound, "pe-s2"], [t.actual, "pe-s1"]])

    const out = ctx.readout
    out.replaceChildren()
    line(out, t.probe, {
      qq: num(r.qq, "qq"), r: num(r.probe, "probe"),
      s: num(r.probeScore, "probe_score"), B: num(r.probeBound, "probe_bound"),
    })
    line(out, t.relative, { n: num(r.n, "key"), diff: num(r.diff, "diff", 2), count: num(r.rs.length, "count") })

    table(ctx, t.cols, r.theta.map((th, i) =>
      [String(i), num(th), num(r.h[i], "h"), num(r.S[i]), num(r.term[i], "term")]))
  }, file)
}
