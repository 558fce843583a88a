// depyf report: a small syntax highlighter for Python (depyf's decompiled code,
// FX graphs, Inductor wrappers and Triton kernels) and C++ (Inductor's CPU
// kernels, embedded in the wrapper as strings). Written for depyf; no
// dependencies. highlightLines(text, lang) returns one HTML string per line.
"use strict";

var DepyfHighlight = (function () {
  function words(s) {
    var set = Object.create(null);
    s.split(" ").forEach(function (w) { set[w] = true; });
    return set;
  }

  var PY_KEYWORDS = words("and as assert async await break class continue def del elif else except " +
    "finally for from global if import in is lambda nonlocal not or pass raise return try while with " +
    "yield match case");
  var PY_CONSTANTS = words("True False None Ellipsis NotImplemented");
  var PY_BUILTINS = words("abs all any bool bytes callable chr dict dir divmod enumerate filter float " +
    "format frozenset getattr globals hasattr hash hex id int isinstance issubclass iter len list locals " +
    "map max min next object open ord pow print range repr reversed round set setattr slice sorted str " +
    "sum super tuple type vars zip __import__ Exception ValueError TypeError RuntimeError " +
    "NotImplementedError AssertionError StopIteration");
  var CPP_KEYWORDS = words("alignas auto break case catch class const constexpr continue default delete do " +
    "else enum explicit extern for goto if inline namespace new noexcept nullptr operator private " +
    "protected public return sizeof static static_cast reinterpret_cast const_cast dynamic_cast struct " +
    "switch template this throw try typedef typename union using virtual volatile while true false");
  var CPP_TYPES = words("bool char double float int long short signed unsigned void size_t int8_t int16_t " +
    "int32_t int64_t uint8_t uint16_t uint32_t uint64_t half bfloat16 Vectorized");

  var PY_TOKEN = new RegExp([
    "(#[^\\n]*)",                                                     // 1 comment
    "((?:[rRbBuUfF]{1,2})?(?:'''[\\s\\S]*?(?:'''|$(?![\\s\\S]))|\"\"\"[\\s\\S]*?(?:\"\"\"|$(?![\\s\\S]))))", // 2 triple string
    "((?:[rRbBuUfF]{1,2})?(?:'(?:[^'\\\\\\n]|\\\\.)*'?|\"(?:[^\"\\\\\\n]|\\\\.)*\"?))",  // 3 string
    "(@[A-Za-z_][\\w.]*)",                                             // 4 decorator
    "(\\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\\d[\\d_]*\\.?[\\d_]*|\\.\\d[\\d_]*)(?:[eE][+-]?\\d+)?[jJ]?)\\b)", // 5 number
    "([A-Za-z_]\\w*)",                                                 // 6 identifier
  ].join("|"), "g");

  var CPP_TOKEN = new RegExp([
    "(\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$(?![\\s\\S])))",           // 1 comment
    "(^[ \\t]*#[^\\n]*)",                                               // 2 preprocessor
    "(\"(?:[^\"\\\\\\n]|\\\\.)*\"?|'(?:[^'\\\\\\n]|\\\\.)*'?)",           // 3 string
    "(\\b(?:0[xX][0-9a-fA-F]+|\\d+\\.?\\d*(?:[eE][+-]?\\d+)?)[uUlLfF]*\\b)", // 4 number
    "([A-Za-z_]\\w*)",                                                 // 5 identifier
  ].join("|"), "gm");

  // A triple-quoted string handed to Inductor's compiler holds a kernel's source.
  var EMBEDDED = /async_compile\.(cpp_pybinding|cpp|triton)\(\s*(?:\[[^\]]*\]\s*,\s*)?[rR]?$/;

  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // tokens: [[class or null, text]]
  function pyTokens(text, out) {
    var last = 0, m, prev = "";
    PY_TOKEN.lastIndex = 0;
    while ((m = PY_TOKEN.exec(text)) !== null) {
      if (m[0] === "") { PY_TOKEN.lastIndex++; continue; }
      if (m.index > last) out.push([null, text.slice(last, m.index)]);
      var t = m[0], cls = null;
      if (m[1]) cls = "c";
      else if (m[2]) {
        var embedded = EMBEDDED.exec(text.slice(Math.max(0, m.index - 400), m.index));
        if (embedded && t.length > 6) {
          var q = t.search(/'''|"""/), body = t.slice(q + 3, t.length - 3);
          out.push(["s", t.slice(0, q + 3)]);
          if (embedded[1] === "triton") pyTokens(body, out); else cppTokens(body, out);
          out.push(["s", t.slice(t.length - 3)]);
          last = PY_TOKEN.lastIndex; prev = "";
          continue;
        }
        cls = "s";
      }
      else if (m[3]) cls = "s";
      else if (m[4]) cls = "d";
      else if (m[5]) cls = "n";
      else if (m[6]) {
        if (prev === "def") cls = "f";
        else if (prev === "class") cls = "t";
        else if (PY_KEYWORDS[t]) cls = "k";
        else if (PY_CONSTANTS[t]) cls = "n";
        else if (PY_BUILTINS[t]) cls = "b";
        else if (t === "self") cls = "v";
        else if (t.lastIndexOf("__compiled_fn_", 0) === 0 || t.lastIndexOf("__resume_at_", 0) === 0 ||
                 t.lastIndexOf("__transformed_code_", 0) === 0) cls = "g";
        prev = t;
      }
      out.push([cls, t]);
      last = PY_TOKEN.lastIndex;
    }
    if (last < text.length) out.push([null, text.slice(last)]);
    return out;
  }

  function cppTokens(text, out) {
    var last = 0, m;
    var re = new RegExp(CPP_TOKEN.source, "gm");
    while ((m = re.exec(text)) !== null) {
      if (m[0] === "") { re.lastIndex++; continue; }
      if (m.index > last) out.push([null, text.slice(last, m.index)]);
      var t = m[0], cls = null;
      if (m[1]) cls = "c";
      else if (m[2]) cls = "d";
      else if (m[3]) cls = "s";
      else if (m[4]) cls = "n";
      else if (m[5]) cls = CPP_KEYWORDS[t] ? "k" : CPP_TYPES[t] ? "t" : null;
      out.push([cls, t]);
      last = re.lastIndex;
    }
    if (last < text.length) out.push([null, text.slice(last)]);
    return out;
  }

  // Tokens to one HTML string per line; a token spanning lines is closed and reopened.
  function toLines(tokens) {
    var lines = [], cur = "";
    tokens.forEach(function (tok) {
      var parts = tok[1].split("\n");
      parts.forEach(function (part, i) {
        if (i > 0) { lines.push(cur); cur = ""; }
        if (part) cur += tok[0] ? '<span class="h' + tok[0] + '">' + esc(part) + "</span>" : esc(part);
      });
    });
    lines.push(cur);
    return lines;
  }

  function highlightLines(text, lang) {
    var tokens = lang === "cpp" ? cppTokens(text, []) : lang === "text" ? [[null, text]] : pyTokens(text, []);
    return toLines(tokens);
  }

  return { highlightLines: highlightLines, escape: esc };
})();
