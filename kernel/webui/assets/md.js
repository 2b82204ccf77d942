// md.js: a small Markdown renderer for chat replies. Everything is escaped first; only the
// constructs below make markup: fenced code blocks (``` with an optional language), inline
// code, headings (#..######), bold (**x**), italic (*x* or _x_), links [text](http(s) URL only),
// bulleted and numbered lists, block quotes, paragraphs and line breaks. An unclosed fence (a
// reply still streaming) renders as a code block up to the end.

const esc = (s) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// inline renders one line's inline constructs; s is raw text.
function inline(s) {
  const parts = s.split(/(`[^`\n]+`)/g);
  return parts.map((p, i) => {
    if (i % 2 === 1) return "<code>" + esc(p.slice(1, -1)) + "</code>";
    let h = esc(p);
    h = h.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_, text, url) =>
      `<a href="${url}" target="_blank" rel="noopener noreferrer">${text}</a>`);
    h = h.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    h = h.replace(/(^|[^\w*])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>");
    h = h.replace(/(^|[^\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>");
    return h;
  }).join("");
}

// render returns the HTML of a Markdown text.
export function render(text) {
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  let para = [];
  let list = null; // {tag, items}
  const flushPara = () => {
    if (para.length) out.push("<p>" + para.map(inline).join("<br>") + "</p>");
    para = [];
  };
  const flushList = () => {
    if (list) out.push(`<${list.tag}>` + list.items.map((it) => "<li>" + inline(it) + "</li>").join("") + `</${list.tag}>`);
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*```\s*([\w+#.-]*)\s*$/);
    if (fence) {
      flushPara(); flushList();
      const code = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      const lang = fence[1] ? ` data-lang="${esc(fence[1])}"` : "";
      const label = fence[1] ? `<span class="lang">${esc(fence[1])}</span>` : "";
      out.push(`<pre${lang}>${label}<code>${esc(code.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
    const numbered = line.match(/^\s*\d{1,9}[.)]\s+(.*)$/);
    const quote = line.match(/^>\s?(.*)$/);
    if (heading) {
      flushPara(); flushList();
      const n = Math.min(heading[1].length + 2, 6); // h3..h6: the page owns h1 and h2
      out.push(`<h${n}>${inline(heading[2])}</h${n}>`);
    } else if (bullet || numbered) {
      flushPara();
      const tag = bullet ? "ul" : "ol";
      if (list && list.tag !== tag) flushList();
      if (!list) list = { tag, items: [] };
      list.items.push((bullet || numbered)[1]);
    } else if (quote) {
      flushPara(); flushList();
      out.push("<blockquote>" + inline(quote[1]) + "</blockquote>");
    } else if (line.trim() === "") {
      flushPara(); flushList();
    } else {
      flushList();
      para.push(line);
    }
  }
  flushPara(); flushList();
  return out.join("");
}
