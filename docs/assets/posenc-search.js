/* posenc: Material's search worker, loading the index when the reader searches, with Chinese
 * queries cut into words.
 *
 * hooks/zh_search.py points the page's search worker here, as
 * posenc-search.js?worker=<Material's worker>&index=<the language's index>, both relative to this
 * file (Material's documented way to bring a search of one's own: the worker URL of __config).
 *
 * The index loads when the reader starts searching, not with the page (issue 13: the Chinese
 * index alone is ~250 KiB gzipped, more than half of a page's first view). Material's bundle
 * fetches search/search_index.json with every page and hands it to the worker (SETUP); the build
 * writes there a stub, the index's settings without documents (which is all a page opened from a
 * result, ?h=, needs to highlight), and the documents to search/full_index.json. This worker
 * answers the stub's SETUP with READY itself, and on the first query fetches the full index,
 * imports Material's worker (lunr and all), sets it up with the full index and then passes it the
 * query. The first view of a page loads neither the index nor the search engine, only this file
 * and the stub (Material's query for the empty search box, sent once the worker is ready, is
 * answered without it).
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
 */
(() => {
  "use strict"
  const HAN = /\p{sc=Han}/u
  const RUNS = /\p{sc=Han}+/gu
  // Material's SearchMessageType
  const SETUP = 0
  const READY = 1
  const QUERY = 2
  const RESULT = 3
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
    importScripts(new URL(PARAMS.get("worker"), location.href).href)

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

  const PARAMS = new URL(location.href).searchParams
  let stub = null  // the stub's SETUP message: its settings and options
  let ready = false  // Material's worker holds the full index
  let loading = null
  let replaying = false
  const queries = []

  const post = self.postMessage.bind(self)
  self.postMessage = (message, ...rest) => {
    if (message && message.type === READY && !ready) {
      /* Material's worker has the full index: it answers the queries that waited for it (its
         READY is not passed on: the page had the stub's). */
      ready = true
      replay(...queries.splice(0).map(query => ({ ...query, data: queryWords(query.data) })))
      return
    }
    if (message && message.type === RESULT) toRows(message.data)
    post(message, ...rest)
  }

  function replay(...messages) {
    replaying = true
    try {
      for (const data of messages)
        dispatchEvent(new MessageEvent("message", { data }))
    } finally {
      replaying = false
    }
  }

  /* The full index, and Material's worker set up with it. */
  function start() {
    loading = fetch(new URL(PARAMS.get("index"), location.href).href)
      .then(response => {
        if (!response.ok)
          throw new Error(`${response.url}: HTTP ${response.status}`)
        return response.json()
      })
      .then(index => {
        load()
        replay({ ...stub, data: { ...stub.data, config: index.config, docs: index.docs } })
      })
      .catch(err => {
        console.warn("posenc search: the index did not load", err)
        for (const _ of queries.splice(0))
          post({ type: RESULT, data: { items: [] } })
        loading = null
      })
  }

  function queryWords(query) {
    return query
      .replace(RUNS, run => ` ${cut(run).join(" ")} `)
      .replace(/\s+/g, " ")
      .trim()
      .replace(/\S+/g, word => (WORD.test(word) ? `${word} ${word}^${EXACT}` : word))
  }

  addEventListener("message", ev => {
    if (replaying)  // for Material's worker, which listens after this listener
      return
    const message = ev.data
    const query = message && message.type === QUERY && typeof message.data === "string"
    if (ready) {
      if (query)  // cut with the index's words, which only the full index knows
        message.data = queryWords(message.data)
      return
    }
    ev.stopImmediatePropagation()
    if (message && message.type === SETUP) {
      stub = message
      post({ type: READY })
    } else if (query && !message.data.trim()) {
      /* Material asks for "" once the worker is ready (the empty search box): no words, no
         results, and no reason to load the index yet (Material's worker answers "" so too). */
      post({ type: RESULT, data: { items: [] } })
    } else if (query) {
      queries.push(message)
      if (!loading)
        start()
    }
  })
})()
