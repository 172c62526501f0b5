// Find within a run: the text typed in the find box ([data-find-input]) is highlighted
// wherever it occurs in the run ([data-find-scope]: turns, arguments, results, reasons),
// the folded parts holding a match are opened, and Enter / Shift+Enter (or the arrows)
// move from one match to the next. Everything runs on the page's own text, so nothing is
// sent anywhere and no markup is ever built from what was typed.

const MAX_HITS = 2000; // beyond it the count says "2000+", and the page stays responsive

function clearHits(scope) {
  for (const mark of scope.querySelectorAll("mark.find-hit")) {
    const parent = mark.parentNode;
    parent.replaceChild(document.createTextNode(mark.textContent), mark);
    parent.normalize();
  }
}

function textNodes(scope) {
  const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeValue.trim()) nodes.push(node);
  }
  return nodes;
}

function highlight(scope, needle) {
  const hits = [];
  const wanted = needle.toLowerCase();
  for (const node of textNodes(scope)) {
    const lower = node.nodeValue.toLowerCase();
    let from = lower.indexOf(wanted);
    let rest = node;
    let consumed = 0;
    while (from >= 0 && hits.length < MAX_HITS) {
      const match = rest.splitText(from - consumed);
      rest = match.splitText(wanted.length);
      const mark = document.createElement("mark");
      mark.className = "find-hit";
      match.parentNode.replaceChild(mark, match);
      mark.appendChild(match);
      hits.push(mark);
      consumed = from + wanted.length;
      from = lower.indexOf(wanted, consumed);
    }
    if (hits.length >= MAX_HITS) break;
  }
  for (const mark of hits) {
    for (let up = mark.parentElement.closest("details"); up; up = up.parentElement.closest("details")) {
      up.open = true;
    }
  }
  return hits;
}

function setUp(box) {
  const scope = document.querySelector("[data-find-scope]");
  const input = box.querySelector("[data-find-input]");
  const count = box.querySelector("[data-find-count]");
  if (!scope || !input) return;
  let hits = [];
  let current = -1;
  let searched = "";
  let timer = null;

  function show(index) {
    if (!hits.length) return;
    hits[current]?.classList.remove("current");
    current = (index + hits.length) % hits.length;
    hits[current].classList.add("current");
    hits[current].scrollIntoView({ block: "center" });
    const more = hits.length >= MAX_HITS ? "+" : "";
    count.textContent = `${current + 1} of ${hits.length}${more}`;
  }

  function search() {
    clearHits(scope);
    hits = [];
    current = -1;
    const needle = input.value.trim();
    searched = needle;
    if (!needle) {
      count.textContent = "";
      return;
    }
    hits = highlight(scope, needle);
    if (hits.length) show(0);
    else count.textContent = "no match";
  }

  // The next (or previous) match; a search first when the text changed since the last one.
  function step(by) {
    if (input.value.trim() !== searched || current < 0) search();
    else show(current + by);
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      clearTimeout(timer);
      step(event.shiftKey ? -1 : 1);
    } else if (event.key === "Escape") {
      input.value = "";
      search();
    }
  });
  for (const button of box.querySelectorAll("[data-find-step]")) {
    button.addEventListener("click", () => {
      step(Number(button.dataset.findStep));
    });
  }
}

for (const box of document.querySelectorAll("[data-find]")) setUp(box);
