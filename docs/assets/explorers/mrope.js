/* The M-RoPE explorer (hooks/explorers.py, EXPLORERS["mrope"]): the (t, h, w) ids of a prompt
 * of text, an image and a video, as posenc.mrope_position_ids builds them.
 *
 * The layout is [text, image (1, h, w), text, video, text]. Qwen2-VL and Qwen2.5-VL: the video
 * is one grid of t frames; Qwen3-VL: each frame a grid of T = 1 after its timestamp text.
 * It draws; posenc computes: hooks/explorer_data.py writes, at build time, every grid the
 * controls can make (data/mrope/grids.json, fetched when the explorer is first drawn) as
 * posenc.mrope_position_ids gives it at the start of a prompt: the t id of each frame, the
 * (h, w) ids of a frame, and the id the text after it resumes at under each rule ("max", the
 * release code; "spatial", transformers 5.23). This script puts a prompt together: text ids
 * count on, a grid's ids are those of the file moved to where the grid starts (the build
 * checks that its frames give posenc's ids back). The frequency pairs' axes are
 * posenc.apply_mrope's too. tests/test_browser_explorers_bias_mrope.py compares what is shown
 * with posenc.
 */
import { chart, el, fill, line, num, setup, table } from "./common.js"

export const SECTIONS = { bands: [16, 24, 24], interleaved: [24, 20, 20] }

const file = () => new URL("data/mrope/grids.json", import.meta.url).href

/* The segments of the prompt: {kind: "text" | "stamp", n} or {kind: "image" | "video", key,
 * frame}, key naming the grid in the file. */
export function layout(v) {
  const m = v.merge
  const segs = [
    { kind: "text", n: +v.before },
    { kind: "image", key: `image-${v.imgh}-${v.imgw}-${m}` },
    { kind: "text", n: +v.between },
  ]
  const video = `${v.vidh}-${v.vidw}-${m}`
  if (v.model === "Qwen3-VL")
    for (let k = 0; k < +v.frames; k++)
      segs.push({ kind: "stamp", n: +v.stamp, frame: k }, { kind: "video", key: `frame-${video}`, frame: k })
  else if (v.model === "Qwen2.5-VL")
    segs.push({ kind: "video", key: `video-${v.frames}-${video}-${v.seconds}-${v.tps}` })
  else segs.push({ kind: "video", key: `video-${v.frames}-${video}` })
  segs.push({ kind: "text", n: +v.after })
  return segs
}

/* The prompt's ids, a token list {seg, t, h, w, frame}, from the grids of the file. */
export function positionIds(segs, resume, data) {
  const tokens = []
  let cur = 0
  segs.forEach((seg, s) => {
    if (seg.kind === "text" || seg.kind === "stamp") {
      for (let k = 0; k < seg.n; k++, cur++) tokens.push({ seg: s, t: cur, h: cur, w: cur })
      return
    }
    const grid = data.grids[seg.key]
    const [hs, ws] = data.hw[grid.hw]
    grid.t.forEach((t, k) => {
      for (let j = 0; j < hs.length; j++)
        tokens.push({ seg: s, t: cur + t, h: cur + hs[j], w: cur + ws[j], frame: seg.frame ?? k })
    })
    cur += grid.next[resume]
  })
  return tokens
}

function kindName(text, seg, frame) {
  return seg.kind === "video" ? `${text.video} · ${text.frame.replace("{k}", String(frame))}`
    : text[seg.kind]
}

function drawIds(ctx, segs, tokens) {
  const { text } = ctx
  const n = tokens.length
  const top = Math.max(...tokens.map((tok) => Math.max(tok.t, tok.h, tok.w)))
  const c = chart(ctx.plot("ids"), { min: -0.5, max: n - 0.5, label: text.token },
    { min: 0, max: Math.max(1, top), label: text.id })
  // the image and the video (its frames, for Qwen3-VL) as shaded spans of tokens
  let first = 0
  tokens.forEach((tok, k) => {
    const kind = segs[tok.seg].kind
    const last = k === n - 1 || tokens[k + 1].seg !== tok.seg
    if (last && (kind === "image" || kind === "video"))
      c.band(first - 0.5, k + 0.5, kind === "image" ? "pe-band" : "pe-band-2")
    if (last) first = k + 1
  })
  const xs = tokens.map((_, k) => k)
  const r = n > 300 ? 0.7 : n > 120 ? 1.1 : 1.8
  ;[["t", "pe-d1", 1.6], ["h", "pe-d2", 1.15], ["w", "pe-d3", 0.75]].forEach(([axis, cls, f]) => {
    const g = c.dots(xs, tokens.map((tok) => tok[axis]), xs.map(() => cls), r * f)
    g.dataset.k = axis
    g.dataset.v = tokens.map((tok) => tok[axis]).join(" ")
  })
  c.legend([["t", "pe-s1"], ["h", "pe-s2"], ["w", "pe-s3"]])
}

function drawPairs(ctx, axes, heading) {
  const svg = ctx.plot("pairs")
  svg.replaceChildren()
  const g = el("g", { class: "pe-axis" }, svg)
  el("text", { x: 160, y: 16, "text-anchor": "middle" }, g).textContent = heading
  const cols = 16, left = 34, w = (320 - left - 6) / cols, h = 38
  for (let row = 0; row < axes.length / cols; row++) {
    const y = 32 + row * (h + 8)
    el("text", { x: left - 4, y: y + h / 2 + 4, "text-anchor": "end" }, g).textContent =
      String(row * cols)
    for (let col = 0; col < cols; col++) {
      const a = axes[row * cols + col]
      const x = left + col * w
      el("rect", { x: x + 1, y: y + h - 10, width: w - 2, height: 10, class: `pe-d${a + 1}` }, svg)
      el("text", { x: x + w / 2, y: y + h / 2 + 1, "text-anchor": "middle" }, g).textContent =
        "thw"[a]
    }
  }
  for (let col = 0; col < cols; col += 5)
    el("text", { x: left + col * w + w / 2, y: 226, "text-anchor": "middle" }, g).textContent =
      `+${col}`
  const strip = el("g", {}, svg)
  strip.dataset.k = "axes"
  strip.dataset.v = axes.join(" ")
}

function render(v, ctx, data) {
  const { text } = ctx
  const qwen3 = v.model === "Qwen3-VL"
  ctx.control("seconds").disabled = ctx.control("tps").disabled = v.model !== "Qwen2.5-VL"
  ctx.control("stamp").disabled = !qwen3
  const segs = layout(v)
  const tokens = positionIds(segs, v.resume, data)
  drawIds(ctx, segs, tokens)

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
  const section = `[${(qwen3 ? SECTIONS.interleaved : SECTIONS.bands).join(", ")}]`
  const layoutName = qwen3 ? text.interleaved : text.bands
  drawPairs(ctx, data.axes[qwen3 ? "interleaved" : "bands"], `${v.model}: ${layoutName} ${section}`)

  table(ctx, text.cols, tokens.map((tok, i) => [
    String(i), kindName(text, segs[tok.seg], tok.frame),
    String(tok.t), String(tok.h), String(tok.w),
  ]))
}

export function mount(box) {
  return setup(box, render, file)
}
