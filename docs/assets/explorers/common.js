/* posenc explorers: what the four share (controls and the URL, numbers, SVG charts).
 *
 * An explorer's markup (labelled controls, empty plots, readout, table of values) is written
 * into the page by hooks/explorers.py; assets/posenc.js imports the explorer's module when it
 * nears the viewport and calls its mount(box). The numbers come from posenc (setup's data);
 * they are float64 throughout; each shown
 * number carries its exact value in data-v (String(x) round-trips) under a key in data-k,
 * which tests/test_browser_explorers.py reads and compares with posenc.
 */

const SVG = "http://www.w3.org/2000/svg"

/* The numbers an explorer shows are posenc's, computed at build time (hooks/explorer_data.py)
 * into JSON files under data/ beside this script; data(values) names the file a setting needs
 * (null: none), fetched the first time it is needed and kept. While one is on its way the box
 * carries data-busy; it is drawn (render(values, ctx, json)) with the settings of that moment
 * once the file is here. data-ready marks the first drawing. */
const loaded = new Map()

function load(url) {
  if (!loaded.has(url))
    loaded.set(url, fetch(url)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`${url}: ${r.status}`))))
      .then((json) => loaded.set(url, { json }))
      .catch((error) => loaded.set(url, { error })))
  return loaded.get(url)
}

/* The controls, their values in the URL (?<explorer>.<control>=value, only those that differ
 * from the page's defaults) and one render() per change. */
export function setup(box, render, data = () => null) {
  const name = box.dataset.explorer
  const form = box.querySelector("form")
  const controls = [...form.elements].filter((el) => el.name)
  const text = JSON.parse(box.querySelector(".posenc-explorer__text").textContent)
  const initial = (el) => el.tagName === "SELECT"
    ? [...el.options].find((o) => o.defaultSelected)?.value ?? el.options[0].value
    : el.defaultValue
  const valid = (el, value) => {
    if (el.tagName === "SELECT") return [...el.options].some((o) => o.value === value)
    const x = Number(value)
    return value !== "" && Number.isInteger(x) && x >= +el.min && x <= +el.max &&
      (x - +el.min) % (+el.step || 1) === 0
  }
  const params = new URLSearchParams(location.search)
  for (const el of controls) {
    const value = params.get(`${name}.${el.name}`)
    if (value !== null && valid(el, value)) el.value = value
  }
  const values = () => {
    const out = {}
    for (const el of controls) out[el.name] = el.value
    return out
  }
  const ctx = {
    box, form, text, values,
    lang: document.documentElement.lang,
    plot: (which) => box.querySelector(`[data-plot="${which}"]`),
    readout: box.querySelector(".posenc-explorer__readout"),
    details: box.querySelector(".posenc-explorer__values"),
    table: box.querySelector(".posenc-explorer__table"),
    control: (which) => form.elements[which],
    field: (which) => box.querySelector(`[data-control="${which}"]`),
    /* A number input outside its range or step is put back to the nearest valid value. */
    clamp(el) {
      if (el.tagName === "SELECT" || valid(el, el.value)) return
      const step = +el.step || 1
      let x = Math.round((Number(el.value) - +el.min) / step) * step + +el.min
      if (!Number.isFinite(x)) x = Number(initial(el))
      el.value = String(Math.min(+el.max, Math.max(+el.min, x)))
    },
  }
  const remember = () => {
    const url = new URL(location.href)
    for (const el of controls) {
      const key = `${name}.${el.name}`
      if (el.value === initial(el) || el.disabled) url.searchParams.delete(key)
      else url.searchParams.set(key, el.value)
    }
    url.hash = box.id
    history.replaceState(history.state, "", url)
    dispatchEvent(new Event("posenc:url"))
  }
  let waiting = 0
  const draw = () => {
    const v = values()
    const url = data(v)
    const got = url === null ? { json: null } : load(url)
    if (got instanceof Promise) {
      waiting++
      box.dataset.busy = ""
      got.then(() => {
        if (--waiting === 0) delete box.dataset.busy
        draw()
      })
      return
    }
    if (got.error) {
      console.error(got.error)
      return
    }
    render(v, ctx, got.json)
    if (waiting === 0) box.dataset.ready = ""
  }
  let pending = 0
  const update = (event) => {
    if (event && event.type === "change") ctx.clamp(event.target)
    else if (event && event.target.type === "number" && !valid(event.target, event.target.value))
      return  // still being typed: wait for change
    for (const out of form.querySelectorAll("output"))
      out.textContent = form.elements[out.htmlFor.value.replace(/^.*-/, "")]?.value ?? ""
    draw()
    if (event) {
      cancelAnimationFrame(pending)
      pending = requestAnimationFrame(remember)
    }
  }
  form.addEventListener("input", update)
  form.addEventListener("change", update)
  form.addEventListener("submit", (event) => event.preventDefault())
  ctx.details.addEventListener("toggle", () => ctx.details.open && draw())
  new MutationObserver(draw)
    .observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] })
  update()
  return ctx
}

/* "{name}" placeholders filled from an object; values that are nodes are kept as nodes. */
export function fill(template, values) {
  const out = []
  let last = 0
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    out.push(template.slice(last, m.index))
    out.push(m[1] in values ? values[m[1]] : m[0])
    last = m.index + m[0].length
  }
  out.push(template.slice(last))
  return out
}

export function line(parent, template, values) {
  const p = document.createElement("p")
  p.append(...fill(template, values))
  parent.append(p)
  return p
}

/* A number as shown: 6 significant digits, exponent form outside [1e-4, 1e6), U+2212 minus. */
export function fmt(x, digits = 6) {
  if (x === Infinity) return "∞"
  if (x === -Infinity) return "−∞"
  if (x === 0) return "0"
  const a = Math.abs(x)
  let s
  if (Number.isInteger(x) && a < 1e15) s = String(x)
  else if (a >= 1e6 || a < 1e-4) {
    const [m, e] = x.toExponential(digits - 1).split("e")
    s = `${m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m}e${Number(e)}`
  } else {
    s = x.toPrecision(digits)
    if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "")
  }
  return s.replace("-", "−")
}

/* A shown number that carries its exact value (data-v) under a key (data-k) for the tests. */
export function num(x, key = null, digits = 6) {
  const span = document.createElement("span")
  span.className = "posenc-explorer__num"
  if (key) {
    span.dataset.k = key
    span.dataset.v = String(x)
  }
  span.textContent = fmt(x, digits)
  return span
}

export function table(ctx, columns, rows) {
  if (!ctx.details.open) {
    ctx.table.replaceChildren()
    return
  }
  const t = document.createElement("table")
  t.tabIndex = 0  // it scrolls sideways on a phone: the keyboard must reach it (axe)
  const head = t.createTHead().insertRow()
  for (const c of columns) {
    const th = document.createElement("th")
    th.scope = "col"
    th.textContent = c
    head.append(th)
  }
  const body = t.createTBody()
  for (const row of rows) {
    const tr = body.insertRow()
    for (const cell of row) tr.insertCell().append(cell)
  }
  ctx.table.replaceChildren(t)
}

/* --- SVG charts --------------------------------------------------------------------------------- */

export function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v)
  if (parent) parent.append(node)
  return node
}

const nice = (span) => {
  const step = 10 ** Math.floor(Math.log10(span / 4))
  return [1, 2, 5, 10].map((k) => k * step).find((s) => span / s <= 6)
}

function ticks(lo, hi, log) {
  if (!log) {
    const step = nice(hi - lo)
    const out = []
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
      out.push(Math.abs(t) < step * 1e-9 ? 0 : t)
    return out
  }
  const a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi))
  const every = Math.max(1, Math.ceil((b - a) / 5))
  const out = []
  for (let e = a; e <= b; e += every) if (10 ** e >= lo * 0.999 && 10 ** e <= hi * 1.001) out.push(10 ** e)
  if (out.length < 2) for (const k of [2, 5]) for (let e = a; e <= b; e++) {
    const t = k * 10 ** e
    if (t >= lo && t <= hi) out.push(t)
  }
  return out.sort((p, q) => p - q)
}

const tickText = (t) => {
  const a = Math.abs(t)
  if (a >= 1e4 || (a > 0 && a < 1e-3)) {
    const e = Math.round(Math.log10(a))
    if (Math.abs(a - 10 ** e) < 1e-9 * a) return `${t < 0 ? "−" : ""}10${sup(e)}`
  }
  return fmt(t, 4)
}
const sup = (e) => String(e).replace(/[-0-9]/g, (c) => "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"["-0123456789".indexOf(c)])

/* Axes in a viewBox of w x h; returns scales and drawing helpers. x/y: {min, max, log, label}. */
export function chart(svg, x, y, options = {}) {
  svg.replaceChildren()
  const [, , w, h] = svg.getAttribute("viewBox").split(" ").map(Number)
  const m = { left: 50, right: 10, top: 10, bottom: 36, ...options.margin }
  const X = [m.left, w - m.right], Y = [h - m.bottom, m.top]
  const map = (axis, [p, q]) => {
    const f = axis.log ? Math.log10 : (v) => v
    const a = f(axis.min), b = f(axis.max)
    return (v) => p + ((f(v) - a) / (b - a || 1)) * (q - p)
  }
  const sx = options.sx ? options.sx(X) : map(x, X)
  const sy = map(y, Y)
  const grid = el("g", { class: "pe-grid" }, svg)
  const axes = el("g", { class: "pe-axis" }, svg)
  el("path", { d: `M${X[0]},${Y[1]}V${Y[0]}H${X[1]}` }, axes)
  for (const t of options.xticks ?? ticks(x.min, x.max, x.log)) {
    const px = sx(t)
    el("path", { d: `M${px},${Y[0]}v4` }, axes)
    el("text", { x: px, y: Y[0] + 15, "text-anchor": "middle" }, axes).textContent = tickText(t)
  }
  for (const t of ticks(y.min, y.max, y.log)) {
    const py = sy(t)
    el("path", { d: `M${X[0]},${py}H${X[1]}` }, grid)
    el("text", { x: X[0] - 4, y: py + 4, "text-anchor": "end" }, axes).textContent = tickText(t)
  }
  el("text", { x: (X[0] + X[1]) / 2, y: h - 4, "text-anchor": "middle" }, axes).textContent = x.label
  el("text", { x: 12, y: (Y[0] + Y[1]) / 2, "text-anchor": "middle",
    transform: `rotate(-90 12 ${(Y[0] + Y[1]) / 2})` }, axes).textContent = y.label
  const clip = (v) => Math.min(Y[0] + 2, Math.max(Y[1] - 2, v))
  return {
    sx, sy, X, Y,
    /* A polyline through (xs[k], ys[k]); with a key, its exact numbers ride along in data-k,
     * data-x and data-v. */
    line(xs, ys, cls, key = null) {
      let d = ""
      let pen = false
      xs.forEach((xv, k) => {
        const yv = ys[k]
        if (!Number.isFinite(sy(yv))) { pen = false; return }
        d += `${pen ? "L" : "M"}${sx(xv).toFixed(1)},${clip(sy(yv)).toFixed(1)}`
        pen = true
      })
      const path = el("path", { d, class: cls }, svg)
      if (key) {
        path.dataset.k = key
        path.dataset.x = xs.join(" ")
        path.dataset.v = ys.map(String).join(" ")
      }
      return path
    },
    dots(xs, ys, classes, r = 2.2) {
      const g = el("g", {}, svg)
      xs.forEach((xv, k) => {
        if (!Number.isFinite(sy(ys[k]))) return
        el("circle", { cx: sx(xv).toFixed(1), cy: clip(sy(ys[k])).toFixed(1), r, class: classes[k] }, g)
      })
      return g
    },
    hline(v, cls, label) {
      const py = sy(v)
      if (!(py >= Y[1] && py <= Y[0])) return
      el("path", { d: `M${X[0]},${py}H${X[1]}`, class: cls }, svg)
      if (label) el("text", { x: X[0] + 4, y: py - 3, class: "pe-label" }, svg).textContent = label
    },
    band(a, b, cls) {
      el("rect", { x: sx(a), y: Y[1], width: Math.max(0, sx(b) - sx(a)), height: Y[0] - Y[1], class: cls }, svg)
    },
    legend(items) {
      const g = el("g", { class: "pe-legend" }, svg)
      items.forEach(([label, cls], k) => {
        const py = Y[1] + 8 + 14 * k
        el("path", { d: `M${X[1] - 96},${py - 4}h14`, class: cls }, g)
        el("text", { x: X[1] - 78, y: py }, g).textContent = label
      })
    },
  }
}

/* A sequential colour map (viridis, sampled), t in [0, 1] -> "rgb(...)". */
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]]
export function colour(t) {
  const u = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1)
  const k = Math.min(VIRIDIS.length - 2, Math.floor(u))
  const f = u - k
  const c = VIRIDIS[k].map((v, i) => Math.round(v + f * (VIRIDIS[k + 1][i] - v)))
  return `rgb(${c.join(",")})`
}
