/* The M-RoPE explorer (hooks/explorers.py, EXPLORERS["mrope"]): the (t, h, w) ids of a prompt
 * of text, an image and a video, as posenc.mrope_position_ids builds them.
 *
 * The layout is [text, image (1, h, w), text, video, text]. Qwen2-VL: the video is one grid of
 * t frames, frame k at temporal id start + k. Qwen2.5-VL: the same grid, frame k at
 * start + trunc(k * tokens_per_second * seconds_per_grid), the products in float32 as
 * transformers forms them (Math.fround). Qwen3-VL: each frame a grid of T = 1 after its
 * timestamp text. After a grid the counter goes to its largest id + 1 ("max", the release code)
 * or to start + max(h, w)/m ("spatial", transformers 5.23). The frequency pairs: mrope_section
 * [16, 24, 24] in bands (Qwen2-VL, Qwen2.5-VL) or [24, 20, 20] interleaved (Qwen3-VL), as
 * posenc.apply_mrope assigns them. tests/test_browser_explorers_bias_mrope.py compares what is
 * shown with posenc.
 */
import { fill, line, num, setup, table } from "./common.js"

export const SECTIONS = { bands: [16, 24, 24], interleaved: [24, 20, 20] }

/* The segments of the prompt: {kind: "text" | "stamp", n} or {kind: "image" | "video", t, h, w,
 * step, frame}. */
export function layout(v) {
  const qwen3 = v.model === "Qwen3-VL"
  const f = Math.fround
  const step = v.model === "Qwen2.5-VL" ? f(f(+v.tps) * f(+v.seconds)) : 1
  const video = { kind: "video", h: +v.vidh, w: +v.vidw }
  const segs = [
    { kind: "text", n: +v.before },
    { kind: "image", t: 1, h: +v.imgh, w: +v.imgw, step: 1 },
    { kind: "text", n: +v.between },
  ]
  if (qwen3)
    for (let k = 0; k < +v.frames; k++)
      segs.push({ kind: "stamp", n: +v.stamp, frame: k }, { ...video, t: 1, step: 1, frame: k })
  else segs.push({ ...video, t: +v.frames, step })
  segs.push({ kind: "text", n: +v.after })
  return segs
}

/* posenc.mrope_position_ids for one layout: a token list {seg, t, h, w, frame}. */
export function positionIds(segs, merge, resume) {
  const tokens = []
  let cur = 0
  segs.forEach((seg, s) => {
    if (seg.kind === "text" || seg.kind === "stamp") {
      for (let k = 0; k < seg.n; k++, cur++) tokens.push({ seg: s, t: cur, h: cur, w: cur })
      return
    }
    const gh = seg.h / merge, gw = seg.w / merge
    const start = cur
    let top = -Infinity
    for (let k = 0; k < seg.t; k++) {
      // float32, truncated, as transformers' (arange(t) * interval).long()
      const tk = seg.step === 1 ? k : Math.trunc(Math.fround(Math.fround(k) * seg.step))
      for (let r = 0; r < gh; r++)
        for (let c = 0; c < gw; c++) {
          const id = { seg: s, t: start + tk, h: start + r, w: start + c, frame: seg.frame ?? k }
          top = Math.max(top, id.t, id.h, id.w)
          tokens.push(id)
        }
    }
    cur = resume === "max" ? top + 1 : start + Math.max(gh, gw)
  })
  return tokens
}

/* The axis (0 = t, 1 = h, 2 = w) of each of the 64 pairs of a 128-wide head. */
export function pairAxes(interleaved) {
  const sec = interleaved ? SECTIONS.interleaved : SECTIONS.bands
  if (!interleaved) return sec.flatMap((n, a) => Array(n).fill(a))
  const axes = Array(64).fill(0)
  for (const a of [1, 2]) for (let i = a; i < 3 * sec[a]; i += 3) axes[i] = a
  return axes
}

const STYLE = `
.pe-mr-tokens{max-height:24rem;overflow:auto;border:1px solid var(--md-default-fg-color--lightest);
  padding:.3rem;margin:.4rem 0}
.pe-mr-seg{display:inline-block;vertical-align:top;margin:.15rem .4rem .15rem 0}
.pe-mr-cap{display:block;font-size:.6rem;color:var(--md-default-fg-color--light)}
.pe-mr-grid{display:grid;gap:2px}
.pe-mr-run{display:flex;flex-wrap:wrap;gap:2px}
.pe-mr-tok{font:.6rem/1.4 var(--md-code-font-family,monospace);padding:0 .2rem;white-space:nowrap;
  border:1px solid var(--md-default-fg-color--lighter);border-left-width:4px;
  color:var(--md-default-fg-color)}
.pe-mr-text{border-left-color:#7f7f7f}.pe-mr-stamp{border-left-color:#2ca02c}
.pe-mr-image{border-left-color:#1f77b4}.pe-mr-video{border-left-color:#ff7f0e}
.pe-mr-pairs{display:grid;grid-template-columns:repeat(32,1fr);gap:1px;margin:.3rem 0 .6rem}
.pe-mr-pair{font:.55rem/1.6 var(--md-code-font-family,monospace);text-align:center;
  color:var(--md-default-fg-color);border-bottom:4px solid}
.pe-mr-ax0{border-color:#1f77b4}.pe-mr-ax1{border-color:#ff7f0e}.pe-mr-ax2{border-color:#2ca02c}
`

function style() {
  if (document.getElementById("pe-mrope-style")) return
  const s = document.createElement("style")
  s.id = "pe-mrope-style"
  s.textContent = STYLE
  document.head.append(s)
}

const chip = (tok, kind) => {
  const span = document.createElement("span")
  span.className = `pe-mr-tok pe-mr-${kind}`
  span.dataset.k = "ids"
  span.dataset.v = `${tok.t} ${tok.h} ${tok.w}`
  span.textContent = `${tok.t}/${tok.h}/${tok.w}`
  return span
}

function kindName(text, seg) {
  if (seg.kind === "video") return text.frame.replace("{k}", String(seg.frame))
  return text[seg.kind]
}

function render(v, ctx) {
  const { text } = ctx
  const merge = +v.merge
  const qwen3 = v.model === "Qwen3-VL"
  ctx.control("seconds").disabled = ctx.control("tps").disabled = v.model !== "Qwen2.5-VL"
  ctx.control("stamp").disabled = !qwen3
  const segs = layout(v)
  const tokens = positionIds(segs, merge, v.resume)

  // the tokens, segment by segment; a grid as rows and columns of merged patches
  const box = ctx.plot("tokens")
  const shown = document.createElement("div")
  shown.className = "pe-mr-tokens"
  let k = 0
  segs.forEach((seg, s) => {
    const mine = []
    while (k < tokens.length && tokens[k].seg === s) mine.push(tokens[k++])
    const frames = seg.kind === "video" || seg.kind === "image" ? seg.t : 1
    const per = mine.length / frames
    for (let f = 0; f < frames; f++) {
      const part = document.createElement("div")
      part.className = "pe-mr-seg"
      const cap = document.createElement("span")
      cap.className = "pe-mr-cap"
      const frame = seg.kind === "video" ? { ...seg, frame: seg.frame ?? f } : seg
      cap.textContent = seg.kind === "video" ? `${text.video} · ${kindName(text, frame)}` : text[seg.kind]
      const body = document.createElement("div")
      if (seg.kind === "image" || seg.kind === "video") {
        body.className = "pe-mr-grid"
        body.style.gridTemplateColumns = `repeat(${seg.w / merge}, auto)`
      } else body.className = "pe-mr-run"
      for (const tok of mine.slice(f * per, (f + 1) * per)) body.append(chip(tok, seg.kind))
      part.append(cap, body)
      shown.append(part)
    }
  })
  shown.tabIndex = 0
  shown.setAttribute("role", "group")
  shown.setAttribute("aria-label", text.tokens_label)
  box.replaceChildren(shown)

  // readout: counts, where the text resumes, the next token
  const kindOf = (tok) => segs[tok.seg].kind
  const img = tokens.filter((t) => kindOf(t) === "image")
  const vid = tokens.filter((t) => kindOf(t) === "video")
  const big = (ts) => Math.max(...ts.flatMap((t) => [t.t, t.h, t.w]))
  const afterImage = tokens[img.length + +v.before]
  const afterVideo = tokens[tokens.length - +v.after]
  ctx.readout.replaceChildren()
  line(ctx.readout, text.count, {
    n: num(tokens.length, "tokens"), img: num(img.length, "image_tokens"),
    vid: num(vid.length, "video_tokens"),
  })
  line(ctx.readout, text.resumed, {
    x: num(afterImage.t, "after_image"), M: num(big(img), "image_max"),
    moved: num(afterImage.t - img[0].t, "moved"), k: String(img.length),
  })
  const p = line(ctx.readout, text.resumed_video, {
    x: num(afterVideo.t, "after_video"), T: num(Math.max(...vid.map((t) => t.t)), "video_t"),
  })
  if (afterVideo.t <= big(vid)) p.append(text.inside)
  p.append(" ", ...fill(text.next, { next: num(big(tokens) + 1, "next") }))

  // the frequency pairs and the axis each follows
  const axes = pairAxes(qwen3)
  const pairs = ctx.plot("pairs")
  const caption = document.createElement("p")
  caption.textContent = text.pairs
    .replace("{half}", "64")
    .replace("{layout}", qwen3 ? text.interleaved : text.bands)
    .replace("{section}", `[${(qwen3 ? SECTIONS.interleaved : SECTIONS.bands).join(", ")}]`)
  const strip = document.createElement("div")
  strip.className = "pe-mr-pairs"
  strip.dataset.k = "axes"
  strip.dataset.v = axes.join(" ")
  for (const a of axes) {
    const cell = document.createElement("span")
    cell.className = `pe-mr-pair pe-mr-ax${a}`
    cell.textContent = "thw"[a]
    strip.append(cell)
  }
  pairs.replaceChildren(caption, strip)

  table(ctx, text.cols, tokens.map((tok, i) => [
    String(i), kindName(text, { ...segs[tok.seg], frame: tok.frame }),
    String(tok.t), String(tok.h), String(tok.w),
  ]))
}

export function mount(box) {
  style()
  return setup(box, render)
}
