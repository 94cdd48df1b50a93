// The JavaScript half of knightcode's extension runtime (package
// extensions): the Node subset's pure-JavaScript pieces (events, util,
// Buffer, URL, timers, AbortController, TextEncoder), typebox and the
// virtual modules' helpers. What touches the system (fs, os, crypto,
// encodings, path, URL parsing, timers, the log) is the Go host `kc`.
// Running this program yields a function of kc that installs the globals
// and returns the module factories.
(function (kc) {
  "use strict";
  var G = globalThis;

  function nodeError(code, message) {
    var e = new Error(message);
    e.code = code;
    return e;
  }

  // --- AbortController / AbortSignal
  function AbortSignal() {
    this.aborted = false;
    this.reason = undefined;
    this.onabort = null;
    this._listeners = [];
  }
  AbortSignal.prototype.addEventListener = function (type, f) {
    if (type === "abort" && typeof f === "function") this._listeners.push(f);
  };
  AbortSignal.prototype.removeEventListener = function (type, f) {
    this._listeners = this._listeners.filter(function (x) { return x !== f; });
  };
  AbortSignal.prototype.throwIfAborted = function () {
    if (this.aborted) throw this.reason;
  };
  AbortSignal.prototype._abort = function (reason) {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? nodeError("ABORT_ERR", "This operation was aborted") : reason;
    if (this.reason instanceof Error && this.reason.name === "Error") this.reason.name = "AbortError";
    var ev = { type: "abort", target: this };
    var fs = (this.onabort ? [this.onabort] : []).concat(this._listeners);
    for (var i = 0; i < fs.length; i++) {
      try { fs[i].call(this, ev); } catch (e) { kc.log("error", "an abort listener threw: " + String(e && e.stack || e)); }
    }
  };
  AbortSignal.abort = function (reason) { var s = new AbortSignal(); s._abort(reason); return s; };
  AbortSignal.timeout = function (ms) {
    var s = new AbortSignal();
    setTimeout(function () { var e = new Error("The operation timed out"); e.name = "TimeoutError"; s._abort(e); }, ms);
    return s;
  };
  function AbortController() { this.signal = new AbortSignal(); }
  AbortController.prototype.abort = function (reason) { this.signal._abort(reason); };
  G.AbortSignal = AbortSignal;
  G.AbortController = AbortController;

  // --- timers (the Go host runs them on the event loop)
  function Timeout(id) { this._id = id; }
  Timeout.prototype.ref = function () { return this; };
  Timeout.prototype.unref = function () { return this; };
  Timeout.prototype.hasRef = function () { return true; };
  Timeout.prototype[Symbol.toPrimitive] = function () { return this._id; };
  function timer(repeat) {
    return function (fn, ms) {
      if (typeof fn !== "function") throw new TypeError("The callback must be a function");
      var args = Array.prototype.slice.call(arguments, 2);
      return new Timeout(kc.setTimer(function () { fn.apply(undefined, args); }, Number(ms) || 0, repeat));
    };
  }
  function clearTimer(t) {
    if (t == null) return;
    kc.clearTimer(typeof t === "object" ? t._id : Number(t));
  }
  G.setTimeout = timer(false);
  G.setInterval = timer(true);
  G.setImmediate = function (fn) {
    var args = Array.prototype.slice.call(arguments, 1);
    return new Timeout(kc.setTimer(function () { fn.apply(undefined, args); }, 0, false));
  };
  G.clearTimeout = G.clearInterval = G.clearImmediate = clearTimer;
  G.queueMicrotask = function (fn) { Promise.resolve().then(fn); };
  var timers = { setTimeout: G.setTimeout, setInterval: G.setInterval, setImmediate: G.setImmediate,
    clearTimeout: clearTimer, clearInterval: clearTimer, clearImmediate: clearTimer };

  // --- util
  function inspect(v, opts, depth, seen) {
    depth = depth || 0;
    seen = seen || [];
    var max = opts && opts.depth !== undefined ? opts.depth : 2;
    switch (typeof v) {
      case "string": return depth > 0 ? JSON.stringify(v).replace(/^"|"$/g, "'") : v;
      case "number": case "boolean": case "undefined": return String(v);
      case "bigint": return String(v) + "n";
      case "symbol": return v.toString();
      case "function": return "[Function: " + (v.name || "(anonymous)") + "]";
    }
    if (v === null) return "null";
    if (v instanceof Error) return v.stack || String(v);
    if (v instanceof Date) return v.toISOString();
    if (v instanceof RegExp) return String(v);
    if (seen.indexOf(v) >= 0) return "[Circular]";
    if (depth > max) return Array.isArray(v) ? "[Array]" : "[Object]";
    seen = seen.concat([v]);
    if (Array.isArray(v)) {
      return "[ " + v.map(function (x) { return inspect(x, opts, depth + 1, seen); }).join(", ") + " ]";
    }
    if (v instanceof Map) {
      var ms = [];
      v.forEach(function (val, k) { ms.push(inspect(k, opts, depth + 1, seen) + " => " + inspect(val, opts, depth + 1, seen)); });
      return "Map(" + v.size + ") { " + ms.join(", ") + " }";
    }
    if (v instanceof Set) {
      var ss = [];
      v.forEach(function (val) { ss.push(inspect(val, opts, depth + 1, seen)); });
      return "Set(" + v.size + ") { " + ss.join(", ") + " }";
    }
    var keys = Object.keys(v);
    if (keys.length === 0) return "{}";
    return "{ " + keys.map(function (k) {
      var name = /^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k).replace(/^"|"$/g, "'");
      return name + ": " + inspect(v[k], opts, depth + 1, seen);
    }).join(", ") + " }";
  }
  function format(f) {
    var args = Array.prototype.slice.call(arguments, 1);
    var out;
    if (typeof f !== "string") {
      args.unshift(f);
      out = "";
    } else {
      out = f.replace(/%[sdifjoOc%]/g, function (m) {
        if (m === "%%") return "%";
        if (args.length === 0) return m;
        var a = args.shift();
        switch (m) {
          case "%s": return typeof a === "string" ? a : inspect(a, { depth: 0 }, 1);
          case "%d": case "%i": return typeof a === "object" ? "NaN" : String(m === "%i" ? parseInt(a, 10) : Number(a));
          case "%f": return String(parseFloat(a));
          case "%j": try { return JSON.stringify(a); } catch (e) { return "[Circular]"; }
          case "%o": case "%O": return inspect(a, { depth: 4 }, 1);
          case "%c": return "";
        }
        return m;
      });
    }
    for (var i = 0; i < args.length; i++) {
      out += (out === "" && typeof f !== "string" && i === 0 ? "" : " ") + (typeof args[i] === "string" ? args[i] : inspect(args[i]));
    }
    return out;
  }
  var customPromisify = Symbol.for("nodejs.util.promisify.custom");
  function promisify(fn) {
    if (typeof fn !== "function") throw new TypeError('The "original" argument must be of type function');
    if (fn[customPromisify]) return fn[customPromisify];
    return function () {
      var self = this, args = Array.prototype.slice.call(arguments);
      return new Promise(function (resolve, reject) {
        fn.apply(self, args.concat([function (err, value) { err ? reject(err) : resolve(value); }]));
      });
    };
  }
  promisify.custom = customPromisify;
  function inherits(ctor, superCtor) {
    Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
    Object.setPrototypeOf(ctor, superCtor);
    ctor.super_ = superCtor;
  }
  function deprecate(fn) { return fn; }
  function isDeepStrictEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return a !== a && b !== b;
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    var ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (var i = 0; i < ka.length; i++) {
      if (!Object.prototype.hasOwnProperty.call(b, ka[i]) || !isDeepStrictEqual(a[ka[i]], b[ka[i]])) return false;
    }
    return true;
  }

  // --- console (to the server log)
  function logger(level) {
    return function () { kc.log(level, format.apply(undefined, arguments)); };
  }
  G.console = { log: logger("info"), info: logger("info"), debug: logger("debug"), trace: logger("debug"),
    warn: logger("warn"), error: logger("error"), dir: function (v) { kc.log("info", inspect(v)); } };

  // --- events
  function EventEmitter() { this._events = Object.create(null); this._max = 10; }
  EventEmitter.prototype._add = function (name, fn, prepend, once) {
    if (typeof fn !== "function") throw new TypeError('The "listener" argument must be of type function');
    if (!this._events) this._events = Object.create(null);
    var l = this._events[name] || (this._events[name] = []);
    var entry = { fn: fn, once: once };
    prepend ? l.unshift(entry) : l.push(entry);
    return this;
  };
  EventEmitter.prototype.on = EventEmitter.prototype.addListener = function (n, f) { return this._add(n, f, false, false); };
  EventEmitter.prototype.prependListener = function (n, f) { return this._add(n, f, true, false); };
  EventEmitter.prototype.once = function (n, f) { return this._add(n, f, false, true); };
  EventEmitter.prototype.prependOnceListener = function (n, f) { return this._add(n, f, true, true); };
  EventEmitter.prototype.off = EventEmitter.prototype.removeListener = function (name, fn) {
    var l = this._events && this._events[name];
    if (!l) return this;
    for (var i = l.length - 1; i >= 0; i--) {
      if (l[i].fn === fn) { l.splice(i, 1); break; }
    }
    if (l.length === 0) delete this._events[name];
    return this;
  };
  EventEmitter.prototype.removeAllListeners = function (name) {
    if (name === undefined) this._events = Object.create(null); else if (this._events) delete this._events[name];
    return this;
  };
  EventEmitter.prototype.emit = function (name) {
    var l = this._events && this._events[name];
    var args = Array.prototype.slice.call(arguments, 1);
    if (!l || l.length === 0) {
      if (name === "error") throw args[0] instanceof Error ? args[0] : new Error("Unhandled error. (" + inspect(args[0]) + ")");
      return false;
    }
    var copy = l.slice();
    for (var i = 0; i < copy.length; i++) {
      if (copy[i].once) this.removeListener(name, copy[i].fn);
      copy[i].fn.apply(this, args);
    }
    return true;
  };
  EventEmitter.prototype.listeners = function (name) {
    return ((this._events && this._events[name]) || []).map(function (e) { return e.fn; });
  };
  EventEmitter.prototype.rawListeners = EventEmitter.prototype.listeners;
  EventEmitter.prototype.listenerCount = function (name) { return ((this._events && this._events[name]) || []).length; };
  EventEmitter.prototype.eventNames = function () { return this._events ? Object.keys(this._events) : []; };
  EventEmitter.prototype.setMaxListeners = function (n) { this._max = n; return this; };
  EventEmitter.prototype.getMaxListeners = function () { return this._max; };
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.defaultMaxListeners = 10;
  EventEmitter.once = function (emitter, name) {
    return new Promise(function (resolve) { emitter.once(name, function () { resolve(Array.prototype.slice.call(arguments)); }); });
  };

  // --- Buffer (bytes of a Uint8Array; encodings in Go)
  function toBytes(v) {
    if (v instanceof Uint8Array) return v;
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    throw new TypeError("expected a Buffer, Uint8Array or ArrayBuffer");
  }
  class Buffer extends Uint8Array {
    static from(v, enc, length) {
      if (typeof v === "string") return new Buffer(kc.encode(v, enc || "utf8"));
      if (v instanceof ArrayBuffer) return new Buffer(v, enc || 0, length === undefined ? v.byteLength - (enc || 0) : length);
      if (ArrayBuffer.isView(v) || Array.isArray(v)) {
        var b = new Buffer(v.length);
        b.set(ArrayBuffer.isView(v) && !(v instanceof Uint8Array) ? toBytes(v) : v);
        return b;
      }
      if (v && v.type === "Buffer" && Array.isArray(v.data)) return Buffer.from(v.data);
      throw new TypeError("The first argument must be a string, Buffer, ArrayBuffer, Array, or array-like object");
    }
    static alloc(n, fill, enc) {
      var b = new Buffer(n);
      if (fill !== undefined) b.fill(typeof fill === "string" ? Buffer.from(fill, enc)[0] : fill);
      return b;
    }
    static allocUnsafe(n) { return new Buffer(n); }
    static isBuffer(v) { return v instanceof Buffer; }
    static isEncoding(e) { return kc.isEncoding(String(e)); }
    static byteLength(v, enc) { return typeof v === "string" ? kc.encode(v, enc || "utf8").byteLength : toBytes(v).byteLength; }
    static concat(list, total) {
      if (total === undefined) total = list.reduce(function (n, b) { return n + b.length; }, 0);
      var out = Buffer.alloc(total), off = 0;
      for (var i = 0; i < list.length && off < total; i++) {
        var b = toBytes(list[i]).subarray(0, total - off);
        out.set(b, off);
        off += b.length;
      }
      return out;
    }
    static compare(a, b) { return a.compare(b); }
    toString(enc, start, end) { return kc.decode(this.subarray(start || 0, end === undefined ? this.length : end), enc || "utf8"); }
    toJSON() { return { type: "Buffer", data: Array.prototype.slice.call(this) }; }
    equals(o) { return this.compare(o) === 0; }
    compare(o) {
      o = toBytes(o);
      var n = Math.min(this.length, o.length);
      for (var i = 0; i < n; i++) { if (this[i] !== o[i]) return this[i] < o[i] ? -1 : 1; }
      return this.length === o.length ? 0 : this.length < o.length ? -1 : 1;
    }
    slice(s, e) { return this.subarray(s, e); }
    copy(target, ts, ss, se) {
      var src = this.subarray(ss || 0, se === undefined ? this.length : se);
      ts = ts || 0;
      src = src.subarray(0, Math.max(0, target.length - ts));
      target.set(src, ts);
      return src.length;
    }
    write(s, off, len, enc) {
      var b = Buffer.from(s, typeof len === "string" ? len : enc).subarray(0, len === undefined || typeof len === "string" ? undefined : len);
      off = off || 0;
      b = b.subarray(0, this.length - off);
      this.set(b, off);
      return b.length;
    }
  }
  G.Buffer = Buffer;

  // --- TextEncoder / TextDecoder
  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(s) { return new Uint8Array(kc.encode(String(s === undefined ? "" : s), "utf8")); }
  }
  class TextDecoder {
    constructor(label) {
      var l = String(label === undefined ? "utf-8" : label).toLowerCase();
      if (l !== "utf-8" && l !== "utf8") throw new RangeError('The "' + label + '" encoding is not supported');
    }
    get encoding() { return "utf-8"; }
    decode(v) { return v === undefined ? "" : kc.decode(toBytes(v), "utf8"); }
  }
  G.TextEncoder = TextEncoder;
  G.TextDecoder = TextDecoder;

  // --- URL / URLSearchParams (parsing in Go)
  function formEncode(s) {
    return encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()~]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    });
  }
  function formDecode(s) { return decodeURIComponent(s.replace(/\+/g, " ")); }
  class URLSearchParams {
    constructor(init) {
      this._list = [];
      this._url = null;
      if (init == null) return;
      if (typeof init === "string") {
        this._parse(init);
      } else if (typeof init[Symbol.iterator] === "function") {
        for (var p of init) this._list.push([String(p[0]), String(p[1])]);
      } else {
        for (var k of Object.keys(init)) this._list.push([k, String(init[k])]);
      }
    }
    _parse(s) {
      this._list = [];
      s = s.replace(/^\?/, "");
      if (s === "") return;
      for (var part of s.split("&")) {
        if (part === "") continue;
        var i = part.indexOf("=");
        this._list.push(i < 0 ? [formDecode(part), ""] : [formDecode(part.slice(0, i)), formDecode(part.slice(i + 1))]);
      }
    }
    _changed() { if (this._url) this._url._setSearch(this.toString()); }
    get size() { return this._list.length; }
    append(k, v) { this._list.push([String(k), String(v)]); this._changed(); }
    delete(k) { this._list = this._list.filter(function (p) { return p[0] !== String(k); }); this._changed(); }
    get(k) { var p = this._list.find(function (p) { return p[0] === String(k); }); return p ? p[1] : null; }
    getAll(k) { return this._list.filter(function (p) { return p[0] === String(k); }).map(function (p) { return p[1]; }); }
    has(k) { return this._list.some(function (p) { return p[0] === String(k); }); }
    set(k, v) {
      k = String(k);
      var i = this._list.findIndex(function (p) { return p[0] === k; });
      if (i < 0) { this._list.push([k, String(v)]); } else {
        this._list[i][1] = String(v);
        this._list = this._list.filter(function (p, j) { return j <= i || p[0] !== k; });
      }
      this._changed();
    }
    sort() { this._list.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; }); this._changed(); }
    forEach(f, self) { for (var p of this._list) f.call(self, p[1], p[0], this); }
    keys() { return this._list.map(function (p) { return p[0]; })[Symbol.iterator](); }
    values() { return this._list.map(function (p) { return p[1]; })[Symbol.iterator](); }
    entries() { return this._list.map(function (p) { return [p[0], p[1]]; })[Symbol.iterator](); }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this._list.map(function (p) { return formEncode(p[0]) + "=" + formEncode(p[1]); }).join("&"); }
  }
  class URL {
    constructor(input, base) {
      var u = kc.parseURL(String(input), base === undefined ? undefined : String(base));
      Object.defineProperty(this, "_u", { value: u, writable: true });
      this.searchParams = new URLSearchParams(u.search);
      this.searchParams._url = this;
    }
    _setSearch(s) { this._u = kc.parseURL(this._u.href.replace(/(\?[^#]*)?(#.*)?$/, (s ? "?" + s : "") + this._u.hash)); }
    get href() { return this._u.href; }
    get protocol() { return this._u.protocol; }
    get username() { return this._u.username; }
    get password() { return this._u.password; }
    get host() { return this._u.host; }
    get hostname() { return this._u.hostname; }
    get port() { return this._u.port; }
    get pathname() { return this._u.pathname; }
    get search() { return this._u.search; }
    get hash() { return this._u.hash; }
    get origin() { return this._u.origin; }
    toString() { return this.href; }
    toJSON() { return this.href; }
    static canParse(input, base) { try { new URL(input, base); return true; } catch (e) { return false; } }
  }
  G.URL = URL;
  G.URLSearchParams = URLSearchParams;

  // --- typebox: the schema builders pi extensions use, producing JSON Schema
  var OptionalKind = Symbol.for("TypeBox.Optional");
  var Kind = Symbol.for("TypeBox.Kind");
  function schema(kind, s, opts) { var o = Object.assign({}, opts || {}, s); o[Kind] = kind; return o; }
  var Type = {
    Object: function (props, opts) {
      props = props || {};
      var required = Object.keys(props).filter(function (k) { return !props[k][OptionalKind]; });
      var s = { type: "object", properties: props };
      if (required.length) s.required = required;
      return schema("Object", s, opts);
    },
    String: function (opts) { return schema("String", { type: "string" }, opts); },
    Number: function (opts) { return schema("Number", { type: "number" }, opts); },
    Integer: function (opts) { return schema("Integer", { type: "integer" }, opts); },
    Boolean: function (opts) { return schema("Boolean", { type: "boolean" }, opts); },
    Null: function (opts) { return schema("Null", { type: "null" }, opts); },
    Any: function (opts) { return schema("Any", {}, opts); },
    Unknown: function (opts) { return schema("Unknown", {}, opts); },
    Array: function (items, opts) { return schema("Array", { type: "array", items: items }, opts); },
    Optional: function (s) { var o = Object.assign({}, s); o[OptionalKind] = "Optional"; return o; },
    Readonly: function (s) { return s; },
    Union: function (anyOf, opts) { return schema("Union", { anyOf: anyOf }, opts); },
    Literal: function (v, opts) { return schema("Literal", { type: typeof v, const: v }, opts); },
    Enum: function (e, opts) {
      var values = Array.isArray(e) ? e : Object.keys(e).filter(function (k) { return isNaN(Number(k)); }).map(function (k) { return e[k]; });
      return schema("Union", { anyOf: values.map(function (v) { return { type: typeof v, const: v }; }) }, opts);
    },
    Record: function (key, value, opts) { return schema("Record", { type: "object", additionalProperties: value }, opts); },
    Tuple: function (items, opts) {
      return schema("Tuple", { type: "array", items: items, minItems: items.length, maxItems: items.length }, opts);
    },
    Unsafe: function (s) { return Object.assign({}, s); },
  };
  function StringEnum(values, opts) { return Object.assign({ type: "string", enum: values.slice() }, opts || {}); }

  // Exports of a module that throw, naming the export, when code uses one
  // the runtime does not provide (instead of a silent undefined).
  var objectNames = Object.getOwnPropertyNames(Object.prototype);
  function strictExports(name, exports) {
    var trap = new Proxy({}, {
      get: function (t, k) {
        if (typeof k === "symbol" || objectNames.indexOf(k) >= 0) return Object.prototype[k];
        if (k === "then" || k === "default" || k === "__esModule" || k === "toJSON" || k === "inspect") return undefined;
        throw new Error("\"" + k + "\" of " + name + " is not provided by knightcode's extension runtime");
      },
    });
    var out = Object.create(trap);
    Object.defineProperty(out, "__esModule", { value: true });
    Object.keys(exports).forEach(function (k) { out[k] = exports[k]; });
    return out;
  }
  function isTool(name) { return function (e) { return e != null && e.toolName === name; }; }
  var piExports = {
    defineTool: function (t) { return t; },
    isToolCallEventType: function (name, e) { return e != null && e.toolName === name; },
    isBashToolResult: isTool("bash"), isReadToolResult: isTool("read"), isEditToolResult: isTool("edit"),
    isWriteToolResult: isTool("write"), isGrepToolResult: isTool("grep"), isFindToolResult: isTool("find"),
    isLsToolResult: isTool("ls"),
    getAgentDir: function () { return kc.agentDir; },
  };
  var typeboxExports = { Type: Type, Kind: Kind, OptionalKind: OptionalKind, default: Type };

  // The modules require provides besides the Go-built ones (path, fs, os,
  // crypto, process: package extensions' node.go).
  return {
    modules: {
      "events": function () { return EventEmitter; },
      "util": function () {
        return { format: format, inspect: inspect, promisify: promisify, inherits: inherits, deprecate: deprecate,
          isDeepStrictEqual: isDeepStrictEqual, TextEncoder: TextEncoder, TextDecoder: TextDecoder,
          types: { isPromise: function (v) { return v instanceof Promise; }, isDate: function (v) { return v instanceof Date; },
            isRegExp: function (v) { return v instanceof RegExp; } } };
      },
      "buffer": function () { return { Buffer: Buffer }; },
      "url": function () {
        return { URL: URL, URLSearchParams: URLSearchParams,
          fileURLToPath: function (u) { u = typeof u === "string" ? new URL(u) : u; if (u.protocol !== "file:") throw new TypeError("The URL must be of scheme file"); return decodeURIComponent(u.pathname); },
          pathToFileURL: function (p) { return new URL("file://" + encodeURI(p)); } };
      },
      "timers": function () { return timers; },
      "typebox": function () { return strictExports("typebox", typeboxExports); },
      "@sinclair/typebox": function () { return strictExports("@sinclair/typebox", typeboxExports); },
      "@mariozechner/pi-ai": function () { return strictExports("@mariozechner/pi-ai", { Type: Type, StringEnum: StringEnum }); },
      "@mariozechner/pi-coding-agent": function () { return strictExports("@mariozechner/pi-coding-agent", piExports); },
      "@knightcode/extension-api": function () { return strictExports("@knightcode/extension-api", piExports); },
    },
    Buffer: Buffer,
    EventEmitter: EventEmitter,
    AbortController: AbortController,
    nodeError: nodeError,
    // pi.events: one bus per thread load; a handler's throw is logged.
    eventBus: function (emitter) {
      return {
        on: function (channel, handler) {
          var f = function (data) {
            try {
              var r = handler(data);
              if (r && typeof r.then === "function") r.then(undefined, function (e) { kc.log("error", "an events handler of " + channel + " failed: " + String(e && e.stack || e)); });
            } catch (e) { kc.log("error", "an events handler of " + channel + " failed: " + String(e && e.stack || e)); }
          };
          emitter.on(channel, f);
          return function () { emitter.off(channel, f); };
        },
        emit: function (channel, data) { emitter.emit(channel, data); },
      };
    },
    // ctx.ui.theme: styling returns the text unstyled.
    theme: new Proxy({}, {
      get: function (t, k) {
        if (typeof k === "symbol") return undefined;
        if (k === "name") return "knightcode";
        return function () { return arguments.length ? String(arguments[arguments.length - 1]) : ""; };
      },
    }),
    settle: function (v, ok, fail) { Promise.resolve(v).then(ok, fail); },
    errorText: function (e) {
      if (e instanceof Error) return (e.name && e.name !== "Error" ? e.name + ": " : "") + e.message;
      try { return typeof e === "string" ? e : inspect(e); } catch (x) { return String(e); }
    },
  };
})
