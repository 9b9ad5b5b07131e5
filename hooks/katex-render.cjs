// Typesets TeX with KaTeX for hooks/katex.py: ONE Node process serves the whole build.
//
// Protocol (JSON lines): each line on stdin is [[tex, display], ...]; the answer on stdout is one
// line [{html} | {error}, ...] in the same order. The HTML is KaTeX's "htmlAndMathml" output:
// visible HTML+CSS (aria-hidden) plus MathML that screen readers read.
"use strict";
const katex = require("katex");
const readline = require("readline");

const options = {
  output: "htmlAndMathml",
  throwOnError: true,
  strict: "ignore", // Chinese inside \text{} is fine here
  trust: false,
};

function render([tex, display]) {
  try {
    return { html: katex.renderToString(tex, { ...options, displayMode: display }) };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
}

if (process.argv[2] === "--version") {
  process.stdout.write(katex.version + "\n");
} else {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    process.stdout.write(JSON.stringify(JSON.parse(line).map(render)) + "\n");
  });
}
