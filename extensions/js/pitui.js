// The virtual modules' pieces of pi's terminal UI (@mariozechner/pi-tui
// 0.73.1 and the UI helpers of @mariozechner/pi-coding-agent) that pi
// extensions import. knightcode has no terminal: the components exist so
// that extensions load, build and subclass them, and render plain lines
// (no styling) when asked; nothing draws them (the ctx.ui members that
// would show them are log-only: package extensions' members.go). The
// text helpers (visibleWidth, truncateToWidth, matchesKey, parseKey,
// fuzzyFilter, Key) work as pi's do for what they cover. Running this
// program yields a function of the host kc returning the module exports.
(function (kc) {
  "use strict";

  var CURSOR_MARKER = "\x1b_pi:c\x07";
  function visibleWidth(s) { return kc.visibleWidth(String(s)); }
  function truncateToWidth(s, width, ellipsis, pad) {
    var out = kc.truncate(String(s), Math.max(0, width | 0), ellipsis === undefined ? "..." : String(ellipsis));
    if (pad) out += " ".repeat(Math.max(0, (width | 0) - visibleWidth(out)));
    return out;
  }
  // wrapLine cuts a line into pieces of at most width columns, at spaces
  // where it can.
  function wrapLine(line, width) {
    if (width <= 0 || visibleWidth(line) <= width) return [line];
    var out = [], cur = "";
    line.split(/(\s+)/).forEach(function (w) {
      if (visibleWidth(cur + w) <= width) { cur += w; return; }
      if (cur.trim() !== "") out.push(cur.replace(/\s+$/, ""));
      cur = w.trim() === "" ? "" : w;
      while (visibleWidth(cur) > width) {
        var head = kc.truncate(cur, width, "");
        out.push(head);
        cur = cur.slice(head.length);
      }
    });
    if (cur !== "") out.push(cur);
    return out;
  }
  function wrapText(text, width) {
    var lines = [];
    String(text).split("\n").forEach(function (l) { lines = lines.concat(wrapLine(l, width)); });
    return lines;
  }

  // --- keys: pi-tui's key ids ("ctrl+c", "escape") and the terminal input
  // they stand for (legacy sequences; the kitty protocol's are not read).
  var Key = { escape: "escape", esc: "esc", enter: "enter", return: "return", tab: "tab", space: "space",
    backspace: "backspace", delete: "delete", insert: "insert", clear: "clear", home: "home", end: "end",
    pageUp: "pageUp", pageDown: "pageDown", up: "up", down: "down", left: "left", right: "right",
    backtick: "`", hyphen: "-", equals: "=", leftbracket: "[", rightbracket: "]", backslash: "\\", semicolon: ";",
    quote: "'", comma: ",", period: ".", slash: "/", exclamation: "!", at: "@", hash: "#", dollar: "$",
    percent: "%", caret: "^", ampersand: "&", asterisk: "*", leftparen: "(", rightparen: ")", underscore: "_",
    plus: "+", pipe: "|", tilde: "~", leftbrace: "{", rightbrace: "}", colon: ":", lessthan: "<",
    greaterthan: ">", question: "?" };
  for (var f = 1; f <= 12; f++) Key["f" + f] = "f" + f;
  [["ctrl"], ["shift"], ["alt"], ["super"], ["ctrl", "shift"], ["shift", "ctrl"], ["ctrl", "alt"], ["alt", "ctrl"],
    ["shift", "alt"], ["alt", "shift"], ["ctrl", "super"], ["super", "ctrl"], ["shift", "super"], ["super", "shift"],
    ["alt", "super"], ["super", "alt"], ["ctrl", "shift", "alt"], ["ctrl", "shift", "super"]].forEach(function (mods) {
    var name = mods[0] + mods.slice(1).map(function (m) { return m[0].toUpperCase() + m.slice(1); }).join("");
    Key[name] = function (key) { return mods.join("+") + "+" + key; };
  });
  var sequences = { "\x1b": "escape", "\r": "enter", "\n": "enter", "\t": "tab", " ": "space", "\x7f": "backspace",
    "\x08": "backspace", "\x1b[3~": "delete", "\x1b[2~": "insert", "\x1b[H": "home", "\x1bOH": "home", "\x1b[1~": "home",
    "\x1b[F": "end", "\x1bOF": "end", "\x1b[4~": "end", "\x1b[5~": "pageUp", "\x1b[6~": "pageDown",
    "\x1b[A": "up", "\x1bOA": "up", "\x1b[B": "down", "\x1bOB": "down", "\x1b[C": "right", "\x1bOC": "right",
    "\x1b[D": "left", "\x1bOD": "left", "\x1b[Z": "shift+tab", "\x1bOP": "f1", "\x1bOQ": "f2", "\x1bOR": "f3",
    "\x1bOS": "f4", "\x1b[15~": "f5", "\x1b[17~": "f6", "\x1b[18~": "f7", "\x1b[19~": "f8", "\x1b[20~": "f9",
    "\x1b[21~": "f10", "\x1b[23~": "f11", "\x1b[24~": "f12", "\x1b\r": "alt+enter", "\x1b\x7f": "alt+backspace" };
  // parseKey is the key id of terminal input data, or undefined.
  function parseKey(data) {
    data = String(data);
    if (sequences[data]) return sequences[data];
    if (data.length === 1) {
      var c = data.charCodeAt(0);
      if (c >= 1 && c <= 26) return "ctrl+" + String.fromCharCode(c + 96);
      if (c >= 32 && c < 127) return data >= "A" && data <= "Z" ? "shift+" + data.toLowerCase() : data;
    }
    if (data.length === 2 && data[0] === "\x1b") {
      var k = parseKey(data[1]);
      return k ? "alt+" + k : undefined;
    }
    return undefined;
  }
  function normalizeKeyId(id) {
    var parts = String(id).toLowerCase().split("+"), key = parts.pop();
    if (key === "" && parts.length && parts[parts.length - 1] === "") { parts.pop(); key = "+"; }
    if (key === "esc") key = "escape";
    if (key === "return") key = "enter";
    if (key === "pageup") key = "pageUp";
    if (key === "pagedown") key = "pageDown";
    return parts.filter(function (p) { return p; }).sort().concat([key]).join("+");
  }
  function matchesKey(data, keyId) {
    var k = parseKey(data);
    return k !== undefined && normalizeKeyId(k) === normalizeKeyId(keyId);
  }
  // isKeyRelease: a kitty-protocol key release event (event type 3).
  function isKeyRelease(data) { return /^\x1b\[[\d;]*:3[u~A-Z]$/.test(String(data)); }
  function isKeyRepeat(data) { return /^\x1b\[[\d;]*:2[u~A-Z]$/.test(String(data)); }

  // fuzzyFilter keeps the items whose text holds every token of query in
  // order (pi-tui's fuzzy match), best first.
  function fuzzyMatch(q, text) {
    q = q.toLowerCase(); var t = text.toLowerCase();
    var qi = 0, score = 0, last = -1;
    for (var i = 0; i < t.length && qi < q.length; i++) {
      if (t[i] !== q[qi]) continue;
      score += last === i - 1 ? -5 : last >= 0 ? (i - last - 1) * 2 : 0;
      if (i === 0 || /[\s\-_./:]/.test(t[i - 1])) score -= 10;
      score += i * 0.1; last = i; qi++;
    }
    return qi < q.length ? null : q === t ? score - 100 : score;
  }
  function fuzzyFilter(items, query, getText) {
    var tokens = String(query).trim().split(/\s+/).filter(function (x) { return x; });
    if (!tokens.length) return items;
    var scored = [];
    items.forEach(function (it) {
      var text = getText(it), total = 0;
      for (var i = 0; i < tokens.length; i++) {
        var s = fuzzyMatch(tokens[i], text);
        if (s === null) return;
        total += s;
      }
      scored.push([total, it]);
    });
    return scored.sort(function (a, b) { return a[0] - b[0]; }).map(function (p) { return p[1]; });
  }

  // --- components: render(width) gives plain lines.
  class Component {
    render() { return []; }
    invalidate() {}
    handleInput() {}
  }
  class Text extends Component {
    constructor(text, paddingX, paddingY, customBgFn) {
      super();
      this.text = text === undefined ? "" : String(text);
      this.paddingX = paddingX === undefined ? 1 : paddingX;
      this.paddingY = paddingY === undefined ? 1 : paddingY;
      this.customBgFn = customBgFn;
    }
    setText(t) { this.text = String(t); }
    setCustomBgFn(f) { this.customBgFn = f; }
    render(width) {
      if (this.text.trim() === "") return [];
      var pad = " ".repeat(this.paddingX), inner = Math.max(1, width - 2 * this.paddingX);
      var lines = wrapText(this.text, inner).map(function (l) { return pad + l; });
      var blank = [];
      for (var i = 0; i < this.paddingY; i++) blank.push("");
      return blank.concat(lines, blank);
    }
  }
  class TruncatedText extends Text {
    render(width) { return [truncateToWidth(this.text.split("\n")[0], width)]; }
  }
  class Spacer extends Component {
    constructor(lines) { super(); this.lines = lines === undefined ? 1 : lines; }
    setLines(n) { this.lines = n; }
    render() { var out = []; for (var i = 0; i < this.lines; i++) out.push(""); return out; }
  }
  class Container extends Component {
    constructor() { super(); this.children = []; }
    addChild(c) { this.children.push(c); }
    removeChild(c) { this.children = this.children.filter(function (x) { return x !== c; }); }
    clear() { this.children = []; }
    invalidate() { this.children.forEach(function (c) { if (c && c.invalidate) c.invalidate(); }); }
    render(width) {
      var out = [];
      this.children.forEach(function (c) { out = out.concat(c.render(width)); });
      return out;
    }
  }
  class Box extends Container {
    constructor(paddingX, paddingY, bgFn) {
      super();
      this.paddingX = paddingX === undefined ? 1 : paddingX;
      this.paddingY = paddingY === undefined ? 1 : paddingY;
      this.bgFn = bgFn;
    }
    setBgFn(f) { this.bgFn = f; }
    render(width) {
      var pad = " ".repeat(this.paddingX), blank = [];
      for (var i = 0; i < this.paddingY; i++) blank.push("");
      return blank.concat(super.render(Math.max(1, width - 2 * this.paddingX)).map(function (l) { return pad + l; }), blank);
    }
  }
  // Markdown renders its text as it is (no Markdown styling).
  class Markdown extends Text {
    constructor(text, paddingX, paddingY, theme) { super(text, paddingX, paddingY); this.theme = theme; }
  }
  class Loader extends Text {
    constructor(tui, spinnerColorFn, messageColorFn, message) { super(message || "Loading...", 1, 0); }
    start() {}
    stop() {}
    setMessage(m) { this.setText(m); }
  }
  class CancellableLoader extends Loader {
    constructor(...args) { super(...args); this.onAbort = undefined; this.aborted = false; this._ac = new AbortController(); }
    get signal() { return this._ac.signal; }
    dispose() {}
  }
  class Input extends Component {
    constructor() { super(); this.value = ""; this.focused = false; this.onSubmit = undefined; this.onEscape = undefined; }
    getValue() { return this.value; }
    setValue(v) { this.value = String(v); }
    render(width) { return [truncateToWidth("> " + this.value, width)]; }
  }
  class Editor extends Component {
    constructor(tui, theme, options) {
      super();
      this.tui = tui; this.theme = theme; this.options = options || {};
      this._text = ""; this.focused = false; this.onSubmit = undefined; this.onChange = undefined; this.disableSubmit = false;
    }
    getText() { return this._text; }
    setText(t) { this._text = String(t); if (this.onChange) this.onChange(this._text); }
    insertTextAtCursor(t) { this.setText(this._text + t); }
    getExpandedText() { return this._text; }
    addToHistory() {}
    setAutocompleteProvider() {}
    isShowingAutocomplete() { return false; }
    setPaddingX() {}
    getPaddingX() { return 0; }
    render(width) { return wrapText(this._text, width); }
  }
  class SelectList extends Component {
    constructor(items, maxVisible, theme) {
      super();
      this.items = items || []; this.filtered = this.items; this.maxVisible = maxVisible || 5; this.theme = theme;
      this.selectedIndex = 0; this.onSelect = undefined; this.onCancel = undefined; this.onSelectionChange = undefined;
    }
    setFilter(q) {
      this.filtered = fuzzyFilter(this.items, q, function (i) { return i.label || i.value; });
      this.selectedIndex = 0;
    }
    setSelectedIndex(i) { this.selectedIndex = Math.max(0, Math.min(i, this.filtered.length - 1)); }
    getSelectedItem() { return this.filtered[this.selectedIndex] || null; }
    render(width) {
      var self = this;
      return this.filtered.slice(0, this.maxVisible).map(function (it, i) {
        return truncateToWidth((i === self.selectedIndex ? "→ " : "  ") + (it.label || it.value) + (it.description ? "  " + it.description : ""), width);
      });
    }
  }
  class SettingsList extends Component {
    constructor(items, maxVisible, theme, onChange, onCancel, options) {
      super();
      this.items = items || []; this.maxVisible = maxVisible; this.theme = theme; this.onChange = onChange; this.onCancel = onCancel;
      this.selectedIndex = 0;
    }
    updateValue(id, value) { this.items.forEach(function (it) { if (it.id === id) it.currentValue = value; }); }
    render(width) {
      return this.items.map(function (it) { return truncateToWidth(it.label + ": " + it.currentValue, width); });
    }
  }

  // pi-coding-agent's UI components.
  class DynamicBorder extends Component {
    constructor(color) { super(); this.color = color; }
    render(width) { return ["─".repeat(Math.max(1, width))]; }
  }
  class BorderedLoader extends Container {
    constructor(tui, theme, message, options) {
      super();
      this._ac = new AbortController(); this.onAbort = undefined;
      this.addChild(new Text(message || "", 1, 0));
    }
    get signal() { return this._ac.signal; }
    handleInput(data) { if (matchesKey(data, "escape")) { this._ac.abort(); if (this.onAbort) this.onAbort(); } }
    dispose() {}
  }
  class CustomEditor extends Editor {
    constructor(tui, theme, keybindings, options) { super(tui, theme, options); this.keybindings = keybindings; this.actionHandlers = new Map(); }
    onAction(action, handler) { this.actionHandlers.set(action, handler); }
  }
  var plainTheme = new Proxy({}, { get: function (t, k) {
    if (typeof k === "symbol") return undefined;
    return function (s) { return s === undefined ? "" : String(s); };
  } });
  function getMarkdownTheme() { return plainTheme; }
  function getSettingsListTheme() { return plainTheme; }
  function getSelectListTheme() { return plainTheme; }
  function getEditorTheme() { return { borderColor: plainTheme.border, selectList: plainTheme }; }

  // pi-coding-agent's helpers (dist/core/tools/truncate.js,
  // file-mutation-queue.js, messages.js, compaction/utils.js).
  var DEFAULT_MAX_LINES = 2000, DEFAULT_MAX_BYTES = 50 * 1024;
  function formatSize(bytes) {
    if (bytes < 1024) return bytes + "B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + "KB";
    return (bytes / (1024 * 1024)).toFixed(1) + "MB";
  }
  function truncateHead(content, options) {
    options = options || {};
    var maxLines = options.maxLines === undefined ? DEFAULT_MAX_LINES : options.maxLines;
    var maxBytes = options.maxBytes === undefined ? DEFAULT_MAX_BYTES : options.maxBytes;
    var bytes = function (s) { return Buffer.byteLength(s); };
    var totalBytes = bytes(content), lines = content.split("\n"), totalLines = lines.length;
    var base = { totalLines: totalLines, totalBytes: totalBytes, lastLinePartial: false, maxLines: maxLines, maxBytes: maxBytes };
    if (totalLines <= maxLines && totalBytes <= maxBytes) {
      return Object.assign({ content: content, truncated: false, truncatedBy: null, outputLines: totalLines, outputBytes: totalBytes, firstLineExceedsLimit: false }, base);
    }
    if (bytes(lines[0]) > maxBytes) {
      return Object.assign({ content: "", truncated: true, truncatedBy: "bytes", outputLines: 0, outputBytes: 0, firstLineExceedsLimit: true }, base);
    }
    var out = [], n = 0, by = "lines";
    for (var i = 0; i < lines.length && i < maxLines; i++) {
      var lb = bytes(lines[i]) + (i > 0 ? 1 : 0);
      if (n + lb > maxBytes) { by = "bytes"; break; }
      out.push(lines[i]); n += lb;
    }
    if (out.length >= maxLines && n <= maxBytes) by = "lines";
    var text = out.join("\n");
    return Object.assign({ content: text, truncated: true, truncatedBy: by, outputLines: out.length, outputBytes: bytes(text), firstLineExceedsLimit: false }, base);
  }
  var queues = new Map();
  function withFileMutationQueue(filePath, fn) {
    var key = kc.resolvePath(String(filePath));
    var current = queues.get(key) || Promise.resolve();
    var release;
    var next = new Promise(function (r) { release = r; });
    var chained = current.then(function () { return next; });
    queues.set(key, chained);
    return current.then(fn).finally(function () {
      release();
      if (queues.get(key) === chained) queues.delete(key);
    });
  }
  // convertToLlm turns session messages into model messages: custom
  // messages become user messages; user, assistant and toolResult
  // messages stay; the others (bash executions, summaries, which
  // knightcode's extensions are not given) are dropped.
  function convertToLlm(messages) {
    return messages.map(function (m) {
      switch (m.role) {
        case "custom":
          return { role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp };
        case "user": case "assistant": case "toolResult": return m;
      }
      return undefined;
    }).filter(function (m) { return m !== undefined; });
  }
  function textOf(content) {
    return typeof content === "string" ? content : content.filter(function (c) { return c.type === "text"; }).map(function (c) { return c.text; }).join("");
  }
  function serializeConversation(messages) {
    var parts = [];
    messages.forEach(function (msg) {
      if (msg.role === "user") {
        var t = textOf(msg.content);
        if (t) parts.push("[User]: " + t);
      } else if (msg.role === "assistant") {
        var text = [], thinking = [], calls = [];
        msg.content.forEach(function (b) {
          if (b.type === "text") text.push(b.text);
          else if (b.type === "thinking") thinking.push(b.thinking);
          else if (b.type === "toolCall") {
            calls.push(b.name + "(" + Object.keys(b.arguments).map(function (k) { return k + "=" + JSON.stringify(b.arguments[k]); }).join(", ") + ")");
          }
        });
        if (thinking.length) parts.push("[Assistant thinking]: " + thinking.join("\n"));
        if (text.length) parts.push("[Assistant]: " + text.join("\n"));
        if (calls.length) parts.push("[Assistant tool calls]: " + calls.join("; "));
      } else if (msg.role === "toolResult") {
        var r = textOf(msg.content);
        if (r.length > 2000) r = r.slice(0, 2000) + "\n\n[... " + (r.length - 2000) + " more characters truncated]";
        if (r) parts.push("[Tool result]: " + r);
      }
    });
    return parts.join("\n\n");
  }
  // createXTool: the definitions of pi's built-in tools, for extensions
  // that wrap or re-register them. Their execute throws: knightcode's own
  // tools are not callable from extensions.
  function builtinTool(name, description, properties, required) {
    return function () {
      return { name: name, label: name, description: description,
        parameters: { type: "object", properties: properties, required: required },
        execute: function () { throw new Error("knightcode's built-in " + name + " tool cannot be run from an extension"); } };
    };
  }
  var str = { type: "string" }, num = { type: "number" };
  var builtinTools = {
    createReadTool: builtinTool("read", "Read a file", { path: str, offset: num, limit: num }, ["path"]),
    createBashTool: builtinTool("bash", "Run a bash command", { command: str, timeout: num }, ["command"]),
    createEditTool: builtinTool("edit", "Edit a file", { path: str, edits: { type: "array" } }, ["path", "edits"]),
    createWriteTool: builtinTool("write", "Write a file", { path: str, content: str }, ["path", "content"]),
    createGrepTool: builtinTool("grep", "Search file contents", { pattern: str, path: str }, ["pattern"]),
    createFindTool: builtinTool("find", "Find files", { pattern: str, path: str }, ["pattern"]),
    createLsTool: builtinTool("ls", "List a folder", { path: str }, []),
  };

  return {
    tui: { CURSOR_MARKER: CURSOR_MARKER, visibleWidth: visibleWidth, truncateToWidth: truncateToWidth, wrapTextWithAnsi: wrapText,
      Key: Key, matchesKey: matchesKey, parseKey: parseKey, isKeyRelease: isKeyRelease, isKeyRepeat: isKeyRepeat,
      fuzzyFilter: fuzzyFilter, fuzzyMatch: function (q, t) { var s = fuzzyMatch(q, t); return { matches: s !== null, score: s || 0 }; },
      Text: Text, TruncatedText: TruncatedText, Spacer: Spacer, Container: Container, Box: Box, Markdown: Markdown,
      Loader: Loader, CancellableLoader: CancellableLoader, Input: Input, Editor: Editor, SelectList: SelectList,
      SettingsList: SettingsList },
    coding: { DynamicBorder: DynamicBorder, BorderedLoader: BorderedLoader, CustomEditor: CustomEditor,
      getMarkdownTheme: getMarkdownTheme, getSettingsListTheme: getSettingsListTheme,
      getSelectListTheme: getSelectListTheme, getEditorTheme: getEditorTheme,
      DEFAULT_MAX_LINES: DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES: DEFAULT_MAX_BYTES, formatSize: formatSize,
      truncateHead: truncateHead, withFileMutationQueue: withFileMutationQueue, convertToLlm: convertToLlm,
      serializeConversation: serializeConversation, createReadTool: builtinTools.createReadTool,
      createBashTool: builtinTools.createBashTool, createEditTool: builtinTools.createEditTool,
      createWriteTool: builtinTools.createWriteTool, createGrepTool: builtinTools.createGrepTool,
      createFindTool: builtinTools.createFindTool, createLsTool: builtinTools.createLsTool },
  };
})
