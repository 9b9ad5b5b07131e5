/* posenc: small reader-facing behaviour that Material does not have.
 *
 * The language menu's links go to the same page in the other language (mkdocs-static-i18n);
 * this carries the reader's place along: the section being read, by the id of its heading
 * (headings share their { #anchor } across languages; tests/test_site.py holds them so):
 * /rope/ scrolled down to "Pairings" -> /zh/rope/#pairings, with or without a hash in the URL.
 * The section is the one the URL names until the reader scrolls, then the last heading above the
 * upper third of the screen, taken when the link is used (pointer, tap or keyboard); near the
 * top of a page there is no hash.
 * An explorer's settings, kept in the query string (assets/explorers/common.js), go along too.
 */
(() => {
  const place = () => {
    // within a quarter screen of the top the reader is at the top (lazily drawn blocks above
    // can move the page by a few pixels after load): no section
    if (scrollY < innerHeight / 4) return ""
    const header = document.querySelector(".md-header")
    const top = header ? header.getBoundingClientRect().bottom : 0
    const line = top + (innerHeight - top) / 3
    let id = ""
    for (const heading of document.querySelectorAll("article :is(h1, h2, h3, h4, h5, h6)[id]")) {
      if (heading.getBoundingClientRect().top > line) break
      id = heading.id
    }
    return id ? `#${encodeURIComponent(id)}` : ""
  }
  // a reader who came to a section by its link (/rope/#pairings) and has not scrolled since is
  // at that section, whatever lazily drawn blocks above did to the scroll position meanwhile
  let moved = false
  for (const type of ["wheel", "touchmove", "keydown"])
    addEventListener(type, () => { moved = true }, { passive: true, once: true })
  const own = () => {
    const id = decodeURIComponent(location.hash.slice(1))
    return !moved && id && document.getElementById(id) ? location.hash : ""
  }
  const carry = () => {
    const hash = own() || place()
    for (const link of document.querySelectorAll("a.md-select__link[hreflang]")) {
      const target = new URL(link.getAttribute("href"), location.href)
      target.hash = hash
      target.search = location.search
      link.href = target.href
    }
  }
  for (const type of ["pointerdown", "focusin", "click"])
    document.addEventListener(type, (event) => {
      if (event.target instanceof Element && event.target.closest("a.md-select__link[hreflang]"))
        carry()
    }, true)
})();

/* Explorers (hooks/explorers.py): each one's module is imported when the explorer comes within
 * a screen of the viewport, never with the page; the explorer's box is laid out before that. */
(() => {
  const boxes = document.querySelectorAll("[data-explorer]")
  const here = document.currentScript && document.currentScript.src
  if (!boxes.length || !here || !("IntersectionObserver" in window)) return
  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue
      near.unobserve(entry.target)
      const url = new URL(`explorers/${entry.target.dataset.explorer}.js`, here)
      import(url.href).then((module) => module.mount(entry.target))
    }
  }, { rootMargin: "100% 0px" })
  for (const box of boxes) near.observe(box)
})();

/* The light/dark toggle (overrides/partials/palette.html says why it is not Material's
 * component). Choosing a scheme sets it on <body>, shows the other toggle and stores the choice
 * where Material's inline script reads it on the next page. Enter on the focused toggle moves on,
 * as in Material.
 */
(() => {
  const form = document.querySelector("form[data-posenc-palette]")
  if (!form) return
  const inputs = [...form.querySelectorAll("input[name=__palette]")]
  const show = (input) => {
    const index = inputs.indexOf(input)
    const color = {}
    for (const key of ["media", "scheme", "primary", "accent"])
      color[key] = input.getAttribute(`data-md-color-${key}`)
    document.body.setAttribute("data-md-color-switching", "")
    for (const [key, value] of Object.entries(color))
      document.body.setAttribute(`data-md-color-${key}`, value)
    inputs.forEach((other, i) => {
      other.checked = i === index
      const label = other.nextElementSibling
      if (label instanceof HTMLElement) label.hidden = i !== index
    })
    requestAnimationFrame(() => document.body.removeAttribute("data-md-color-switching"))
    return { index, color }
  }
  const apply = (input) => __md_set("__palette", show(input))
  for (const input of inputs) input.addEventListener("change", () => apply(input))
  /* Until the reader chooses, the scheme follows the system's (prefers-color-scheme; the first
     pick is made before the page is drawn, overrides/partials/palette.html), also when it
     changes while the page is open. */
  for (const input of inputs) {
    const media = input.getAttribute("data-md-color-media")
    if (!media || media === "undefined") continue
    matchMedia(media).addEventListener("change", (event) => {
      if (event.matches && !__md_get("__palette")) show(input)
    })
  }
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return
    const current = inputs.findIndex((input) => input.checked)
    const next = inputs[(current + 1) % inputs.length]
    next.click()
    next.focus()
  })
})();

/* A link to a section far down a page: the blocks around it are laid out only as they near the
 * viewport (hooks/lazy_blocks.py), each taking a generous estimate of its height until then.
 * When they are drawn they shrink and the section moves up; for a second and a half (fonts and
 * late blocks included) this brings it back into view whenever it drifts, and stops at once if
 * the reader scrolls.
 */
(() => {
  if (!document.querySelector("[data-lazy]")) return
  const settle = () => {
    const id = decodeURIComponent(location.hash.slice(1))
    const target = id && document.getElementById(id)
    if (!target) return
    let stop = false
    const quit = () => { stop = true }
    for (const type of ["wheel", "touchstart", "keydown", "mousedown"])
      addEventListener(type, quit, { once: true, passive: true })
    const start = performance.now()
    let settled = NaN
    const step = () => {
      if (stop || performance.now() - start > 1500) return
      if (!(Math.abs(target.getBoundingClientRect().top - settled) < 1)) {
        target.scrollIntoView()  // honours the heading's scroll-margin (Material's header)
        settled = target.getBoundingClientRect().top
      }
      requestAnimationFrame(step)
    }
    requestAnimationFrame(step)
  }
  if (document.readyState === "complete") settle()
  else addEventListener("load", settle)
  addEventListener("hashchange", settle)
})();

/* The atlas (hooks/atlas.py). Its filter box, hidden without JavaScript, keeps the model types
 * whose row or name matches every word typed (a "-" typed matches "_" too: qwen2-vl finds
 * qwen2_vl), each under the headings of its section, and hides the rest of the page below the
 * box; an empty box shows the page as it was. No request, no reload; the count is announced.
 * Opened from a search for a model type (atlas/?h=mixtral, Material's link to the page itself),
 * the page goes to that type's row.
 */
(() => {
  const box = document.querySelector("[data-atlas-filter]")
  if (!box) return
  const params = new URLSearchParams(location.search)
  const wanted = (params.get("h") || "").trim().toLowerCase()
  if (!location.hash && wanted && document.getElementById(`mt-${wanted}`))
    location.replace(`#mt-${encodeURIComponent(wanted)}`)  // :target, and the scroll below

  const input = box.querySelector("input")
  const status = box.querySelector("[role=status]")
  const content = box.parentElement
  box.hidden = false
  const norm = (text) => text.toLowerCase().replace(/-/g, "_")
  // the page's blocks are read when the filter runs: Material wraps tables after load
  const items = () => [...content.querySelectorAll(
    "tr:has([id^='mt-']), [data-mt], li:has(> [id^='mt-'], > a[href^='#mt-'])")]
  const nameOf = (item) => item.dataset.mt ||
    (item.querySelector("[id^='mt-']")?.id || item.querySelector("a[href^='#mt-']").hash.slice(1)).slice(3)
  const blocks = () => [...content.children].filter((el) => el !== box && !el.matches("h1"))
  let first = null  // the first paragraph: it stays, as the box does
  const run = () => {
    const words = norm(input.value).split(/\s+/).filter(Boolean)
    const all = items()
    const shown = new Set()
    for (const item of all) {
      const name = nameOf(item)
      const hit = words.every((w) => norm(item.textContent).includes(w) || norm(name).includes(w))
      item.hidden = words.length > 0 && !hit
      if (words.length && hit) shown.add(name)
    }
    content.classList.toggle("posenc-filtering", words.length > 0)
    first = first || box.previousElementSibling
    // a block stays when it holds a match; a heading when a block of its section does
    let h2 = null, h3 = null
    for (const el of blocks()) {
      if (el === first) continue
      if (el.matches("h2")) { h2 = el; h3 = null; el.hidden = words.length > 0; continue }
      if (el.matches("h3, h4")) { h3 = el; el.hidden = words.length > 0; continue }
      const keep = !words.length || all.some((item) => !item.hidden && el.contains(item))
      el.hidden = !keep
      if (keep && words.length) for (const h of [h2, h3]) if (h) h.hidden = false
    }
    const n = shown.size
    status.textContent = !words.length ? "" : n ? input.dataset.count.replace("{n}", n) : input.dataset.none
  }
  input.addEventListener("input", run)
  if (input.value) run()  // the browser kept what was typed (back / forward)
})();
