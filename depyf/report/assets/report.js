// depyf report: renders the dump described by #depyf-data. File texts live in
// <script type="application/json" id="b<n>"> elements and are parsed only
// when shown or searched, so the index of a large dump renders at once.
// Views are addressed by the URL hash (#/<run>/<view>/<arg>): the back button
// and bookmarks work, also from file://.
"use strict";

(function () {
  var DATA = JSON.parse(document.getElementById("depyf-data").textContent);
  var H = DepyfHighlight, esc = H.escape;
  var run = null, runIndex = 0;
  var bodyCache = {};
  var $ = function (id) { return document.getElementById(id); };

  function body(i) {
    if (!(i in bodyCache)) bodyCache[i] = JSON.parse($("b" + i).textContent);
    return bodyCache[i];
  }

  function selectRun(i) {
    runIndex = Math.max(0, Math.min(i, DATA.runs.length - 1));
    run = DATA.runs[runIndex];
    run.fileByName = {};
    run.files.forEach(function (f) { run.fileByName[f.name] = f; });
    run.fnById = {};
    run.functions.forEach(function (fn) { run.fnById[fn.id] = fn; });
    run.graphByName = {};
    run.graphOfFile = {};
    run.graphs.forEach(function (g) {
      run.graphByName[g.name] = g;
      g.stages.forEach(function (s) { run.graphOfFile[s.file] = g; });
    });
    run.resumeByGlobal = {};
    run.callerOfGraph = {};
    run.fnOfFile = {};
    run.tree = functionTree(run.functions);
    run.functions.forEach(function (fn) {
      fn.compilations.forEach(function (c, k) {
        (c.resumes || []).forEach(function (r) { run.resumeByGlobal[r.global] = r.id; });
        (c.graphs || []).forEach(function (g) { run.callerOfGraph[g] = { fn: fn, entry: k }; });
        if (c.transformed) run.fnOfFile[c.transformed] = fn;
      });
      if (fn.full_code) run.fnOfFile[fn.full_code] = fn;
    });
  }

  // [{fn, depth}]: functions in display order, each resume function under the one it continues.
  function functionTree(functions) {
    var children = {}, out = [], seen = {}, named = {};
    functions.forEach(function (fn) {
      if (fn.parent && fn.parent !== fn.id) (children[fn.parent] = children[fn.parent] || []).push(fn);
    });
    function visit(fn, depth) {
      if (seen[fn.id] || depth > 50) return;
      seen[fn.id] = true;
      out.push({ fn: fn, depth: depth });
      (children[fn.id] || []).forEach(function (c) { visit(c, depth + 1); });
    }
    functions.forEach(function (fn) { if (!fn.parent || !run.fnById[fn.parent]) visit(fn, 0); });
    functions.forEach(function (fn) { visit(fn, 0); });
    // Dynamo names the resume functions after one line alike (torch_dynamo_resume_in_f_at_10):
    // those are told apart by the global each is bound to.
    out.forEach(function (item) { named[item.fn.name] = (named[item.fn.name] || 0) + 1; });
    out.forEach(function (item) { item.fn.nameShared = named[item.fn.name] > 1; });
    return out;
  }

  // ------------------------------------------------------------ helpers
  function href() {
    return "#/" + runIndex + "/" + Array.prototype.slice.call(arguments).map(encodeURIComponent).join("/");
  }
  function link(text, target, cls) {
    return '<a href="' + target + '"' + (cls ? ' class="' + cls + '"' : "") + ">" + text + "</a>";
  }
  function plural(n, word, many) { return n + " " + (n === 1 ? word : (many || word + "s")); }
  function badge(text, cls) { return ' <span class="badge ' + (cls || "") + '">' + esc(String(text)) + "</span>"; }
  function fileLink(name, line) {
    var f = run.fileByName[name];
    if (!f) return esc(name || "");
    return link(esc(name), href("file", name) + (line ? "/" + line : ""));
  }
  // Whose code a stack frame runs: "torch", "library" or "" (the program's own); the manifest
  // says so (an older one does not: then the path tells).
  function origin(frame) {
    if (frame.origin !== undefined) return frame.origin || "";
    var path = frame.file || "";
    return /[\/\\]torch[\/\\]/.test(path) ? "torch" : /[\/\\](site|dist)-packages[\/\\]/.test(path) ? "library" : "";
  }
  // A resume function's global (`__resume_at_102_2`, what the transformed code calls): a detail.
  function fnName(fn) { return fn.name || "?"; }
  function boundTo(fn) { return fn.globals && fn.globals.length ? fn.globals.join(", ") : ""; }
  function shortPath(p) {
    if (!p) return "";
    var parts = p.split(/[\/\\]/);
    return parts.length > 3 ? "\u2026/" + parts.slice(-2).join("/") : p;
  }

  // A path to open in an editor, with copy and open actions.
  function pathRow(path, line) {
    if (!path) return "";
    var full = path + (line ? ":" + line : "");
    return '<div class="path"><span class="p">' + esc(full) + "</span>" +
      '<button data-copy="' + esc(full) + '">Copy path</button>' +
      '<a href="vscode://file/' + esc(encodeURI(path)) + (line ? ":" + line : "") + '">Open in VS Code</a>' +
      '<a href="' + esc(encodeURI("file://" + path)) + '" target="_blank">Raw file</a></div>';
  }

  // Highlighted code with line numbers. opts: {first, marks: {line: true}, target, linkify, lang}
  function codeBlock(text, opts) {
    opts = opts || {};
    var first = opts.first || 1, marks = opts.marks || {};
    var lines = H.highlightLines(text.replace(/\n$/, ""), opts.lang || "python");
    var out = [];
    for (var i = 0; i < lines.length; i++) {
      var n = first + i, html = lines[i];
      if (opts.linkify) html = linkify(html);
      var cls = "ln" + (marks[n] ? " mark" : "") + (opts.target === n ? " target" : "");
      out.push('<span class="' + cls + '" data-n="' + n + '" id="' + (opts.idPrefix || "L") + n + '">' + html + "\n</span>");
    }
    return '<pre class="code' + (opts.full ? " full" : "") + '">' + out.join("") + "</pre>";
  }

  // Calls to compiled graphs and resume functions become links.
  function linkify(html) {
    return html.replace(/<span class="hg">(__compiled_fn_\d+)([0-9a-f_]*)<\/span>/g, function (all, name, rest) {
      if (!run.graphByName[name]) return all;
      return '<a class="hg" href="' + href("graph", name) + '" title="open the stages of ' + name + '">' +
        name + rest + "</a>";
    }).replace(/<span class="hg">(__resume_at_\d+_\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?)<\/span>/g, function (all, name) {
      var id = run.resumeByGlobal[name];
      return id ? '<a class="hg" href="' + href("fn", id) + '" title="the resume function ' + esc(run.fnById[id].name) + '">' +
        name + "</a>" : all;
    });
  }

  function toast(text) {
    var t = $("toast");
    t.textContent = text;
    t.className = "toast show";
    setTimeout(function () { t.className = "toast"; }, 1400);
  }

  // ------------------------------------------------------------ frame
  function renderFrame() {
    $("where").textContent = run.dir;
    $("where").title = run.dir;
    $("ranks").innerHTML = DATA.runs.length > 1 ? DATA.runs.map(function (r, i) {
      return '<button data-run="' + i + '" class="' + (i === runIndex ? "on" : "") + '">' + esc(r.label) + "</button>";
    }).join("") : "";
    var c = run.counts;
    var cards = [
      ["functions", c.functions, plural(c.functions, "function").replace(/^\d+ /, "") +
        (c.resume_functions ? " (+" + c.resume_functions + " resume)" : ""), "overview"],
      ["graphs", c.graphs, c.graphs === 1 ? "graph" : "graphs", "graphs"],
      ["graph_breaks", c.graph_breaks, c.graph_breaks === 1 ? "graph break" : "graph breaks", "breaks"],
      ["recompilations", c.recompilations, c.recompilations === 1 ? "recompilation" : "recompilations", "recompiles"],
      ["kernels", c.kernels, c.kernels === 1 ? "kernel file" : "kernel files", "kernels"],
    ];
    $("counts").innerHTML = cards.map(function (card) {
      var warn = (card[0] === "graph_breaks" || card[0] === "recompilations") && card[1] > 0;
      return '<a class="count' + (warn ? " warn" : "") + '" id="count-' + card[0] + '" href="' + href(card[3]) +
        '" style="color:inherit;text-decoration:none"><div class="num">' + card[1] + '</div><div class="lbl">' +
        esc(card[2]) + "</div></a>";
    }).join("");
    renderSide();
  }

  var SIDE_LIMIT = 60;
  function renderSide() {
    var html = ['<input class="search" id="search" type="search" placeholder="Search all files\u2026" ' +
      'autocomplete="off" spellcheck="false">'];
    html.push("<h3>Functions <span>" + run.counts.functions + "</span></h3><ul>");
    run.tree.forEach(function (item) {
      html.push(sideItem(fnName(item.fn), href("fn", item.fn.id), item.fn.compilations.length, item.depth,
        item.fn.nameShared ? boundTo(item.fn) : ""));
    });
    html.push("</ul>");
    html.push('<h3>Graphs <span>' + run.graphs.length + "</span></h3><ul>");
    run.graphs.slice(0, SIDE_LIMIT).forEach(function (g) {
      html.push(sideItem(g.name, href("graph", g.name), g.stages.length, 0));
    });
    if (run.graphs.length > SIDE_LIMIT)
      html.push('<li><a href="' + href("graphs") + '" class="more">all ' + run.graphs.length + " graphs\u2026</a></li>");
    html.push("</ul>");
    html.push('<h3>Files <span>' + run.files.length + "</span></h3><ul>");
    if (run.files.length) html.push('<li><a href="' + href("files") + '"><span class="name">Browse all files</span></a></li>');
    html.push("</ul>");
    var side = $("side"), old = $("search"), value = old ? old.value : "";
    side.innerHTML = html.join("");
    $("search").value = value;
  }
  function sideItem(label, target, n, depth, detail) {
    return '<li><a href="' + target + '" style="padding-left:' + (8 + 14 * depth) + 'px" title="' +
      esc(label + (detail ? " (" + detail + ")" : "")) + '"><span class="name">' + (depth ? "\u21b3\u00a0" : "") + esc(label) +
      (detail ? '<small class="detail">' + esc(detail) + "</small>" : "") + '</span><span class="note">' + n + "</span></a></li>";
  }

  // ------------------------------------------------------------ views
  // With several ranks or processes: their counts side by side, so that one that compiled
  // differently stands out.
  function ranksCard() {
    if (DATA.runs.length < 2) return "";
    var keys = ["functions", "graphs", "graph_breaks", "recompilations", "kernels"];
    var processes = DATA.runs_are === "processes";
    var html = ['<div class="card" id="runs-card"><h2>' + (processes ? "Processes" : "Ranks") + "</h2>" +
      (processes ? '<p class="sub-title">' + DATA.runs.length + " processes dumped into this directory in one run; " +
        "each numbered its files apart. Pick one to see its work.</p>" : "") +
      '<table class="list"><tr><th>' + (processes ? "Process" : "Rank") + "</th>" + keys.map(function (k) {
      return '<th class="num">' + k.replace("_", " ") + "</th>";
    }).join("") + "</tr>"];
    DATA.runs.forEach(function (r, i) {
      html.push('<tr class="click" data-run="' + i + '"><td>' + (i === runIndex ? "<b>" + esc(r.label) + "</b>" : esc(r.label)) +
        "</td>" + keys.map(function (k) {
          var differs = r.counts[k] !== DATA.runs[0].counts[k];
          return '<td class="num">' + (differs ? badge(r.counts[k], "warn") : r.counts[k]) + "</td>";
        }).join("") + "</tr>");
    });
    return html.join("") + "</table></div>";
  }

  function viewOverview() {
    if (!run.functions.length && !run.graphs.length) return ranksCard() + viewEmpty();
    var html = [ranksCard() + '<div class="card"><h2>Compiled functions</h2>',
      '<p class="sub-title">Every function torch.compile compiled, with its cache entries (one per compilation). ' +
      "Resume functions continue a function after a graph break.</p>",
      '<table class="list"><tr><th>Function</th><th>Defined in</th><th class="num">Cache entries</th>' +
      '<th class="num">Graph breaks</th><th class="num">Recompilations</th><th>Graphs</th></tr>'];
    run.tree.forEach(function (item) {
      var fn = item.fn, breaks = 0, recompiles = 0, graphs = [];
      fn.compilations.forEach(function (c) {
        breaks += c.graph_breaks.length;
        if (isRecompile(c)) recompiles++;
        graphs = graphs.concat(c.graphs || []);
      });
      html.push('<tr class="click" data-go="' + href("fn", fn.id) + '"><td>' +
        '<span style="padding-left:' + 16 * item.depth + 'px"></span>' + (item.depth ? "\u21b3 " : "") + link("<b>" + esc(fnName(fn)) + "</b>", href("fn", fn.id)) +
        (fn.resume ? badge("resume", "") : "") + (fn.nameShared ? ' <span class="note mono">' + esc(boundTo(fn)) + "</span>" : "") + '</td><td class="mono" title="' + esc(fn.file || "") + '">' +
        esc(shortPath(fn.file)) + (fn.line ? ":" + fn.line : "") + '</td><td class="num">' + fn.compilations.length +
        '</td><td class="num">' + breaks + '</td><td class="num">' + recompiles + "</td><td>" +
        graphs.slice(0, 4).map(function (g) { return link(esc(g), href("graph", g)); }).join(", ") +
        (graphs.length > 4 ? ", \u2026" : "") + "</td></tr>");
    });
    html.push("</table></div>");
    html.push(metaCard());
    return html.join("");
  }

  function metaCard() {
    var m = run.meta;
    var bits = ["Dump directory: " + esc(run.dir)];
    if (m) bits.push("Python " + esc(m.python || "?") + ", torch " + esc(m.torch || "?") +
      (m.rank !== null && m.rank !== undefined ? ", rank " + m.rank : "") + ", process " + esc(String(m.pid)) +
      ", last written " + esc(m.updated || "?"));
    else bits.push("This dump has no depyf_manifest.json this depyf can read (an older depyf wrote it?): " +
      "the report shows what its file names tell.");
    bits.push("Report generated " + esc(DATA.generated) + ". Regenerate it with <code>depyf report " + esc(DATA.dir) + "</code>.");
    return '<div class="card note">' + bits.join("<br>") + "</div>";
  }

  function viewEmpty() {
    return '<div class="card empty" id="nothing-compiled"><div class="icon">\u2205</div>' +
      "<h1>Nothing was compiled</h1>" +
      "<p>torch.compile did not compile any function while depyf was recording into this directory" +
      (run.files.length ? "" : ", and the directory holds no dumped files") + ".</p>" +
      "<p>Compiled functions are compiled when they first run: call them inside the block.</p>" +
      "<pre>with depyf.prepare_debug(\"" + esc(run.dir) + "\"):\n    compiled_fn(inputs)</pre>" +
      (run.files.length ? "<p>" + link("Browse the " + plural(run.files.length, "file") + " in the directory", href("files")) + "</p>" : "") +
      "</div>";
  }

  function isRecompile(c) { var m = /(\d+)\/(\d+)$/.exec(c.compile_id || ""); return !!m && +m[2] > 0; }

  function viewFunction(id) {
    var fn = run.fnById[id];
    if (!fn) return notFound("function");
    var parent = fn.parent && run.fnById[fn.parent];
    var html = ['<div class="card">'];
    if (parent) html.push('<div class="crumbs">' + link(esc(fnName(parent)), href("fn", parent.id)) + " \u203a resume function</div>");
    html.push("<h1>" + esc(fnName(fn)) + (fn.resume ? badge("resume function") : "") +
      badge(plural(fn.compilations.length, "cache entry", "cache entries"), "accent") + "</h1>");
    if (fn.resume && boundTo(fn)) html.push('<div class="sub-title">' + (fn.globals.length > 1 ?
      "Bound to the globals <code>" + esc(boundTo(fn)) + "</code>, the names the transformed code calls it by." :
      "Bound to the global <code>" + esc(boundTo(fn)) + "</code>, the name the transformed code calls it by.") + "</div>");
    html.push(fn.resume ? '<div class="note">Generated by Dynamo to continue ' + (parent ? esc(parent.name) : "the function") +
      " after a graph break; its source below is decompiled. Defined at:</div>" : '<div class="note">Defined at:</div>');
    html.push(pathRow(fn.file, fn.line));
    var files = [];
    if (fn.full_code) files.push(fileLink(fn.full_code) + ' <span class="note">(guards, transformed code and ' +
      "dispatcher in one Python file)</span>");
    if (files.length) html.push("<h4>Explained</h4><div>" + files.join("<br>") + "</div>");
    if (fn.check_order && fn.check_order.length > 1) {
      html.push("<h4>Dispatch</h4><div>On each call Dynamo checks the cache entries' guards in this order and runs the " +
        "first that holds: " + fn.check_order.map(function (cid) {
          var k = fn.compilations.findIndex(function (c) { return c.compile_id === cid; });
          return '<a href="#entry-' + k + '" data-scroll="entry-' + k + '">entry ' + (k + 1) + "</a>";
        }).join(" \u2192 ") + ".</div>");
    }
    html.push("</div>");
    fn.compilations.forEach(function (c, k) { html.push(entryCard(fn, c, k)); });
    return html.join("");
  }

  function entryCard(fn, c, k) {
    var html = ['<div class="card entry" id="entry-' + k + '"><div class="head"><b>Entry ' + (k + 1) + "</b>"];
    if (c.compile_id) html.push(badge("compile id " + c.compile_id));
    if (isRecompile(c)) html.push(badge("recompilation", "warn"));
    if (c.graph_breaks.length) html.push(badge(plural(c.graph_breaks.length, "graph break"), "bad"));
    if (c.fail) html.push(badge("compile failed", "bad"));
    if (c.in_cache === false) html.push(badge("no longer in the cache"));
    html.push("</div><div class=\"body\">");
    if (c.fail) html.push('<h4>Compilation failed</h4><div class="reason break">' + esc(c.fail) + "</div>");
    if (c.recompile_reasons.length) {
      html.push("<h4>Why it recompiled</h4>");
      c.recompile_reasons.forEach(function (r) { html.push(reasonBlock(r, "")); });
    }
    if (c.graph_breaks.length) {
      html.push("<h4>Graph breaks</h4>");
      c.graph_breaks.forEach(function (b) {
        var s = breakSummary(b.reason);
        html.push('<div class="reason break graph-break"><span class="where">' + esc((b.file || "?") + ":" + (b.line || "?")) +
          (b.code ? "  \u2014  " + esc(b.code) : "") + "</span><b>" + esc(s.head) + "</b>" +
          (s.why ? "\n" + esc(s.why) : "") +
          '<details class="more"><summary>Dynamo\'s full message</summary>' + esc(b.reason) + "</details>" +
          (b.user_stack ? '<details class="more"><summary>user code traceback</summary>' + esc(b.user_stack) + "</details>" : "") +
          "</div>");
      });
    }
    if (c.stack && c.stack.length) {
      html.push('<details><summary>Compiled when called from ' + esc(callerOf(c.stack)) + "</summary>" +
        stackFrames(c.stack) + "</details>");
    }
    if (c.guards && c.guards.length) {
      html.push("<details><summary>Guards (" + c.guards.length + ')</summary><table class="list guards">' +
        '<colgroup><col class="kind"><col></colgroup>');
      c.guards.forEach(function (g) { html.push(guardRow(g)); });
      html.push("</table></details>");
    } else if (c.guards_text) {
      html.push('<details><summary>Guards</summary><pre class="code">' + esc(c.guards_text) + "</pre></details>");
    }
    if ((c.graphs && c.graphs.length) || (c.resumes && c.resumes.length)) {
      html.push('<h4>It calls</h4><div class="chips">' + (c.graphs || []).map(function (g) {
        return run.graphByName[g] ? '<a class="chip graph-link" href="' + href("graph", g) + '">' + esc(g) +
          " \u2192 stages</a>" : '<span class="chip plain">' + esc(g) + "</span>";
      }).join("") + (c.resumes || []).map(function (r) {
        return '<a class="chip plain resume-link" href="' + href("fn", r.id) + '" title="bound to the global ' + esc(r.global) +
          '">' + esc(r.name) + ' <small class="detail">' + esc(r.global) + "</small> \u2192 resume</a>";
      }).join("") + "</div>");
    }
    var marks = {};
    if (!fn.resume) c.graph_breaks.forEach(function (b) { if (b.file === fn.file) marks[b.line] = true; });
    var original = fn.source ? codeBlock(fn.source, { first: fn.source_line || 1, marks: marks, idPrefix: "o" + k + "-" }) :
      '<pre class="code"><span class="ln" data-n="">(source not available)</span></pre>';
    var tf = c.transformed && run.fileByName[c.transformed];
    var transformed = tf ? codeBlock(body(tf.body), { linkify: true, idPrefix: "t" + k + "-" }) :
      '<pre class="code"><span class="ln" data-n="">(no transformed code was dumped)</span></pre>';
    html.push('<div class="split"><div class="pane"><div class="ptitle"><span>Original source' +
      (fn.resume ? " (decompiled)" : "") + "</span>" + (fn.file ? '<span class="note mono">' + esc(shortPath(fn.file)) + "</span>" : "") +
      "</div>" + original + '</div><div class="pane"><div class="ptitle"><span>Transformed code (decompiled)</span>' +
      (tf ? fileLink(tf.name) : "") + "</div>" + transformed + "</div></div>");
    if (tf) html.push(pathRow(tf.path));
    html.push("</div></div>");
    return html.join("");
  }

  // The whole stack of the program, outermost first: its own frames shown, each run of torch's
  // or libraries' frames folded under a line that says how many there are.
  function stackFrames(stack) {
    var html = ['<div class="stack">'], folded = [];
    function frame(f) {
      return '<div class="frame' + (origin(f) ? " internal" : "") + '"><span class="fr">' + esc(f.file) + ":" + f.line +
        " in <b>" + esc(f.name) + "</b></span>" + (f.code ? "<code>" + esc(f.code) + "</code>" : "") + "</div>";
    }
    function flush() {
      if (!folded.length) return;
      var kinds = {};
      folded.forEach(function (f) { kinds[origin(f)] = true; });
      var where = kinds.torch && kinds.library ? "in torch and libraries" : kinds.torch ? "inside torch" :
        "in the standard library and installed packages";
      html.push('<details class="more folded"><summary>' + plural(folded.length, "frame") + " " + where + " (folded)</summary>" +
        folded.map(frame).join("") + "</details>");
      folded = [];
    }
    stack.forEach(function (f) {
      if (origin(f)) { folded.push(f); return; }
      flush();
      html.push(frame(f));
    });
    flush();
    return html.join("") + "</div>";
  }

  // A guard: what it checks (its Python expression, or what Dynamo checks in C++), and the
  // user's source line it comes from; long ones wrap, never hide.
  function guardRow(g) {
    var what = g.expr ? '<div class="expr">' + H.highlightLines(g.expr, "python").join("\n") + "</div>" :
      '<div class="expr cpp">' + esc(g.check || "") + ' <span class="badge">checked in C++</span></div>';
    var detail = g.expr && g.check ? '<div class="check">' + esc(g.check) + "</div>" : "";
    var source = g.code || g.where ? '<div class="src">\u21b3 ' + (g.code ? '<span class="code">' + H.highlightLines(g.code, "python").join("\n") +
      "</span>" : "") + (g.where ? ' <span class="where">' + esc(g.where) + "</span>" : "") + "</div>" : "";
    return '<tr class="guard"><td class="kind">' + esc(g.kind || "") + "</td><td>" + what + detail + source + "</td></tr>";
  }

  // Dynamo's message opens with a generic line ("Encountered graph break when attempting to
  // trace CALL ..."); the specific reason and its explanation follow.
  function breakSummary(reason) {
    var lines = reason.split("\n").map(function (l) { return l.trim(); }).filter(Boolean);
    var head = lines[0] || "(no reason given)", why = "";
    if (/^Encountered graph break/.test(head) && lines.length > 1) head = lines[1];
    lines.forEach(function (l) { if (!why && /^Explanation:/.test(l)) why = l.replace(/^Explanation:\s*/, ""); });
    return { head: head, why: why };
  }

  function callerOf(stack) {
    for (var i = stack.length - 2; i >= 0; i--)
      if (!origin(stack[i])) return shortPath(stack[i].file) + ":" + stack[i].line + " (" + stack[i].name + ")";
    return "(unknown)";
  }

  function reasonBlock(text, cls) { return '<div class="reason ' + cls + '">' + esc(text) + "</div>"; }

  var STEPS = ["capture", "pregrad", "joint", "forward", "backward", "postgrad", "kernel", "other"];

  function viewGraph(name, fileName, line) {
    var g = run.graphByName[name];
    if (!g) return notFound("graph");
    var stage = g.stages.filter(function (s) { return s.file === fileName; })[0] || preferredStage(g);
    var caller = run.callerOfGraph[name];
    var html = ['<div class="card"><div class="crumbs">' + (caller ? link(esc(fnName(caller.fn)), href("fn", caller.fn.id)) +
      " \u203a entry " + (caller.entry + 1) + " \u203a " : "") + "graph</div>"];
    html.push("<h1>" + esc(name) + (g.compile_id ? badge("compile id " + g.compile_id) : "") +
      badge(plural(g.stages.length, "stage file"), "accent") + "</h1>");
    html.push('<div class="note">From Dynamo\'s captured graph through AOTAutograd (joint, forward, backward) and ' +
      "Inductor (post-grad graph, generated kernels): every stage the backend ran.</div>");
    html.push('<div class="pipeline" id="pipeline">');
    var steps = g.stages.slice().sort(function (a, b) { return STEPS.indexOf(a.step) - STEPS.indexOf(b.step); });
    steps.forEach(function (s, i) {
      if (i) html.push('<span class="arrow">\u2192</span>');
      html.push('<a class="step' + (s === stage ? " on" : "") + '" data-stage="' + esc(s.stage) + '" href="' +
        href("graph", name, s.file) + '">' + esc(s.label) + (s.note ? "<small>" + esc(s.note) + "</small>" : "") + "</a>");
    });
    html.push("</div>");
    if (stage) {
      var f = run.fileByName[stage.file];
      html.push('<div class="pane" id="stage-view"><div class="ptitle"><span>' + esc(stage.label) +
        (stage.note ? " (" + esc(stage.note) + ")" : "") + "</span>" + fileLink(f.name) + "</div>" +
        codeBlock(body(f.body), { target: line, full: false }) + "</div>" + pathRow(f.path));
    }
    html.push("</div>");
    return html.join("");
  }

  function preferredStage(g) {
    for (var i = 0; i < STEPS.length; i++)
      for (var j = 0; j < g.stages.length; j++) if (g.stages[j].step === STEPS[i]) return g.stages[j];
    return g.stages[0];
  }

  function viewFile(name, line) {
    var f = run.fileByName[name];
    if (!f) return notFound("file");
    var lang = /\.py$/.test(f.name) ? "python" : "text";
    var graph = run.graphOfFile[f.name], owner = run.fnOfFile[f.name];
    var up = graph ? link(esc(graph.name), href("graph", graph.name, f.name)) :
      owner ? link(esc(fnName(owner)), href("fn", owner.id)) : esc(f.kind.replace("_", " "));
    return '<div class="card"><div class="crumbs">' + link("files", href("files")) + " \u203a " + up +
      "</div><h1>" + esc(f.name) + badge(plural(f.lines, "line")) + "</h1>" + pathRow(f.path, line) +
      '<div class="pane" style="margin-top:10px">' + codeBlock(body(f.body), { target: line, linkify: true, lang: lang, full: true }) +
      "</div></div>";
  }

  function viewFiles() {
    var groups = [["transformed", "Transformed code (decompiled)"], ["full_code", "Explained functions"],
      ["graph", "Graphs"], ["kernel", "Inductor kernels"], ["other", "Other files"]];
    var html = ['<div class="card"><h2>All files</h2><p class="sub-title">' + esc(run.dir) +
      (run.listed ? "<br>The files depyf wrote here" + (run.pid_label ? " in " + esc(run.pid_label) : "") +
        " in its last run (its manifest lists them); other files in the directory are left out." : "") + "</p>"];
    groups.forEach(function (grp) {
      var files = run.files.filter(function (f) { return f.kind === grp[0]; });
      if (!files.length) return;
      html.push("<h4>" + grp[1] + " (" + files.length + ')</h4><table class="list">');
      files.forEach(function (f) {
        html.push('<tr><td>' + fileLink(f.name) + '</td><td class="num note">' + plural(f.lines, "line") +
          '</td><td class="num note">' + Math.max(1, Math.round(f.size / 1024)) + " KB</td></tr>");
      });
      html.push("</table>");
    });
    if (!run.files.length) html.push("<p>No files.</p>");
    return html.join("") + "</div>";
  }

  function viewGraphs(kernelsOnly) {
    var html = ['<div class="card"><h2>' + (kernelsOnly ? "Kernels" : "Graphs") + "</h2>"];
    html.push('<table class="list"><tr><th>Graph</th><th>Called from</th><th>Stages</th></tr>');
    run.graphs.forEach(function (g) {
      var stages = kernelsOnly ? g.stages.filter(function (s) { return s.step === "kernel"; }) : g.stages;
      if (kernelsOnly && !stages.length) return;
      var caller = run.callerOfGraph[g.name];
      html.push("<tr><td>" + link("<b>" + esc(g.name) + "</b>", href("graph", g.name)) + "</td><td>" +
        (caller ? link(esc(fnName(caller.fn)), href("fn", caller.fn.id)) + " entry " + (caller.entry + 1) : "") + "</td><td>" +
        stages.map(function (s) {
          return link(esc(s.label + (s.note ? " " + s.note : "")), href("graph", g.name, s.file));
        }).join(" \u00b7 ") + "</td></tr>");
    });
    html.push("</table>");
    if (!run.graphs.length) html.push("<p>No graphs were compiled.</p>");
    return html.join("") + "</div>";
  }

  function viewBreaks() {
    var html = ['<div class="card"><h2>Graph breaks</h2><p class="sub-title">Where Dynamo had to stop a graph and ' +
      "fall back to Python, and why. The code after a break runs in a resume function.</p>"];
    var n = 0;
    run.functions.forEach(function (fn) {
      fn.compilations.forEach(function (c, k) {
        c.graph_breaks.forEach(function (b) {
          n++;
          html.push('<div class="reason break graph-break"><span class="where">' + link(esc(fnName(fn)) + " entry " + (k + 1), href("fn", fn.id)) +
            " \u2014 " + esc((b.file || "?") + ":" + (b.line || "?")) + (b.code ? "  " + esc(b.code) : "") + "</span><b>" +
            esc(breakSummary(b.reason).head) + "</b>" + (breakSummary(b.reason).why ? "\n" + esc(breakSummary(b.reason).why) : "") + "</div>");
        });
      });
    });
    if (!n) html.push("<p>No graph breaks: every compiled frame became one graph.</p>");
    return html.join("") + "</div>";
  }

  function viewRecompiles() {
    var html = ['<div class="card"><h2>Recompilations</h2><p class="sub-title">A function is compiled again when ' +
      "none of its cache entries' guards hold for a call.</p>"];
    var n = 0;
    run.functions.forEach(function (fn) {
      fn.compilations.forEach(function (c, k) {
        if (!isRecompile(c)) return;
        n++;
        html.push('<div class="item-title">' + link(esc(fnName(fn)) + " \u2014 entry " + (k + 1), href("fn", fn.id)) +
          ' <span class="note">compile id ' + esc(c.compile_id) + "</span></div>");
        (c.recompile_reasons.length ? c.recompile_reasons : ["(reason not recorded)"]).forEach(function (r) {
          html.push(reasonBlock(r, ""));
        });
      });
    });
    if (!n) html.push("<p>No recompilations.</p>");
    return html.join("") + "</div>";
  }

  function viewSearch(q) {
    var html = ['<div class="card"><h2>Search: <span class="mono">' + esc(q) + "</span></h2>"];
    if (q.length < 2) return html.join("") + "<p>Type at least two characters.</p></div>";
    var needle = q.toLowerCase(), files = 0, total = 0, PER_FILE = 8, MAX_FILES = 200;
    run.files.forEach(function (f) {
      if (files >= MAX_FILES) return;
      var text = body(f.body), lower = text.toLowerCase();
      var nameHit = f.name.toLowerCase().indexOf(needle) >= 0;
      var at = lower.indexOf(needle);
      if (at < 0 && !nameHit) return;
      files++;
      var hits = [], count = 0;
      while (at >= 0) {
        count++;
        if (hits.length < PER_FILE) {
          var start = lower.lastIndexOf("\n", at) + 1, end = lower.indexOf("\n", at);
          if (end < 0) end = text.length;
          var lineNo = text.slice(0, start).split("\n").length;
          if (!hits.length || hits[hits.length - 1].n !== lineNo) hits.push({ n: lineNo, text: text.slice(start, end), col: at - start });
        }
        at = lower.indexOf(needle, at + needle.length);
      }
      total += count;
      html.push('<div class="hit-file">' + fileLink(f.name) + ' <span class="note">' + (count ? plural(count, "match", "matches") : "name matches") + "</span></div>");
      hits.forEach(function (h) {
        var t = h.text, c = h.col;
        var shown = esc(t.slice(0, c)) + "<mark>" + esc(t.slice(c, c + q.length)) + "</mark>" + esc(t.slice(c + q.length));
        html.push('<div class="hit" data-go="' + href("file", f.name, String(h.n)) + '"><span class="n">' + h.n + "</span>" + shown + "</div>");
      });
    });
    if (!files) html.push("<p>No file contains \u201c" + esc(q) + "\u201d.</p>");
    else html.splice(1, 0, '<p class="sub-title">' + plural(total, "match", "matches") + " in " + plural(files, "file") + "</p>");
    return html.join("") + "</div>";
  }

  function notFound(what) { return '<div class="card"><h2>No such ' + what + ' in this dump</h2>' + link("Back to the overview", href("overview")) + "</div>"; }

  // ------------------------------------------------------------ routing
  var renders = 0, shown = null;
  function route() {
    var hash = location.hash;
    var parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    var r = parseInt(parts[0], 10);
    if (!isNaN(r) && r !== runIndex && r < DATA.runs.length) { selectRun(r); renderFrame(); }
    // The hash can change again before its first hashchange event is handled (the search
    // box sets it as one types): the later events find their view already shown.
    if (hash === shown) return;
    shown = hash;
    var view = parts[1] || "overview", arg = parts[2], arg2 = parts[3], arg3 = parts[4];
    var html;
    if (view === "fn") html = viewFunction(arg);
    else if (view === "graph") html = viewGraph(arg, arg2, arg3 ? parseInt(arg3, 10) : null);
    else if (view === "file") html = viewFile(arg, arg2 ? parseInt(arg2, 10) : null);
    else if (view === "files") html = viewFiles();
    else if (view === "graphs") html = viewGraphs(false);
    else if (view === "kernels") html = viewGraphs(true);
    else if (view === "breaks") html = viewBreaks();
    else if (view === "recompiles") html = viewRecompiles();
    else if (view === "search") html = viewSearch(arg || "");
    else html = viewOverview();
    var main = $("main");
    main.innerHTML = html;
    main.setAttribute("data-view", view);
    renderSideActive(view, arg);
    var target = main.querySelector(".ln.target");
    if (target) target.scrollIntoView({ block: "center" });
    else window.scrollTo(0, 0);
    // The view of `hash` is complete: whoever drives the page (the tests) waits for these,
    // since a hash change is rendered later, by the hashchange event.
    main.setAttribute("data-route", hash);
    window.depyfReportRenders = ++renders;
  }

  function renderSideActive(view, arg) {
    var current = href(view, arg || "");
    Array.prototype.forEach.call($("side").querySelectorAll("li a"), function (a) {
      a.className = a.getAttribute("href") === current ? "on" : "";
    });
  }

  function onClick(e) {
    var el = e.target.closest("[data-copy],[data-go],[data-run],[data-scroll]");
    if (!el) return;
    if (el.hasAttribute("data-copy")) {
      copy(el.getAttribute("data-copy"));
    } else if (el.hasAttribute("data-run")) {
      selectRun(+el.getAttribute("data-run"));
      renderFrame();
      location.hash = href("overview");
    } else if (el.hasAttribute("data-scroll")) {
      e.preventDefault();
      var t = $(el.getAttribute("data-scroll"));
      if (t) t.scrollIntoView({ block: "start" });
    } else if (!e.target.closest("a")) {
      location.hash = el.getAttribute("data-go");
    }
  }

  function copy(text) {
    function fallback() {
      var ta = document.createElement("textarea");
      ta.value = text; document.body.appendChild(ta); ta.select();
      try { document.execCommand("copy"); } catch (err) { /* nothing more to try */ }
      document.body.removeChild(ta);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).catch(fallback);
    else fallback();
    toast("Copied " + text);
  }

  var searchTimer = null;
  function onInput(e) {
    if (e.target.id !== "search") return;
    clearTimeout(searchTimer);
    var q = e.target.value;
    searchTimer = setTimeout(function () {
      if (q.length) location.hash = href("search", q);
      else location.hash = href("overview");
    }, 200);
  }

  document.addEventListener("click", onClick);
  document.addEventListener("input", onInput);
  window.addEventListener("hashchange", route);
  var first = parseInt(location.hash.replace(/^#\/?/, ""), 10);
  selectRun(isNaN(first) ? 0 : first);
  renderFrame();
  route();
  window.depyfReportRenderedAt = performance.now();
})();
