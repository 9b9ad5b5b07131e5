/* Explorer 2 (rope page, long-range decay): the score of q = k rotated by RoPE against the
 * distance r = m − n, RoFormer's bound on it (§3.4.3, by Abel summation), and the relative-
 * position property live: the score with the key at n is the score with the key at 0.
 *
 * Rotation as posenc.apply_rope (src/posenc/rope.py): pair i is (x[2i], x[2i+1]) (interleaved)
 * or (x[i], x[i+d/2]) (half), turned by the angle p·θᵢ, θᵢ = b^(−2i/d); the score is the dot
 * product of the rotated query at m and the rotated key at n. The bound is the one on the rope
 * page: with hᵢ = q⁽ⁱ⁾·conj(k⁽ⁱ⁾) (hᵢ = |q⁽ⁱ⁾|² for q = k), h_{d/2} = 0 and the partial sums
 * S_j = Σ_{l<j} e^{i r θ_l}: |q·k| ≤ max_j |h_j − h_{j−1}| · Σ_{j=1}^{d/2} |S_j|.
 * tests/test_browser_explorers.py compares every shown number with posenc.
 */
import { chart, el, line, num, setup, table } from "./common.js"

export function vector(kind, d) {
  const q = []
  for (let j = 0; j < d; j++)
    q.push(kind === "ones" ? 1 : kind === "alternate" ? (j % 2 === 0 ? 1 : 0) : j < d / 2 ? 1 : 0)
  return q
}

/* The pairs (x, y) of q under a pairing. */
function pairsOf(q, pairing) {
  const n = q.length / 2, out = []
  for (let i = 0; i < n; i++) out.push(pairing === "interleaved" ? [q[2 * i], q[2 * i + 1]] : [q[i], q[i + n]])
  return out
}

/* q rotated at m dotted with k (= q) rotated at n. */
function score(pairs, theta, m, n) {
  let s = 0
  for (let i = 0; i < pairs.length; i++) {
    const [x, y] = pairs[i]
    const a = m * theta[i], c = n * theta[i]
    const ca = Math.cos(a), sa = Math.sin(a), cc = Math.cos(c), sc = Math.sin(c)
    s += (x * ca - y * sa) * (x * cc - y * sc) + (x * sa + y * ca) * (x * sc + y * cc)
  }
  return s
}

function bound(h, theta, r) {
  let re = 0, im = 0, sum = 0, jump = 0
  for (let j = 1; j <= theta.length; j++) {
    re += Math.cos(r * theta[j - 1])
    im += Math.sin(r * theta[j - 1])
    sum += Math.hypot(re, im)
    jump = Math.max(jump, Math.abs((j < h.length ? h[j] : 0) - h[j - 1]))
  }
  return jump * sum
}

/* The distances drawn: every integer up to R <= 1024, else every one up to 128 and 256 steps
 * evenly spaced on a log scale from 128 to R. */
export function distances(R) {
  if (R <= 1024) return Array.from({ length: R + 1 }, (_, r) => r)
  const out = Array.from({ length: 129 }, (_, r) => r)
  for (let k = 1; k <= 256; k++) {
    const r = Math.round(128 * (R / 128) ** (k / 256))
    if (r > out[out.length - 1]) out.push(r)
  }
  return out
}

export function compute(v) {
  const d = Number(v.dim), b = Number(v.base), n = Number(v.key), probe = Number(v.probe)
  const theta = []
  for (let i = 0; i < d / 2; i++) theta.push(b ** -((2 * i) / d))
  const pairs = pairsOf(vector(v.vector, d), v.pairing)
  const h = pairs.map(([x, y]) => x * x + y * y)
  const qq = h.reduce((a, c) => a + c, 0)
  const rs = distances(Number(v.range))
  const at0 = rs.map((r) => score(pairs, theta, r, 0))
  const atN = rs.map((r) => score(pairs, theta, n + r, n))
  const bounds = rs.map((r) => bound(h, theta, r))
  let diff = 0
  for (let k = 0; k < rs.length; k++) diff = Math.max(diff, Math.abs(atN[k] - at0[k]))
  return {
    d, n, probe, theta, h, qq, rs, at0, atN, bounds, diff,
    probeScore: score(pairs, theta, probe, 0), probeBound: bound(h, theta, probe),
  }
}

export function mount(box) {
  setup(box, (values, ctx) => {
    const r = compute(values)
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

    const p = r.probe
    table(ctx, t.cols, r.theta.map((th, i) => {
      let re = 0, im = 0
      for (let l = 0; l <= i; l++) { re += Math.cos(p * r.theta[l]); im += Math.sin(p * r.theta[l]) }
      return [String(i), num(th), num(r.h[i], "h"), num(Math.hypot(re, im)), num(r.h[i] * Math.cos(p * th), "term")]
    }))
  })
}
