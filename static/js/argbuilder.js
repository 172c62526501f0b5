// The case editor's argument builder (docs/review.md#case-editor): for an expected call whose
// tool the suite's catalog describes, one labelled field per parameter with a matcher picker
// fit to its type. The JSON textarea stays the truth: the fields write it, and reading it back
// keeps them in step; arguments the fields cannot say are left in the JSON untouched.
// Markup: <div data-argbuilder data-name="#name-input" data-args="#args-textarea">, and the
// catalog as <script type="application/json" id="tool-catalog"> (json_script).
"use strict";

(() => {
  const KINDS = {
    enum: [["exact", "is"], ["one_of", "one of"]],
    number: [["exact", "exactly"], ["approx", "approximately ±"]],
    string: [["exact", "exactly"], ["text", "text (ignoring case, punctuation, spaces)"], ["regex", "matches regex"]],
    boolean: [["exact", "is"]],
    json: [["subset", "contains (subset)"], ["exact", "exactly"]],  // an object or an array
    value: [["exact", "exactly"]],  // a value of several types, or of none said
  };
  const IGNORE_ALL = ["case", "space", "punctuation"];
  // What each $text "ignore" entry drops, in words, in the order the picker says them.
  const IGNORED_WORDS = { case: "case", punctuation: "punctuation", space: "spaces" };

  // "text (ignoring case)": what a $text matcher ignores, as it ignores it.
  function textWords(ignore) {
    const named = Object.keys(IGNORED_WORDS).filter((k) => ignore.includes(k));
    return named.length ? `text (ignoring ${named.map((k) => IGNORED_WORDS[k]).join(", ")})` : "text (ignoring nothing)";
  }

  // The types a schema allows, "null" left out: from "type" (a name or a list) or from the
  // alternatives of "anyOf" / "oneOf" (as Pydantic writes an Optional[int]).
  function types(schema) {
    if (Array.isArray(schema.type)) return schema.type.filter((t) => t !== "null");
    if (typeof schema.type === "string") return schema.type === "null" ? [] : [schema.type];
    const options = schema.anyOf || schema.oneOf;
    if (!Array.isArray(options)) return [];
    return [...new Set(options.flatMap((option) => types(option || {})))];
  }

  function catalog() {
    const data = document.getElementById("tool-catalog");
    return data ? JSON.parse(data.textContent) : [];
  }

  function family(schema) {
    if (Array.isArray(schema.enum) && schema.enum.length) return "enum";
    const allowed = types(schema);
    if (allowed.every((t) => t === "number" || t === "integer") && allowed.length) return "number";
    if (allowed.length !== 1) return "value";
    const [type] = allowed;
    if (type === "string" || type === "boolean") return type;
    return type === "object" || type === "array" ? "json" : "value";
  }

  function isMatcher(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value) &&
      Object.keys(value).length > 0 && Object.keys(value).every((k) => k.startsWith("$"));
  }

  // What a field shows for an expected value: [kind, value, tolerance], or null when the
  // value needs the JSON (a matcher the picker has no choice for).
  function read(value, kindOf) {
    if (value === undefined) return ["", "", ""];
    if (!isMatcher(value)) {
      if (kindOf === "json" || kindOf === "value") return ["exact", JSON.stringify(value), ""];
      return ["exact", value, ""];
    }
    const [key] = Object.keys(value);
    const arg = value[key];
    if (key === "$approx" && kindOf === "number") return ["approx", arg.value, arg.tolerance];
    if (key === "$one_of" && kindOf === "enum" && Array.isArray(arg)) return ["one_of", arg, ""];
    if (key === "$text" && kindOf === "string" && arg && Array.isArray(arg.ignore)) {
      return ["text", arg.value, "", arg.ignore];
    }
    if (key === "$regex" && kindOf === "string") return ["regex", arg, ""];
    if (key === "$subset" && kindOf === "json") return ["subset", JSON.stringify(arg), ""];
    return null;
  }

  function number(text) {
    const n = Number(text);
    return text !== "" && Number.isFinite(n) ? n : text;
  }

  function json(text) {
    try { return JSON.parse(text); } catch { return text; }
  }

  // The expected value the field's inputs say, or undefined for "not constrained".
  function write(field) {
    const kind = field.querySelector("select.kind").value;
    const family = field.dataset.family;
    const value = field.querySelector(".value");
    if (!kind) return undefined;
    if (kind === "one_of") {
      const chosen = [...field.querySelectorAll(".choice:checked")].map((c) => JSON.parse(c.value));
      return { $one_of: chosen };
    }
    const text = value.value;
    if (family === "enum") return JSON.parse(text);
    if (family === "number" && kind === "approx") {
      return { $approx: { value: number(text), tolerance: number(field.querySelector(".tolerance").value || "0") } };
    }
    if (family === "number") return number(text);
    if (family === "boolean") return text === "true";
    if (kind === "text") return { $text: { value: text, ignore: JSON.parse(field.dataset.ignore || "null") || IGNORE_ALL } };
    if (kind === "regex") return { $regex: text };
    if (kind === "subset") return { $subset: json(text) };
    if (family === "json" || family === "value") return json(text);
    return text;
  }

  function element(tag, props = {}, children = []) {
    const el = document.createElement(tag);
    Object.assign(el, props);
    for (const child of children) el.append(child);
    return el;
  }

  function valueInputs(field, name, schema, kind, shown) {
    const box = field.querySelector(".inputs");
    box.replaceChildren();
    const family = field.dataset.family;
    const label = `${name} value`;
    if (!kind) return;
    if (kind === "one_of") {
      const chosen = (Array.isArray(shown[1]) ? shown[1] : []).map((v) => JSON.stringify(v));
      for (const option of schema.enum) {
        const encoded = JSON.stringify(option);
        const box_ = element("input", { type: "checkbox", className: "choice", value: encoded, checked: chosen.includes(encoded) });
        box.append(element("label", { className: "choice-label" }, [box_, ` ${typeof option === "string" ? option : encoded}`]));
      }
      return;
    }
    if (family === "enum") {
      const select = element("select", { className: "value" });
      select.setAttribute("aria-label", label);
      for (const option of schema.enum) {
        const encoded = JSON.stringify(option);
        select.append(element("option", { value: encoded, textContent: typeof option === "string" ? option : encoded, selected: shown[0] === "exact" && JSON.stringify(shown[1]) === encoded }));
      }
      box.append(select);
      return;
    }
    if (family === "boolean") {
      const select = element("select", { className: "value" });
      select.setAttribute("aria-label", label);
      for (const option of ["true", "false"]) {
        select.append(element("option", { value: option, textContent: option, selected: String(shown[1]) === option }));
      }
      box.append(select);
      return;
    }
    const input = element("input", { type: "text", className: "value mono", value: shown[1] === undefined ? "" : String(shown[1]) });
    input.setAttribute("aria-label", label);
    box.append(input);
    if (kind === "approx") {
      const tolerance = element("input", { type: "text", className: "tolerance mono", value: shown[2] === undefined ? "" : String(shown[2]), size: 6 });
      tolerance.setAttribute("aria-label", `${name} tolerance`);
      box.append(" ± ", tolerance);
    }
  }

  function parameterField(builder, name, schema, required, current) {
    const kindOf = family(schema);
    const field = element("div", { className: "argfield" });
    field.dataset.param = name;
    field.dataset.family = kindOf;
    const id = `${builder.dataset.args.slice(1)}-${name}`.replace(/[^\w-]/g, "_");
    const label = element("label", { htmlFor: id, textContent: name });
    if (required) label.append(element("abbr", { className: "required", title: "required", textContent: "*" }));
    const select = element("select", { className: "kind", id });
    select.setAttribute("aria-label", `${name} matcher`);
    select.append(element("option", { value: "", textContent: "not constrained" }));
    for (const [value, text] of KINDS[kindOf]) select.append(element("option", { value, textContent: text }));
    const shown = read(current, kindOf);
    field.append(label, select, element("span", { className: "inputs" }));
    if (schema.description) field.append(element("span", { className: "hint muted small", textContent: schema.description }));
    if (shown === null) {
      // Constrained, by a matcher the picker has no choice for: it says so, not "not constrained".
      const [key] = Object.keys(current);
      select.append(element("option", { value: "other", textContent: `${key} (set in the JSON)`, selected: true }));
      select.value = "other";
      select.disabled = true;
      field.append(element("span", { className: "muted small", textContent: " (a matcher the form cannot show: edit the JSON)" }));
      return field;
    }
    if (shown[3]) {  // a $text matcher: its option says what it ignores, and writes it back so
      field.dataset.ignore = JSON.stringify(shown[3]);
      select.querySelector('option[value="text"]').textContent = textWords(shown[3]);
    }
    select.value = shown[0];
    valueInputs(field, name, schema, shown[0], shown);
    return field;
  }

  function render(builder) {
    const name = document.querySelector(builder.dataset.name)?.value.trim();
    const args = document.querySelector(builder.dataset.args);
    const tool = catalog().find((t) => t.name === name);
    builder.replaceChildren();
    if (!tool || !args) return;
    let current = {};
    try { current = JSON.parse(args.value || "{}"); } catch { current = null; }
    if (current === null || typeof current !== "object" || Array.isArray(current)) {
      builder.append(element("p", { className: "muted small", textContent: "Fix the JSON below to use the fields." }));
      return;
    }
    const params = tool.parameters?.properties || {};
    const required = tool.parameters?.required || [];
    builder.append(element("div", { className: "small muted", textContent: tool.description || "" }));
    for (const [param, schema] of Object.entries(params)) {
      builder.append(parameterField(builder, param, schema || {}, required.includes(param), current[param]));
    }
  }

  function sync(builder) {
    const args = document.querySelector(builder.dataset.args);
    let current = {};
    try { current = JSON.parse(args.value || "{}"); } catch { current = {}; }
    if (current === null || typeof current !== "object" || Array.isArray(current)) current = {};
    for (const field of builder.querySelectorAll(".argfield")) {
      if (field.querySelector("select.kind").disabled) continue;
      const value = write(field);
      if (value === undefined) delete current[field.dataset.param];
      else current[field.dataset.param] = value;
    }
    args.value = JSON.stringify(current, null, 1).replace(/\n\s*/g, " ");
    args.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function builders(root) {
    return root.querySelectorAll ? root.querySelectorAll("[data-argbuilder]") : [];
  }

  // A new matcher gets its inputs before the field is written: a select sends "input" before
  // "change", so both are handled here, on "input" (checkboxes and selects send it too).
  function pickKind(builder, select) {
    const field = select.closest(".argfield");
    const tool = catalog().find((t) => t.name === document.querySelector(builder.dataset.name).value.trim());
    const schema = (tool?.parameters?.properties || {})[field.dataset.param] || {};
    valueInputs(field, field.dataset.param, schema, select.value, [select.value, undefined, ""]);
  }

  document.addEventListener("input", (event) => {
    const builder = event.target.closest("[data-argbuilder]");
    if (builder) {
      if (event.target.matches("select.kind")) pickKind(builder, event.target);
      sync(builder);
      return;
    }
    for (const other of builders(document)) {
      if (event.target.matches(other.dataset.name)) render(other);
      // typed JSON: the fields follow it (the builder's own writes come from sync)
      else if (event.target.matches(other.dataset.args) && event.isTrusted) render(other);
    }
  });
  const renderAll = (root) => builders(root).forEach(render);
  document.addEventListener("DOMContentLoaded", () => renderAll(document));
  document.addEventListener("htmx:afterSettle", (event) => renderAll(event.detail.elt));
})();
