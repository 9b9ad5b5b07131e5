/* posenc: small reader-facing behaviour that Material does not have.
 *
 * The language menu's links go to the same page in the other language (mkdocs-static-i18n);
 * this carries the section the reader is in along: /rope/#pairings -> /zh/rope/#pairings
 * (headings share their { #anchor } across languages; tests/test_site.py holds them so).
 */
(() => {
  const carryAnchor = () => {
    for (const link of document.querySelectorAll("a.md-select__link[hreflang]")) {
      const target = new URL(link.getAttribute("href"), location.href)
      target.hash = location.hash
      link.href = target.href
    }
  }
  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", carryAnchor)
  else
    carryAnchor()
  addEventListener("hashchange", carryAnchor)
})()
