// Typesets TeX with KaTeX for hooks/katex.py: ONE Node process serves the whole build.
//
// Protocol (JSON lines): each line on stdin is [[tex, displayMode, breaks], ...]; the answer on
// stdout is one line [{html} | {error}, ...] in the same order. The HTML is KaTeX's
// "htmlAndMathml" output: visible HTML+CSS (aria-hidden) plus MathML that screen readers read.
//
// Where a formula may break across lines (`breaks`), issue 23. KaTeX's inline mode cuts the
// visible formula into unbreakable boxes (`.base`, `.katex-base` from KaTeX 0.18) after every binary operator and relation, at
// any depth: on a phone "PE[p, 2i+1]" broke after the "+" inside its brackets. The boxes are
// cut again here from the formula's own atoms, never inside brackets:
// - "display": a display equation breaks only where a person would: between the parts that a
//   ",\qquad" (or a \qquad alone) separates, and, inside a part still too wide, after a
//   top-level relation (=, <, ≈, ⟹ ...). Each such part is one inline box (`.posenc-part`): the
//   parts go on one line when they fit, else one under the other; a part wider than the column
//   breaks after its relations; a piece between two relations that is wider still scrolls with
//   the equation's box (posenc.css).
// - "inline": as KaTeX does (after relations and binary operators), but not inside brackets;
//   and after the commas of a list written with spaces ("[a,\ b,\ c]"), inside brackets too.
"use strict";
const katex = require("katex");
const readline = require("readline");

const options = {
  output: "htmlAndMathml",
  throwOnError: true,
  strict: "ignore", // Chinese inside \text{} is fine here
  trust: false,
};

const has = (node, name) => Array.isArray(node.classes) && node.classes.includes(name);
// KaTeX 0.18 prefixed its internal classes ("base" became "katex-base", "strut" "katex-strut"):
// both spellings are read, and a box made here takes the spelling KaTeX used in the same formula.
const isBase = (node) => has(node, "base") || has(node, "katex-base");
const isStrut = (node) => has(node, "strut") || has(node, "katex-strut");
// the width of a space (\quad, \qquad, the glue after a relation) in em; null: not a space.
// A text space ("\ ", "~") has no margin: about a quarter em.
const space = (node) => {
  if (!has(node, "mspace")) return null;
  const margin = node.style && node.style.marginRight;
  return margin ? parseFloat(margin) || 0 : 0.25;
};
const em = (value) => `${+value.toFixed(4)}em`;
// KaTeX joins adjacent brackets of one kind into one atom (")]" is one .mclose): count them
const brackets = (node) => (typeof node.text === "string" && node.text.length > 1 ? [...node.text].length : 1);

// Level of the break allowed after an atom: 1 a separator (",\qquad"), 2 a relation, 3 a binary
// operator, all outside brackets; 4 a comma of a list: followed by a space ("a,\ b"), or one of
// three or more commas of one bracket ("[0, 2, 4, ..., d-2]", not an index "PE[p, 2i]"), also
// inside brackets; 0 none.
function breakPoints(items) {
  const points = new Map(); // index of the last atom before the break -> level
  const groups = []; // per open bracket, the places after its own commas
  const list = (commas) => {
    if (commas && commas.length >= 3) for (const at of commas) if (!points.has(at)) points.set(at, 4);
  };
  let depth = 0;
  for (let i = 0; i < items.length; i++) {
    const node = items[i];
    if (has(node, "mopen")) {
      depth += brackets(node);
      for (let k = brackets(node); k > 0; k--) groups.push([]);
    } else if (has(node, "mclose")) {
      depth = Math.max(0, depth - brackets(node));
      for (let k = brackets(node); k > 0; k--) list(groups.pop());
    }
    if (depth && !has(node, "mpunct")) continue;
    const own = space(node);
    let kind = has(node, "mrel") ? 2 : has(node, "mbin") ? 3 : has(node, "mpunct") ? 4 : own !== null ? 5 : 0;
    if (!kind) continue;
    // the glue that follows stays on the same line as the atom (as in KaTeX)
    let j = i;
    let glue = own || 0;
    let nobreak = has(node, "nobreak");
    while (j + 1 < items.length && space(items[j + 1]) !== null) {
      j++;
      glue += space(items[j]);
      nobreak = nobreak || has(items[j], "nobreak");
    }
    if (!nobreak && j + 1 < items.length) {
      if (!depth && ((kind === 4 && glue >= 0.9) || (kind === 5 && glue >= 1.9))) points.set(j, 1);
      else if (kind === 2) points.set(j, 2);
      else if (kind === 3) points.set(j, 3);
      else if (kind === 4 && glue >= 0.4) points.set(j, 4);
      else if (kind === 4 && depth && groups.length) groups[groups.length - 1].push(j);
    }
    i = j;
  }
  return points;
}

function rebreak(tree, breaks) {
  const html = tree.children.find((child) => has(child, "katex-html"));
  if (!html || !html.children.length || !html.children.every(isBase))
    return; // a \tag or a \\ line break: left as KaTeX made it
  const Span = html.constructor;
  const prefix = has(html.children[0], "katex-base") ? "katex-" : "";
  const items = [];
  for (const base of html.children)
    for (const child of base.children) if (!isStrut(child)) items.push(child);
  const points = breakPoints(items);
  const allowed = breaks === "display" ? [1, 2] : [2, 3, 4];
  const makeBase = (from, to) => {
    const kids = items.slice(from, to);
    let height = 0;
    let depth = 0;
    for (const kid of kids) {
      height = Math.max(height, kid.height || 0);
      depth = Math.max(depth, kid.depth || 0);
    }
    const strut = new Span([`${prefix}strut`], []);
    strut.style.height = em(height + depth);
    if (depth) strut.style.verticalAlign = em(-depth);
    const base = new Span([`${prefix}base`], [strut, ...kids]);
    base.height = height;
    base.depth = depth;
    return base;
  };
  const cut = (from, to, levels) => {
    const out = [];
    let start = from;
    for (let i = from; i < to - 1; i++)
      if (levels.includes(points.get(i))) {
        out.push([start, i + 1]);
        start = i + 1;
      }
    out.push([start, to]);
    return out;
  };
  if (breaks === "display" && [...points.values()].includes(1)) {
    html.children = cut(0, items.length, [1]).map(
      ([from, to]) => new Span(["posenc-part"], cut(from, to, [2]).map(([a, b]) => makeBase(a, b))),
    );
  } else {
    html.children = cut(0, items.length, allowed).map(([a, b]) => makeBase(a, b));
  }
}

function render([tex, display, breaks]) {
  try {
    if (!breaks) return { html: katex.renderToString(tex, { ...options, displayMode: display }) };
    const tree = katex.__renderToDomTree(tex, { ...options, displayMode: display });
    rebreak(tree, breaks);
    return { html: tree.toMarkup() };
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
