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

  // --- fetch, Headers, Request, Response (kc.fetch sends the request
  // with Go's net/http; the body is read whole)
  class Headers {
    constructor(init) {
      this._map = new Map();
      if (init == null) return;
      if (init instanceof Headers) init = init.entries();
      if (typeof init[Symbol.iterator] === "function") {
        for (var p of init) this.append(p[0], p[1]);
      } else {
        for (var k of Object.keys(init)) this.append(k, init[k]);
      }
    }
    append(k, v) {
      k = String(k).toLowerCase(); v = String(v);
      var cur = this._map.get(k);
      this._map.set(k, cur === undefined ? v : cur + ", " + v);
    }
    set(k, v) { this._map.set(String(k).toLowerCase(), String(v)); }
    get(k) { var v = this._map.get(String(k).toLowerCase()); return v === undefined ? null : v; }
    has(k) { return this._map.has(String(k).toLowerCase()); }
    delete(k) { this._map.delete(String(k).toLowerCase()); }
    forEach(f, self) { for (var p of this.entries()) f.call(self, p[1], p[0], this); }
    entries() { return Array.from(this._map.entries()).sort(function (a, b) { return a[0] < b[0] ? -1 : 1; })[Symbol.iterator](); }
    keys() { return Array.from(this.entries(), function (p) { return p[0]; })[Symbol.iterator](); }
    values() { return Array.from(this.entries(), function (p) { return p[1]; })[Symbol.iterator](); }
    [Symbol.iterator]() { return this.entries(); }
  }
  // bodyBytes is a request or response body as bytes and the content type
  // it implies (null for none).
  function bodyBytes(body) {
    if (body === undefined || body === null) return [null, null];
    if (typeof body === "string") return [Buffer.from(body), "text/plain;charset=UTF-8"];
    if (body instanceof URLSearchParams) return [Buffer.from(body.toString()), "application/x-www-form-urlencoded;charset=UTF-8"];
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return [Buffer.from(toBytes(body)), null];
    throw new TypeError("knightcode's fetch takes a string, URLSearchParams, ArrayBuffer or typed array body");
  }
  class Body {
    _initBody(bytes) { this._bytes = bytes; this.bodyUsed = false; }
    _consume() {
      if (this.bodyUsed) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
      this.bodyUsed = true;
      return Promise.resolve(this._bytes || Buffer.alloc(0));
    }
    get body() { return this._bytes === null ? null : { locked: false }; }
    arrayBuffer() { return this._consume().then(function (b) { return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); }); }
    bytes() { return this._consume().then(function (b) { return new Uint8Array(b); }); }
    text() { return this._consume().then(function (b) { return b.toString("utf8"); }); }
    json() { return this.text().then(JSON.parse); }
  }
  class Request extends Body {
    constructor(input, init) {
      super();
      init = init || {};
      var from = input instanceof Request ? input : null;
      this.url = from ? from.url : new URL(String(input)).href;
      this.method = String(init.method || (from ? from.method : "GET")).toUpperCase();
      this.headers = new Headers(init.headers || (from ? from.headers : undefined));
      this.signal = init.signal || (from ? from.signal : null) || new AbortSignal();
      var b = init.body !== undefined ? bodyBytes(init.body) : [from ? from._bytes : null, null];
      if (b[1] && !this.headers.has("content-type")) this.headers.set("content-type", b[1]);
      this._initBody(b[0]);
    }
    clone() { return new Request(this); }
  }
  class Response extends Body {
    constructor(body, init) {
      super();
      init = init || {};
      this.status = init.status === undefined ? 200 : init.status;
      this.statusText = init.statusText || "";
      this.headers = new Headers(init.headers);
      this.url = init.url || "";
      this.redirected = !!init.redirected;
      this.type = "default";
      var b = bodyBytes(body);
      if (b[1] && !this.headers.has("content-type")) this.headers.set("content-type", b[1]);
      this._initBody(b[0]);
    }
    get ok() { return this.status >= 200 && this.status < 300; }
    clone() {
      if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
      return new Response(this._bytes, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url });
    }
    static json(data, init) {
      var r = new Response(JSON.stringify(data), init);
      r.headers.set("content-type", "application/json");
      return r;
    }
    static error() { var r = new Response(null, { status: 0 }); r.type = "error"; return r; }
  }
  function abortError(signal) {
    if (signal.reason !== undefined && !(signal.reason instanceof Error && signal.reason.code === "ABORT_ERR")) return signal.reason;
    var e = new Error("This operation was aborted");
    e.name = "AbortError";
    e.code = 20;
    return e;
  }
  G.fetch = function (input, init) {
    var req;
    try { req = new Request(input, init); } catch (e) { return Promise.reject(e); }
    var signal = req.signal;
    if (signal.aborted) return Promise.reject(abortError(signal));
    return new Promise(function (resolve, reject) {
      var settled = false, abort;
      function onAbort() {
        if (settled) return;
        settled = true;
        abort();
        reject(abortError(signal));
      }
      abort = kc.fetch(req.method, req.url, Array.from(req.headers.entries()), req._bytes || undefined, function (err, r) {
        signal.removeEventListener("abort", onAbort);
        if (settled) return;
        settled = true;
        if (err) { reject(err); return; }
        var res = new Response(null, { status: r.status, statusText: r.statusText, headers: r.headers, url: r.url, redirected: r.redirected });
        res._initBody(new Buffer(r.body));
        resolve(res);
      });
      signal.addEventListener("abort", onAbort);
    });
  };
  G.Headers = Headers;
  G.Request = Request;
  G.Response = Response;

  // --- child_process (kc.spawn and kc.spawnSync start the children in the
  // thread's process groups: package extensions' child.go)
  function Readable() { EventEmitter.call(this); this._enc = null; this.readable = true; }
  Object.setPrototypeOf(Readable.prototype, EventEmitter.prototype);
  Readable.prototype.setEncoding = function (enc) { this._enc = enc || "utf8"; return this; };
  Readable.prototype.pipe = function (dest) {
    this.on("data", function (d) { dest.write(d); });
    return dest;
  };
  Readable.prototype.resume = function () { return this; };
  Readable.prototype.pause = function () { return this; };
  Readable.prototype.destroy = function () { return this; };
  Readable.prototype._push = function (bytes) {
    var b = new Buffer(bytes);
    this.emit("data", this._enc ? b.toString(this._enc) : b);
  };
  function Writable(h) { EventEmitter.call(this); this._h = h; this.writable = true; }
  Object.setPrototypeOf(Writable.prototype, EventEmitter.prototype);
  Writable.prototype.write = function (data, enc, cb) {
    if (typeof enc === "function") { cb = enc; enc = undefined; }
    var ok = this._h.write(typeof data === "string" ? Buffer.from(data, enc) : toBytes(data));
    if (cb) setImmediate(cb);
    return ok;
  };
  Writable.prototype.end = function (data, enc, cb) {
    if (typeof data === "function") { cb = data; data = undefined; }
    if (data !== undefined && data !== null) this.write(data, enc);
    this._h.end();
    this.writable = false;
    if (cb) setImmediate(cb);
    return this;
  };
  Writable.prototype.destroy = function () { this._h.end(); return this; };

  function ChildProcess() {
    EventEmitter.call(this);
    this.pid = undefined; this.exitCode = null; this.signalCode = null; this.killed = false;
    this.stdin = null; this.stdout = null; this.stderr = null; this.spawnfile = ""; this.spawnargs = [];
  }
  Object.setPrototypeOf(ChildProcess.prototype, EventEmitter.prototype);
  ChildProcess.prototype.kill = function (sig) {
    if (!this._h || this.exitCode !== null || this.signalCode !== null) return false;
    var ok = this._h.kill(sig);
    if (ok) this.killed = true;
    return ok;
  };
  ChildProcess.prototype.ref = ChildProcess.prototype.unref = function () { return this; };

  function envList(env) {
    var out = [];
    Object.keys(env).forEach(function (k) { if (env[k] !== undefined) out.push(k + "=" + String(env[k])); });
    return out;
  }
  function stdioModes(stdio) {
    if (stdio === undefined || stdio === null) return ["pipe", "pipe", "pipe"];
    if (typeof stdio === "string") stdio = [stdio, stdio, stdio];
    var out = [];
    for (var i = 0; i < 3; i++) {
      var m = stdio[i];
      out.push(m === "ignore" ? "ignore" : m === "inherit" || m === 1 || m === 2 || m === 0 ? "inherit" : "pipe");
    }
    return out;
  }
  // shellCommand is Node's shell: true: /bin/sh -c with the file and its
  // arguments joined by spaces.
  function shellCommand(file, args) { return ["/bin/sh", ["-c", [file].concat(args || []).join(" ")]]; }
  function spawnOptions(opts, modes) {
    return { cwd: opts.cwd === undefined || opts.cwd === null ? "" : String(opts.cwd),
      env: envList(opts.env || G.process.env),
      stdio: modes.map(function (m) { return m === "ignore" ? "ignore" : "pipe"; }) };
  }
  function normalizeArgs(args, opts) {
    if (!Array.isArray(args)) { opts = args; args = []; }
    return [args.map(String), opts || {}];
  }
  function spawn(file, args, opts) {
    var a = normalizeArgs(args, opts);
    args = a[0]; opts = a[1];
    if (opts.shell) { var sc = shellCommand(file, args); file = sc[0]; args = sc[1]; }
    var modes = stdioModes(opts.stdio);
    var cp = new ChildProcess();
    cp.spawnfile = file; cp.spawnargs = [file].concat(args);
    var streams = [null, null, null];
    for (var i = 1; i < 3; i++) {
      if (modes[i] === "pipe") streams[i] = new Readable();
    }
    cp.stdout = streams[1]; cp.stderr = streams[2];
    cp.stdio = [null, cp.stdout, cp.stderr];
    var timer = null, exited = false;
    function onData(fd, bytes) {
      if (streams[fd]) { streams[fd]._push(bytes); return; }
      // "inherit": the server's stdout is the protocol's; the child's
      // output goes to the server log.
      kc.log(fd === 2 ? "warn" : "info", "child " + file + ": " + kc.decode(bytes, "utf8").replace(/\n$/, ""));
    }
    function onExit(code, signal) {
      exited = true;
      cp.exitCode = code; cp.signalCode = signal;
      if (timer) clearTimeout(timer);
      cp.emit("exit", code, signal);
    }
    function onClose(err) {
      if (err) { cp.emit("error", err); return; }
      for (var i = 1; i < 3; i++) {
        if (streams[i]) { streams[i].readable = false; streams[i].emit("end"); streams[i].emit("close"); }
      }
      cp.emit("close", cp.exitCode, cp.signalCode);
    }
    try {
      cp._h = kc.spawn(file, args, spawnOptions(opts, modes), onData, onExit, onClose);
    } catch (e) {
      setImmediate(function () { cp.emit("error", e); });
      return cp;
    }
    cp.pid = cp._h.pid;
    if (modes[0] === "pipe") { cp.stdin = new Writable(cp._h); cp.stdio[0] = cp.stdin; }
    else cp._h.end();
    if (opts.timeout > 0) timer = setTimeout(function () { cp.kill(opts.killSignal || "SIGTERM"); }, opts.timeout);
    if (opts.signal) {
      var onAbort = function () {
        if (exited) return;
        cp.kill(opts.killSignal || "SIGTERM");
        var e = nodeError("ABORT_ERR", "The operation was aborted");
        e.name = "AbortError";
        e.cause = opts.signal.reason;
        cp.emit("error", e);
      };
      if (opts.signal.aborted) setImmediate(onAbort); else opts.signal.addEventListener("abort", onAbort);
    }
    setImmediate(function () { cp.emit("spawn"); });
    return cp;
  }
  function outputOf(chunks, enc) {
    var b = Buffer.concat(chunks);
    return enc && enc !== "buffer" ? b.toString(enc) : b;
  }
  function commandFailed(cmd, code, signal, stderr) {
    var e = new Error("Command failed: " + cmd + (stderr && String(stderr) ? "\n" + String(stderr) : ""));
    e.code = code; e.signal = signal; e.cmd = cmd; e.killed = signal !== null;
    return e;
  }
  // execFile (exec with a shell) runs a child to the end and calls back
  // (err, stdout, stderr), as Node's do (maxBuffer is not enforced).
  function execFileImpl(file, args, opts, cb, label) {
    opts = Object.assign({ encoding: "utf8" }, opts || {});
    var cp = spawn(file, args, Object.assign({}, opts, { stdio: ["pipe", "pipe", "pipe"] }));
    var out = [], err = [], done = false;
    function finish(e, code, signal) {
      if (done) return;
      done = true;
      var so = outputOf(out, opts.encoding), se = outputOf(err, opts.encoding);
      if (!e && (code !== 0 || signal !== null)) e = commandFailed(label, code, signal, se);
      if (e) { e.stdout = so; e.stderr = se; }
      if (cb) cb(e || null, so, se);
    }
    if (cp.stdout) cp.stdout.on("data", function (d) { out.push(d); });
    if (cp.stderr) cp.stderr.on("data", function (d) { err.push(d); });
    cp.on("error", function (e) { finish(e, null, null); });
    cp.on("close", function (code, signal) { finish(null, code, signal); });
    return cp;
  }
  function promisified(run) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      var cp;
      var p = new Promise(function (resolve, reject) {
        cp = run(args, function (e, stdout, stderr) { e ? reject(e) : resolve({ stdout: stdout, stderr: stderr }); });
      });
      p.child = cp;
      return p;
    };
  }
  function exec(command, opts, cb) {
    if (typeof opts === "function") { cb = opts; opts = {}; }
    opts = opts || {};
    var sh = typeof opts.shell === "string" ? opts.shell : "/bin/sh";
    return execFileImpl(sh, ["-c", String(command)], Object.assign({}, opts, { shell: false }), cb, String(command));
  }
  exec[customPromisify] = promisified(function (a, cb) { return exec(a[0], a[1] || {}, cb); });
  function execFile(file, args, opts, cb) {
    if (typeof args === "function") { cb = args; args = []; opts = {}; }
    else if (typeof opts === "function") { cb = opts; if (!Array.isArray(args)) { opts = args; args = []; } else opts = {}; }
    var a = normalizeArgs(args, opts);
    return execFileImpl(file, a[0], a[1], cb, [file].concat(a[0]).join(" "));
  }
  execFile[customPromisify] = promisified(function (a, cb) {
    var args = Array.isArray(a[1]) ? a[1] : [], opts = Array.isArray(a[1]) ? a[2] : a[1];
    return execFile(a[0], args, opts || {}, cb);
  });
  function spawnSync(file, args, opts) {
    var a = normalizeArgs(args, opts);
    args = a[0]; opts = a[1];
    if (opts.shell) { var sc = shellCommand(file, args); file = sc[0]; args = sc[1]; }
    var modes = stdioModes(opts.stdio);
    var input = opts.input === undefined || opts.input === null ? undefined :
      typeof opts.input === "string" ? Buffer.from(opts.input) : toBytes(opts.input);
    var r;
    try {
      r = kc.spawnSync(file, args, spawnOptions(opts, modes), input, Number(opts.timeout) || 0);
    } catch (e) {
      return { pid: 0, output: null, stdout: null, stderr: null, status: null, signal: null, error: e };
    }
    var enc = opts.encoding && opts.encoding !== "buffer" ? opts.encoding : null;
    var conv = function (ab) { var b = new Buffer(ab); return enc ? b.toString(enc) : b; };
    var so = modes[1] === "pipe" ? conv(r.stdout) : null, se = modes[2] === "pipe" ? conv(r.stderr) : null;
    if (modes[1] === "inherit" && r.stdout.byteLength) kc.log("info", "child " + file + ": " + kc.decode(r.stdout, "utf8"));
    if (modes[2] === "inherit" && r.stderr.byteLength) kc.log("warn", "child " + file + ": " + kc.decode(r.stderr, "utf8"));
    return { pid: r.pid, output: [null, so, se], stdout: so, stderr: se, status: r.status, signal: r.signal };
  }
  function checkSync(r, label) {
    if (r.error) throw r.error;
    if (r.status !== 0 || r.signal !== null) {
      var e = commandFailed(label, r.status, r.signal, r.stderr);
      e.status = r.status; e.stdout = r.stdout; e.stderr = r.stderr; e.output = r.output; e.pid = r.pid;
      throw e;
    }
    return r.stdout;
  }
  function execSync(command, opts) {
    opts = opts || {};
    var sh = typeof opts.shell === "string" ? opts.shell : "/bin/sh";
    return checkSync(spawnSync(sh, ["-c", String(command)], Object.assign({}, opts, { shell: false })), String(command));
  }
  function execFileSync(file, args, opts) {
    var a = normalizeArgs(args, opts);
    return checkSync(spawnSync(file, a[0], a[1]), [file].concat(a[0]).join(" "));
  }
  // pi.exec(command, args, {signal, timeout, cwd}): pi's execCommand
  // (dist/core/exec.js): no shell, SIGTERM on abort or timeout (SIGKILL 5 s
  // later), resolving {stdout, stderr, code, killed}.
  function piExec(command, args, cwd, options) {
    options = options || {};
    return new Promise(function (resolve) {
      var proc = spawn(command, args || [], { cwd: options.cwd || cwd, stdio: ["ignore", "pipe", "pipe"] });
      var stdout = "", stderr = "", killed = false, timeoutId, settled = false;
      function kill() {
        if (killed) return;
        killed = true;
        proc.kill("SIGTERM");
        setTimeout(function () { if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL"); }, 5000);
      }
      if (options.signal) {
        if (options.signal.aborted) kill(); else options.signal.addEventListener("abort", kill);
      }
      if (options.timeout > 0) timeoutId = setTimeout(kill, options.timeout);
      if (proc.stdout) proc.stdout.on("data", function (d) { stdout += d.toString(); });
      if (proc.stderr) proc.stderr.on("data", function (d) { stderr += d.toString(); });
      function done(code) {
        if (settled) return;
        settled = true;
        if (timeoutId) clearTimeout(timeoutId);
        if (options.signal) options.signal.removeEventListener("abort", kill);
        resolve({ stdout: stdout, stderr: stderr, code: code, killed: killed });
      }
      proc.on("error", function () { done(1); });
      proc.on("close", function (code) { done(code === null ? 0 : code); });
    });
  }
  var childProcess = { spawn: spawn, exec: exec, execFile: execFile, spawnSync: spawnSync, execSync: execSync,
    execFileSync: execFileSync, ChildProcess: ChildProcess };

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
  // pi-ai's AssistantMessageEventStream (utils/event-stream.js): push
  // events, end, iterate them with for await; result() is the final
  // message ("done"'s message, "error"'s error).
  function AssistantMessageEventStream() {
    this._queue = [];
    this._waiting = [];
    this._done = false;
    var self = this;
    this._final = new Promise(function (resolve) { self._resolveFinal = resolve; });
  }
  AssistantMessageEventStream.prototype.push = function (event) {
    if (this._done) return;
    if (event && (event.type === "done" || event.type === "error")) {
      this._done = true;
      this._resolveFinal(event.type === "done" ? event.message : event.error);
    }
    var w = this._waiting.shift();
    if (w) w({ value: event, done: false });
    else this._queue.push(event);
  };
  AssistantMessageEventStream.prototype.end = function (result) {
    this._done = true;
    if (result !== undefined) this._resolveFinal(result);
    while (this._waiting.length > 0) this._waiting.shift()({ value: undefined, done: true });
  };
  AssistantMessageEventStream.prototype.result = function () { return this._final; };
  AssistantMessageEventStream.prototype[Symbol.asyncIterator] = function () {
    var self = this;
    return {
      next: function () {
        if (self._queue.length > 0) return Promise.resolve({ value: self._queue.shift(), done: false });
        if (self._done) return Promise.resolve({ value: undefined, done: true });
        return new Promise(function (resolve) { self._waiting.push(resolve); });
      },
      return: function () { self._done = true; return Promise.resolve({ value: undefined, done: true }); },
    };
  };
  // pumpStream gives each event of stream (an async iterable, or a promise
  // of one) to onEvent until it ends, or onEvent returns false; the
  // promise settles then.
  function pumpStream(stream, onEvent) {
    return Promise.resolve(stream).then(function (s) {
      if (s == null || typeof s[Symbol.asyncIterator] !== "function") {
        throw new TypeError("streamSimple did not return an AssistantMessageEventStream (an async iterable of events)");
      }
      var it = s[Symbol.asyncIterator]();
      return new Promise(function (resolve, reject) {
        function next() {
          Promise.resolve(it.next()).then(function (r) {
            if (r.done) { resolve(); return; }
            var more;
            try { more = onEvent(r.value); } catch (e) { reject(e); return; }
            if (more === false) {
              if (typeof it.return === "function") { try { it.return(); } catch (e) { /* ignored */ } }
              resolve();
              return;
            }
            next();
          }, reject);
        }
        next();
      });
    });
  }
  var piAiExports = {
    Type: Type, StringEnum: StringEnum,
    createAssistantMessageEventStream: function () { return new AssistantMessageEventStream(); },
    AssistantMessageEventStream: AssistantMessageEventStream,
  };
  function isTool(name) { return function (e) { return e != null && e.toolName === name; }; }
  var piExports = {
    defineTool: function (t) { return t; },
    isToolCallEventType: function (name, e) { return e != null && e.toolName === name; },
    isBashToolResult: isTool("bash"), isReadToolResult: isTool("read"), isEditToolResult: isTool("edit"),
    isWriteToolResult: isTool("write"), isGrepToolResult: isTool("grep"), isFindToolResult: isTool("find"),
    isLsToolResult: isTool("ls"),
    getAgentDir: function () { return kc.agentDir; },
    VERSION: "0.73.1",
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
      "child_process": function () { return childProcess; },
      // module: createRequire gives the runtime's require (the provided
      // modules only: files are bundled, not required at run time).
      "module": function () {
        return { createRequire: function () { return kc.require; }, builtinModules: kc.builtinModules.slice() };
      },
      "typebox": function () { return strictExports("typebox", typeboxExports); },
      "@sinclair/typebox": function () { return strictExports("@sinclair/typebox", typeboxExports); },
      "@mariozechner/pi-ai": function () { return strictExports("@mariozechner/pi-ai", piAiExports); },
      "@mariozechner/pi-agent-core": function () { return strictExports("@mariozechner/pi-agent-core", {}); },
      "@mariozechner/pi-tui": function () { return strictExports("@mariozechner/pi-tui", kc.uiModules().tui); },
      "@mariozechner/pi-coding-agent": function () {
        return strictExports("@mariozechner/pi-coding-agent", Object.assign({}, kc.uiModules().coding, piExports));
      },
      "@knightcode/extension-api": function () {
        return strictExports("@knightcode/extension-api", Object.assign({}, kc.uiModules().coding, piExports));
      },
    },
    Buffer: Buffer,
    EventEmitter: EventEmitter,
    AbortController: AbortController,
    nodeError: nodeError,
    piExec: piExec,
    pumpStream: pumpStream,
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
