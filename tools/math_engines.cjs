// KaTeX against MathJax on the same formulas, for tools/math_engines.py (make math-engines).
//
// stdin: {"formulas": [[tex, display], ...], "rounds": n, "page": [[tex, display], ...]}
// stdout: one JSON object: per engine its version, how many formulas it rendered and failed, the
// seconds of each full round over all formulas (one process, rounds in a row; the first round
// of MathJax includes loading its font data), and for "page"
// MathJax's HTML of each of its formulas and its stylesheet (tools/math_engines.py picks the
// fonts the page needs from it).
"use strict";
const katex = require("katex");
const MathJax = require("mathjax");

function readStdin() {
  return new Promise((resolve) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => (data += chunk));
    process.stdin.on("end", () => resolve(JSON.parse(data)));
  });
}

function katexRender([tex, display]) {
  // the options of hooks/katex-render.cjs, which builds the site
  return katex.renderToString(tex, {
    displayMode: display,
    output: "htmlAndMathml",
    throwOnError: true,
    strict: "ignore",
    trust: false,
  });
}

async function rounds(render, formulas, n) {
  const seconds = [];
  let failed = [];
  for (let r = 0; r < n; r++) {
    failed = [];
    const t0 = process.hrtime.bigint();
    for (const f of formulas) {
      try {
        await render(f);
      } catch (err) {
        failed.push([f[0], String(err && err.message ? err.message : err)]);
      }
    }
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { rendered: formulas.length - failed.length, failed: failed.slice(0, 20), failed_count: failed.length, seconds };
}

async function main() {
  const job = await readStdin();
  const MJ = await MathJax.init({
    loader: { load: ["input/tex", "output/chtml", "adaptors/liteDOM"] },
    chtml: { fontURL: "fonts" },
    startup: { typeset: false },
  });
  const adaptor = MJ.startup.adaptor;
  // MathJax 4 loads parts of its font data on demand: the promise-based call waits for them
  const mathjaxRender = async ([tex, display]) => {
    const node = await MJ.tex2chtmlPromise(tex, { display });
    const html = adaptor.outerHTML(node);
    if (html.includes("<mjx-merror")) throw new Error(adaptor.textContent(node));
    return html;
  };
  // The page first, in the fresh process: MathJax's stylesheet grows with what it has rendered.
  const page = [];
  for (const f of job.page) page.push(await mathjaxRender(f));
  const css = adaptor.textContent(MJ.chtmlStylesheet());
  const out = {
    katex: { version: katex.version, ...(await rounds(katexRender, job.formulas, job.rounds)) },
    mathjax: { version: MJ.version, ...(await rounds(mathjaxRender, job.formulas, job.rounds)) },
    page: { mathjax: page, mathjax_css: css },
  };
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
