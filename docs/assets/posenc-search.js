/* posenc: Material's search worker, with Chinese queries cut into words.
 *
 * hooks/zh_search.py points the page's search worker here, as
 * posenc-search.js?worker=<Material's worker, relative to this file>.
 *
 * Material cuts a run of Chinese characters in a query with its own heuristic, which on this site
 * ends in single characters: 长上下文 searched 长, 上 and 下 and highlighted every 下 on the page it
 * opened (?h=下). Here the run is cut into the fewest words that the index knows (the index was
 * cut into words by jieba at build time, with the site's terms and aliases, hooks/terms.yml),
 * single characters are dropped when a longer word is found, and Material's own cutting is
 * switched off, so each word is searched and highlighted whole.
 *
 * Identifiers (issue 23): "_" is no separator of the index (mkdocs.yml), so rotate_half is one
 * word. Material makes every query word a prefix (rotate_half*), and lunr then ranks a longer
 * word that is rarer above the word itself (deepseek_v32 above deepseek_v3): each ASCII word of
 * a query is also searched as itself, boosted, so a whole identifier comes first. And where a
 * page's result did not match by itself but one of its sections is a model type's row of the
 * atlas (hooks/atlas.py), the page's link carries the query (atlas/?h=mixtral, which
 * assets/posenc.js turns into the row's anchor) instead of opening the page at its top.
 *
 * Material's worker (lunr and all) is imported on the first message, not when the page starts the
 * worker: that message is the search index (SETUP), which overrides/partials/search.html lets
 * Material fetch only once the reader starts searching. The first view of a page then loads
 * neither the index nor the search engine, only this file.
 */
(() => {
  "use strict"
  const HAN = /\p{sc=Han}/u
  const RUNS = /\p{sc=Han}+/gu
  const QUERY = 2  // Material's SearchMessageType.QUERY
  const RESULT = 3  // and .RESULT
  const WORD = /^[A-Za-z0-9][\w.]*$/
  const EXACT = 10  // the boost of a query word searched as itself

  let words = new Set()
  let longest = 1

  function cut(run) {
    const n = run.length
    const cost = new Array(n + 1).fill(Infinity)
    const from = new Array(n + 1).fill(0)
    cost[0] = 0
    for (let j = 1; j <= n; j++)
      for (let i = Math.max(0, j - longest); i < j; i++) {
        if (j - i > 1 && !words.has(run.slice(i, j)))
          continue
        if (cost[i] + 1 < cost[j]) {
          cost[j] = cost[i] + 1
          from[j] = i
        }
      }
    const pieces = []
    for (let j = n; j > 0; j = from[j])
      pieces.unshift(run.slice(from[j], j))
    const long = pieces.filter(piece => piece.length > 1)
    return long.length ? long : pieces
  }

  /* Material's worker, with lunr's index builder taught the index's Chinese words. */
  function load() {
    const worker = new URL(location.href).searchParams.get("worker")
    importScripts(new URL(worker, location.href).href)

    const build = self.lunr.Builder.prototype.build
    self.lunr.Builder.prototype.build = function () {
      const index = build.call(this)
      words = new Set(Object.keys(index.invertedIndex).filter(term => HAN.test(term)))
      longest = 1
      for (const word of words)
        longest = Math.max(longest, word.length)
      /* Material's cutting asks `word in index` for parts of the run: answer no for Chinese, so
         it keeps each (already cut) word whole. lunr itself only reads entries by key. */
      index.invertedIndex = new Proxy(index.invertedIndex, {
        has: (target, key) => (typeof key === "string" && HAN.test(key) ? false : key in target)
      })
      return index
    }
  }

  /* A page's own result that did not match takes the terms of its first atlas row. */
  function toRows(result) {
    for (const group of (result && result.items) || []) {
      const page = group.find(item => !item.location.includes("#"))
      const row = group.find(item => item.location.includes("#mt-"))
      if (page && row && !Object.values(page.terms || {}).some(Boolean))
        page.terms = { ...row.terms }
    }
  }
  const post = self.postMessage.bind(self)
  self.postMessage = (message, ...rest) => {
    if (message && message.type === RESULT) toRows(message.data)
    post(message, ...rest)
  }

  let loaded = false
  addEventListener("message", ev => {
    if (!loaded) {
      /* Material's worker adds its own message listener, which this dispatch no longer reaches:
         hand the message to it (and back to this listener, which runs first) once more. */
      loaded = true
      load()
      ev.stopImmediatePropagation()
      dispatchEvent(new MessageEvent("message", { data: ev.data }))
      return
    }
    const message = ev.data
    if (message && message.type === QUERY && typeof message.data === "string")
      message.data = message.data
        .replace(RUNS, run => ` ${cut(run).join(" ")} `)
        .replace(/\s+/g, " ")
        .trim()
        .replace(/\S+/g, word => (WORD.test(word) ? `${word} ${word}^${EXACT}` : word))
  })
})()
