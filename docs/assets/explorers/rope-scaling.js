/* Explorer 1 (rope-scaling page): the RoPE frequency ladder under each context-extension method.
 *
 * The formulas are those of posenc.rope_frequencies (src/posenc/rope_scaling.py, itself equal to
 * transformers' ROPE_INIT_FUNCTIONS), in float64 and in the same order of operations;
 * tests/test_browser_explorers.py compares every shown number with posenc. NTK-aware scaling is
 * plain RoPE with base b·s^(d/(d−2)). LongRoPE's factors are made up, as the page says:
 * short eᵢ = 1 + 0.25·uᵢ, long eᵢ = max(1, the piecewise-linear curve through (0, 1),
 * (16/63, 1.2), (40/63, 0.75·s), (1, 1.25·s)), uᵢ = i/(d/2 − 1); at d = 128 and s = 8 these are
 * the page's factors.
 */
import { chart, line, num, setup, table } from "./common.js"

const TWO_PI = 2 * Math.PI

/* np.interp on increasing nodes. */
function interp(x, xs, ys) {
  if (x <= xs[0]) return ys[0]
  for (let k = 1; k < xs.length; k++)
    if (x <= xs[k]) return ys[k - 1] + ((x - xs[k - 1]) * (ys[k] - ys[k - 1])) / (xs[k] - xs[k - 1])
  return ys[ys.length - 1]
}

export function longropeFactors(d, s) {
  const n = d / 2, last = n - 1
  const u = (i) => i / last
  const short = [], long = []
  for (let i = 0; i < n; i++) {
    short.push(interp(u(i), [0, 1], [1, 1.25]))
    long.push(Math.max(1, interp(u(i), [0, 16 / 63, 40 / 63, 1], [1, 1.2, 0.75 * s, 1.25 * s])))
  }
  return { short, long }
}

const LENGTHS = { half: (L0) => L0 / 2, trained: (L0) => L0, double: (L0) => 2 * L0 }

/* Everything the explorer shows, for one setting. */
export function compute(v) {
  const d = Number(v.dim), b = Number(v.base), L0 = Number(v.trained), s = Number(v.factor)
  const L = v.current === "scaled" ? s * L0 : LENGTHS[v.current](L0)
  const n = d / 2
  const e = [], plain = []
  for (let i = 0; i < n; i++) {
    e.push((2 * i) / d)
    plain.push(b ** -e[i])
  }
  let scaled = plain.slice(), attention = 1, info = {}, gamma = null
  if (v.method === "linear") scaled = plain.map((t) => t / s)
  else if (v.method === "ntk") {
    const b2 = b * s ** (d / (d - 2))
    scaled = e.map((x) => b2 ** -x)
    info = { b: b2 }
  } else if (v.method === "dynamic") {
    const length = Math.max(L, L0)
    let b2 = b
    if (length !== L0) {
      b2 = b * (s * length / L0 - (s - 1)) ** (d / (d - 2))
      scaled = e.map((x) => b2 ** -x)
    }
    info = { b: b2 }
  } else if (v.method === "yarn") {
    attention = s <= 1 ? 1 : 0.1 * Math.log(s) + 1
    const pairIndex = (rotations) => (d * Math.log(L0 / (rotations * 2 * Math.PI))) / (2 * Math.log(b))
    let lo = Math.floor(Math.max(pairIndex(32), 0))
    let hi = Math.ceil(Math.min(pairIndex(1), d - 1))
    if (lo === hi) hi += 0.001
    const ramp = plain.map((_, i) => Math.min(1, Math.max(0, (i - lo) / (hi - lo))))
    scaled = plain.map((t, i) => (t / s) * ramp[i] + t * (1 - ramp[i]))
    gamma = ramp.map((r) => 1 - r)
    info = { lo, hi }
  } else if (v.method === "llama3") {
    const lowW = L0 / 1, highW = L0 / 4
    let kept = 0, divided = 0, blended = 0
    scaled = plain.map((t) => {
      const w = TWO_PI / t
      const out = w > lowW ? t / s : t
      if (w < highW) { kept++; return out }
      if (w > lowW) { divided++; return out }
      blended++
      const smooth = (L0 / w - 1) / (4 - 1)
      return ((1 - smooth) * out) / s + smooth * out
    })
    info = { kept, divided, blended }
  } else if (v.method === "longrope") {
    const f = longropeFactors(d, s)
    const ext = L > L0 ? f.long : f.short
    scaled = plain.map((t, i) => t / ext[i])
    attention = s <= 1 ? 1 : Math.sqrt(1 + Math.log(s) / Math.log(L0))
    info = { long: L > L0, last: ext[n - 1] }
  }
  /* A pair turned a full circle within L0 (wavelength <= L0), or else its angles up to L stay
   * within those of training (L·θ' <= L0·θ, to a relative 1e-9 so that an exact tie such as
   * linear scaling at L = s·L0 is not decided by rounding), or they go beyond. */
  const cls = plain.map((t, i) => {
    if (TWO_PI / t <= L0) return "seen"
    return L * scaled[i] <= L0 * t * (1 + 1e-9) ? "inside" : "beyond"
  })
  return { d, b, L0, s, L, n, plain, scaled, attention, info, gamma, cls }
}

export function mount(box) {
  setup(box, (values, ctx) => {
    const r = compute(values)
    const t = ctx.text
    const pairs = r.plain.map((_, i) => i)
    const wave = r.scaled.map((x) => TWO_PI / x)
    const plainWave = r.plain.map((x) => TWO_PI / x)
    const slow = r.plain.map((x, i) => x / r.scaled[i])

    const all = [...wave, ...plainWave, r.L0, r.L]
    const w = chart(ctx.plot("wave"),
      { min: 0, max: r.n - 1, label: t.pair },
      { min: Math.min(...all) / 1.5, max: Math.max(...all) * 1.5, log: true, label: t.wave })
    if (r.gamma) w.band(r.info.lo, Math.min(r.info.hi, r.n - 1), "pe-band")
    w.line(pairs, plainWave, "pe-muted", "wave_plain")
    w.line(pairs, wave, "pe-s1", "wave_scaled")
    w.hline(r.L0, "pe-ref", t.trained)
    if (r.L !== r.L0) w.hline(r.L, "pe-s3", t.current)
    const dotClass = { seen: "pe-d1", inside: "pe-d3", beyond: "pe-d2" }
    w.dots(pairs, wave, r.cls.map((c) => dotClass[c]), 1.8)
    w.legend([[t.plain, "pe-muted"], [t.scaled, "pe-s1"]])

    const lo = Math.min(1, ...slow), hi = Math.max(2, ...slow)
    const p = chart(ctx.plot("slow"),
      { min: 0, max: r.n - 1, label: t.pair },
      { min: lo / 1.2, max: hi * 1.2, log: true, label: t.slow })
    if (r.gamma) p.band(r.info.lo, Math.min(r.info.hi, r.n - 1), "pe-band")
    p.hline(1, "pe-ref")
    if (r.s > 1) p.hline(r.s, "pe-ref", `s = ${r.s}`)
    p.line(pairs, slow, "pe-s2", "slow")
    if (r.gamma) p.legend([[t.ramp, "pe-band"]])

    const out = ctx.readout
    out.replaceChildren()
    const i = r.info
    if (values.method === "none") line(out, t.none, {})
    else if (values.method === "linear") line(out, t.linear, { s: num(r.s, "s") })
    else if (values.method === "ntk") line(out, t.ntk, { b: num(i.b, "base_scaled") })
    else if (values.method === "dynamic") line(out, t.dynamic, { L: num(r.L, "L"), b: num(i.b, "base_scaled") })
    else if (values.method === "yarn") line(out, t.yarn, { lo: num(i.lo, "ramp_lo"), hi: num(i.hi, "ramp_hi") })
    else if (values.method === "llama3")
      line(out, t.llama3, { kept: num(i.kept, "kept"), divided: num(i.divided, "divided"), blended: num(i.blended, "blended") })
    else line(out, i.long ? t.longrope_long : t.longrope_short, { last: num(i.last, "factor_last") })
    if (r.attention !== 1 || values.method === "yarn" || values.method === "longrope")
      line(out, t.attention, { a: num(r.attention, "attention"), a2: num(r.attention * r.attention, "attention2") })
    const count = (c) => r.cls.filter((x) => x === c).length
    line(out, t.classes, {
      L: num(r.L, "length"), L0: num(r.L0),
      seen: num(count("seen"), "n_seen"), inside: num(count("inside"), "n_inside"), beyond: num(count("beyond"), "n_beyond"),
    })

    table(ctx, t.cols, r.plain.map((x, k) => [
      String(k), num(x), num(r.scaled[k]), num(wave[k]), num(slow[k]),
      r.gamma ? num(r.gamma[k], "gamma") : "—",
      num(r.L0 * x), num(r.L * r.scaled[k]), t[r.cls[k]],
    ]))
  })
}
