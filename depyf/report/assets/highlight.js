// depyf report: a syntax highlighter for Python (depyf's decompiled code, FX graphs, Inductor
// wrappers and Triton kernels) and C++ (Inductor's CPU kernels, embedded in the wrapper as
// strings). Written for depyf; no dependencies. highlightLines(text, lang) returns one HTML
// string per line.
//
// Python is scanned as CPython's tokenizer scans it (Lib/tokenize.py; 3.8-3.13): every
// string prefix, escaped quotes and backslash-newlines in strings, numbers with `_`, Unicode
// names, and f-strings as 3.12+ tokenizes them (PEP 701): the text between replacement fields
// is string, each field is code, in which any quote opens a nested string (`f"{d["k"]}"`).
// Code that is valid before 3.12 gets the same string extents that way.
// tests/torch/test_report_highlight.py compares the classes with tokenize's tokens.
"use strict";

var DepyfHighlight = (function () {
  function words(s) {
    var set = Object.create(null);
    s.split(" ").forEach(function (w) { set[w] = true; });
    return set;
  }

  var PY_KEYWORDS = words("and as assert async await break class continue def del elif else except " +
    "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield");
  var PY_CONSTANTS = words("True False None");
  var PY_BUILTINS = words("abs all any bool bytes callable chr dict dir divmod enumerate filter float " +
    "format frozenset getattr globals hasattr hash hex id int isinstance issubclass iter len list locals " +
    "map max min next object open ord pow print range repr reversed round set setattr slice sorted str " +
    "sum super tuple type vars zip __import__ Ellipsis NotImplemented Exception ValueError TypeError " +
    "RuntimeError NotImplementedError AssertionError StopIteration");
  var CPP_KEYWORDS = words("alignas auto break case catch class const constexpr continue default delete do " +
    "else enum explicit extern for goto if inline namespace new noexcept nullptr operator private " +
    "protected public return sizeof static static_cast reinterpret_cast const_cast dynamic_cast struct " +
    "switch template this throw try typedef typename union using virtual volatile while true false");
  var CPP_TYPES = words("bool char double float int long short signed unsigned void size_t int8_t int16_t " +
    "int32_t int64_t uint8_t uint16_t uint32_t uint64_t half bfloat16 Vectorized");

  // Sticky patterns, tried at the scanner's position.
  var SPACE = /[ \t\f\r]+|\\\r?\n/y;  // blanks, and a backslash that joins two lines
  var COMMENT = /#[^\r\n]*/y;
  var NAME = /[_\p{ID_Start}][\p{ID_Continue}]*/uy;
  var NUMBER = new RegExp("0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|" +
    "(?:[0-9](?:_?[0-9])*(?:\\.(?:[0-9](?:_?[0-9])*)?)?|\\.[0-9](?:_?[0-9])*)(?:[eE][-+]?[0-9](?:_?[0-9])*)?[jJ]?", "y");
  var STRING_PREFIX = /^(?:[rRuUbBfF]|[bB][rR]|[rR][bB]|[fF][rR]|[rR][fF])$/;
  var LITERAL_RUN = /[^\\{}\r\n'"]+/y;  // f-string text with nothing special in it
  var DECORATOR = /@[ \t]*[_\p{ID_Start}][\p{ID_Continue}]*(?:[ \t]*\.[ \t]*[_\p{ID_Start}][\p{ID_Continue}]*)*/uy;
  // Soft keywords (3.10+ match/case, 3.12+ type) are keywords only where a statement begins so.
  var SOFT_MATCH = /(?![ \t]*(?:[=.,)\]}:;]|[-+*\/%&|^<>@]=|\*\*=|\/\/=|>>=|<<=|$))[^\r\n]*:[ \t]*(?:#[^\r\n]*)?(?:\r?\n|$)/y;
  var SOFT_TYPE = /[ \t]+[_\p{ID_Start}][\p{ID_Continue}]*[ \t]*[\[=]/uy;
  var OPEN = { "(": 1, "[": 1, "{": 1 }, CLOSE = { ")": 1, "]": 1, "}": 1 };
  var MAX_NESTING = 64;  // f-strings in f-strings: deeper than any real code, still bounded

  // A triple-quoted string handed to Inductor's compiler holds a kernel's source.
  var EMBEDDED = /async_compile\.(cpp_pybinding|cpp|triton)\(\s*(?:\[[^\]]*\]\s*,\s*|'[^'\n]*'\s*,\s*|"[^"\n]*"\s*,\s*)?$/;

  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function at(re, text, pos) {
    re.lastIndex = pos;
    var m = re.exec(text);
    return m ? m[0] : null;
  }

  // tokens: [[class or null, text]]; the texts concatenated are `text`.
  function pyTokens(text, out) {
    var n = text.length, pos = 0, last = 0;
    var prev = "";             // the previous token (names `def f`, `class C`)
    var statementStart = true;  // only blanks since the last logical line ended
    var depth = 0;              // open brackets outside f-strings (lines inside them are joined)

    function emit(cls, start, end) {
      if (start > last) out.push([null, text.slice(last, start)]);
      if (end > start) out.push([cls, text.slice(start, end)]);
      last = end;
    }

    // A string from `start` (its prefix) whose quote is at pos.
    function string(start, prefix, nesting) {
      var quote = text[pos], triple = text.substr(pos, 3) === quote + quote + quote;
      pos += triple ? 3 : 1;
      if (/[fF]/.test(prefix)) return fstring(start, quote, triple, /[rR]/.test(prefix), nesting);
      var close = triple ? quote + quote + quote : quote;
      while (pos < n) {
        var c = text[pos];
        if (c === "\\") pos += text.substr(pos + 1, 2) === "\r\n" ? 3 : 2;
        else if (text.substr(pos, close.length) === close) { pos += close.length; break; }
        else if (!triple && (c === "\n" || c === "\r")) break;  // unterminated: it ends with its line
        else pos++;
      }
      pos = Math.min(pos, n);
      var embedded = triple && EMBEDDED.exec(text.slice(Math.max(0, start - 400), start));
      if (embedded && pos - start > 6 && text.substr(pos - 3, 3) === close) {
        var open = start + prefix.length + 3;
        emit("s", start, open);
        var body = text.slice(open, pos - 3);
        if (body) {
          if (embedded[1] === "triton") pyTokens(body, out); else cppTokens(body, out);
          last = pos - 3;
        }
        emit("s", pos - 3, pos);
        return;
      }
      emit("s", start, pos);
    }

    // An f-string: text is string, each {field} is code (3.12+); its format spec is string
    // again, with fields of its own.
    function fstring(start, quote, triple, raw, nesting) {
      var close = triple ? quote + quote + quote : quote;
      var from = start;  // start of the string text not emitted yet
      while (pos < n) {
        if (at(LITERAL_RUN, text, pos) !== null) { pos = LITERAL_RUN.lastIndex; continue; }
        var c = text[pos];
        if (text.substr(pos, close.length) === close) { pos += close.length; break; }
        if (c === "\\") {
          var next = text[pos + 1];
          if (!raw && next === "N" && text[pos + 2] === "{") {  // \N{NAME}: its braces are no field
            var end = text.indexOf("}", pos);
            pos = end < 0 ? n : end + 1;
          } else pos += next === "{" || next === "}" ? 1 : text.substr(pos + 1, 2) === "\r\n" ? 3 : 2;
          continue;
        }
        if (c === "{" || c === "}") {
          if (text[pos + 1] === c) { pos += 2; continue; }  // {{ and }} are text
          if (c === "}") { pos++; continue; }               // (a stray brace: an error in Python)
          emit("s", from, pos);
          field(quote, triple, raw, nesting);
          from = pos;
          continue;
        }
        if (!triple && (c === "\n" || c === "\r")) break;  // unterminated
        pos++;  // the other quote
      }
      pos = Math.min(pos, n);
      emit("s", from, pos);
    }

    // A replacement field from its `{` at pos to its `}`: code, then `!conversion`, then `:spec`,
    // a string with fields of its own.  In broken code it also ends where its f-string does.
    function field(quote, triple, raw, nesting) {
      pos++;
      emit(null, pos - 1, pos);
      var stop = code(nesting + 1);
      while (stop === "!") {
        pos++;
        var conversion = at(NAME, text, pos) || "";
        pos += conversion.length;
        emit(null, pos - conversion.length - 1, pos);
        stop = code(nesting + 1);
      }
      if (stop === ":") {
        pos++;
        emit(null, pos - 1, pos);
        var from = pos, close = triple ? quote + quote + quote : quote;
        for (;;) {
          var c = text[pos];
          if (pos >= n || text.substr(pos, close.length) === close || (!triple && (c === "\n" || c === "\r"))) {
            pos = Math.min(pos, n);
            emit("s", from, pos);
            return;
          }
          if (c === "}") break;
          if (c === "{") {
            emit("s", from, pos);
            field(quote, triple, raw, nesting);
            from = pos;
            continue;
          }
          pos += c === "\\" && !raw && text[pos + 1] !== "{" && text[pos + 1] !== "}" ? 2 : 1;
        }
        emit("s", from, pos);
        stop = "}";
      }
      if (stop === "}") {
        pos++;
        emit(null, pos - 1, pos);
      }
    }

    // Code, from pos: to the end of the text, or (nesting > 0: inside an f-string's field)
    // to the field's `}`, `!` or `:` at its own bracket depth 0, which is returned.
    function code(nesting) {
      var inner = 0;  // brackets open inside this field
      if (nesting > MAX_NESTING) { pos = n; return ""; }
      while (pos < n) {
        var c = text[pos], m;
        if (c === "\n") {
          pos++;
          if (!nesting && !depth) statementStart = true;
          continue;
        }
        if ((m = at(SPACE, text, pos)) !== null) { pos += m.length; continue; }
        if (c === "#") { m = at(COMMENT, text, pos); emit("c", pos, pos + m.length); pos += m.length; continue; }
        if (nesting && !inner) {
          if (c === "}" || c === ":") return c;
          if (c === "!" && text[pos + 1] !== "=") return c;
        }
        var first = statementStart;
        statementStart = false;
        if (c === "'" || c === '"') { string(pos, "", nesting); prev = "str"; continue; }
        if ((m = at(NAME, text, pos)) !== null) {
          var q = text[pos + m.length];
          if ((q === "'" || q === '"') && STRING_PREFIX.test(m)) {
            var start = pos;
            pos += m.length;
            string(start, m, nesting);
            prev = "str";
            continue;
          }
          emit(nameClass(m, first, pos + m.length), pos, pos + m.length);
          pos += m.length;
          prev = m;
          continue;
        }
        if ((m = at(NUMBER, text, pos)) !== null) { emit("n", pos, pos + m.length); pos += m.length; prev = m; continue; }
        if (c === "@" && first && (m = at(DECORATOR, text, pos)) !== null) {
          // (`@` and the dotted name after it; a keyword there is a keyword: `@False or f`)
          if (m.slice(1).split(".").some(function (w) { w = w.trim(); return PY_KEYWORDS[w] || PY_CONSTANTS[w]; })) m = "@";
          emit("d", pos, pos + m.length); pos += m.length; prev = m; continue;
        }
        if (OPEN[c]) { if (nesting) inner++; else depth++; }
        else if (CLOSE[c]) { if (nesting) inner = Math.max(0, inner - 1); else depth = Math.max(0, depth - 1); }
        else if (c === ";" && !nesting && !depth) statementStart = true;
        prev = c;
        pos += c.length;
        if (c >= "\ud800" && c <= "\udbff") pos++;  // (the other half of a character outside the BMP)
      }
      return "";
    }

    function nameClass(name, first, end) {
      if (prev === "def") return "f";
      if (prev === "class") return "t";
      if (PY_KEYWORDS[name]) return "k";
      if (PY_CONSTANTS[name]) return "n";
      if (first && (name === "match" || name === "case") && at(SOFT_MATCH, text, end) !== null) return "k";
      if (first && name === "type" && at(SOFT_TYPE, text, end) !== null) return "k";
      if (PY_BUILTINS[name]) return "b";
      if (name === "self") return "v";
      if (name.lastIndexOf("__compiled_fn_", 0) === 0 || name.lastIndexOf("__resume_at_", 0) === 0 ||
          name.lastIndexOf("__transformed_code_", 0) === 0) return "g";
      return null;
    }

    code(0);
    if (last < n) out.push([null, text.slice(last)]);
    return out;
  }

  var CPP_TOKEN = new RegExp([
    "(\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$(?![\\s\\S])))",           // 1 comment
    "(^[ \\t]*#[^\\n]*)",                                               // 2 preprocessor
    "(\"(?:[^\"\\\\\\n]|\\\\.)*\"?|'(?:[^'\\\\\\n]|\\\\.)*'?)",           // 3 string
    "(\\b(?:0[xX][0-9a-fA-F]+|\\d+\\.?\\d*(?:[eE][+-]?\\d+)?)[uUlLfF]*\\b)", // 4 number
    "([A-Za-z_]\\w*)",                                                 // 5 identifier
  ].join("|"), "gm");

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
