/* posenc: accessibility fixes for elements Material's bundle creates at run time.
 *
 * Each code block's copy button sits in a <nav class="md-code__nav">: a page with 20 code blocks
 * had 20 unnamed navigation landmarks (axe: landmark-unique), which a screen reader lists next
 * to the real ones. They are toolbars, not navigation: role="none" keeps the buttons and drops
 * the landmarks. Tables get a focusable scroll box. (Math needs no script: it is typeset at
 * build time.)
 */
(() => {
  const fix = (root) => {
    for (const nav of root.querySelectorAll("nav.md-code__nav:not([role])"))
      nav.setAttribute("role", "none")
    // a table wider than the column scrolls in Material's wrapper: let the keyboard scroll it
    // (axe: scrollable-region-focusable)
    for (const wrap of root.querySelectorAll(
      ".md-typeset__scrollwrap:not([tabindex]), .md-typeset table:not([class]):not([tabindex])"))
      wrap.setAttribute("tabindex", "0")
  }
  new MutationObserver((records) => {
    for (const record of records)
      for (const node of record.addedNodes)
        if (node.nodeType === 1) fix(node.parentElement || node)
  }).observe(document.documentElement, { childList: true, subtree: true })
  fix(document)
})()
