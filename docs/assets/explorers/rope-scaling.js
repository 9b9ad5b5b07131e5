/* Explorer 1 (rope-scaling page): the RoPE frequency ladder under each context-extension method.
 *
 * It draws; posenc computes. The numbers of every setting the controls offer are
 * posenc.rope_frequencies' (hooks/explorer_data.py writes them at build time, one file per
 * method, base, head dimension and trained length, fetched when first needed): the scaled
 * inverse frequencies (0: the plain one; -1: the plain one divided by s, which this script does
 * and which rounds as NumPy's division), the attention factor, each pair's class and the
 * readout's numbers. tests/test_browser_explorers.py compares every shown number with posenc.
 */
import { chart, line, num, setup, table } from "./common.js"

const TWO_PI = 2 * Math.PI
const LENGTHS = { half: 0.5, trained: 1, double: 2 }

/* The file a setting's numbers are in. */
const file = (v) =>
  new URL(`data/rope-scaling/${v.method}-${v.base}-${v.dim}-${v.trained}.json`, import.meta.url).href

/* Everything the explorer shows, for one setting, from its file. */
export function compute(v, data) {
  const L0 = Number(v.trained), s = Number(v.factor)
  const L = v.current === "scaled" ? s * L0 : LENGTHS[v.current] * L0
  const at = data.at[v.factor]
  let row = at.inv ? at : at[v.current]
  if (typeof row === "string") row = at[row]  // the same numbers as another length
  const plain = data.plain
  const scaled = row.inv.map((x, i) => (x === 0 ? plain[i] : x === -1 ? plain[i] / s : x))
  const cls = [...(at.inv ? at.cls[v.current] : row.cls)]
    .map((c) => ({ s: "seen", i: "inside", b: "beyond" })[c])
  const gamma = row.info.gamma ?? null
  return { L0, s, L, n: plain.length, plain, scaled, attention: row.a, info: row.info, gamma, cls }
}

export function mount(box) {
  setup(box, (values, ctx, data) => {
    const r = compute(values, data)
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
  }, file)
}
