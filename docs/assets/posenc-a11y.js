/* posenc: accessibility fixes for elements Material's bundle creates at run time.
 *
 * A table wider than the text column scrolls in a wrapper Material adds on load: the keyboard
 * must be able to scroll it too (axe: scrollable-region-focusable), so it gets tabindex="0".
 * (Code blocks' copy buttons are written at build time, hooks/code_blocks.py, in a plain <span>
 * rather than the <nav> landmark Material used; math is typeset at build time.)
 */
(() => {
  const fix = (root) => {
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
