package extensions

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestFetch runs the global fetch against a test server: a JSON GET with
// a request header, a POST with a string body, text and arrayBuffer, a
// 404 (not a rejection), Response and Headers built by hand, an abort
// while the server holds the response, and a refused connection.
func TestFetch(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Echo", r.Header.Get("X-Token"))
			_, _ = io.WriteString(w, `{"ok":true,"n":3}`)
		case "/post":
			b, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
		case "/slow":
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := writeExt(t, dir, "fetch.ts", `export default function (pi: any) {
	pi.registerCommand("fetch", { handler: async (base: string) => {
		const out: Record<string, unknown> = {};
		const r = await fetch(base + "/json", { headers: { "X-Token": "t1" } });
		out.json = [r.ok, r.status, r.headers.get("content-type"), r.headers.get("x-echo"), await r.json(), r.bodyUsed];
		const p = await fetch(new Request(base + "/post", { method: "POST", body: "hi" }));
		out.post = await p.text();
		const nf = await fetch(base + "/nope");
		out.notFound = [nf.ok, nf.status, nf.statusText, new Uint8Array(await nf.arrayBuffer()).length > 0];
		const h = new Headers([["A", "1"]]); h.append("a", "2"); h.set("B", "x");
		out.headers = Array.from(h.entries());
		const made = new Response("body", { status: 201 });
		out.made = [made.status, made.ok, await made.clone().text(), await made.text()];
		const ac = new AbortController();
		const slow = fetch(base + "/slow", { signal: ac.signal });
		setTimeout(() => ac.abort(), 20);
		try { await slow; out.abort = "resolved"; } catch (e: any) { out.abort = e.name; }
		try { await fetch("http://127.0.0.1:1/"); out.refused = "resolved"; } catch (e: any) { out.refused = [e.name, e.message]; }
		pi.appendEntry("fetch", out);
	}});
}
`)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := commandEntry(t, ctx, r, h, "/fetch "+srv.URL, "fetch")
	want := map[string]any{
		"json":     []any{true, 200, "application/json", "t1", map[string]any{"ok": true, "n": 3}, true},
		"post":     "POST text/plain;charset=UTF-8 hi",
		"notFound": []any{false, 404, "Not Found", true},
		"headers":  []any{[]any{"a", "1, 2"}, []any{"b", "x"}},
		"made":     []any{201, true, "body", "body"},
		"abort":    "AbortError",
		"refused":  []any{"TypeError", "fetch failed"},
	}
	compareFields(t, got, want)
}
