package extensions

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/dop251/goja"
)

// fetch (README "Extensions", issue 25): the Go half is kc.fetch, an HTTP
// request over net/http; js/prelude.js builds the global fetch, Request,
// Response and Headers on it. The response body is read whole before the
// promise resolves (no streaming body).

// fetchClient sends the extensions' requests: net/http's defaults
// (proxies from the environment, redirects followed up to 10 times).
var fetchClient = &http.Client{Transport: http.DefaultTransport}

// installFetch (loop) adds kc.fetch(method, url, headers, body, done) to
// the host: it sends the request (headers as [name, value] pairs, body
// bytes or undefined) off the loop and calls done(error) or done(null,
// {status, statusText, url, redirected, headers, body}) on it, headers as
// [name, value] pairs and body an ArrayBuffer. It returns a function that
// aborts the request (done then gets the abort's error).
func (rt *runtime) installFetch() {
	vm := rt.vm
	_ = rt.kc.Set("fetch", func(c goja.FunctionCall) goja.Value {
		method, url := c.Argument(0).String(), c.Argument(1).String()
		var headers [][2]string
		if err := rt.fromJS(c.Argument(2), &headers); err != nil {
			panic(vm.NewTypeError("fetch: malformed headers"))
		}
		var body io.Reader
		if b := c.Argument(3); !goja.IsUndefined(b) && !goja.IsNull(b) {
			body = bytes.NewReader(bytes.Clone(rt.bytes(b)))
		}
		done, ok := goja.AssertFunction(c.Argument(4))
		if !ok {
			panic(vm.NewTypeError("fetch: no callback"))
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, method, url, body)
		if err != nil {
			cancel()
			panic(vm.NewTypeError("fetch failed: " + err.Error()))
		}
		for _, h := range headers {
			req.Header.Add(h[0], h[1])
		}
		type answer struct {
			res  *http.Response
			body []byte
		}
		go func() { // ends with rt's quit: Dispose aborts what is in flight
			select {
			case <-ctx.Done():
			case <-rt.quit:
				cancel()
			}
		}()
		rt.async(func() (any, error) {
			defer cancel()
			res, err := fetchClient.Do(req)
			if err != nil {
				return nil, err
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				return nil, err
			}
			return answer{res, b}, nil
		}, func(r any, err error) {
			if err != nil {
				e := vm.NewTypeError("fetch failed")
				_ = e.Set("cause", vm.NewGoError(err))
				_, _ = done(goja.Undefined(), e)
				return
			}
			a := r.(answer)
			var hs [][2]string
			for k, vs := range a.res.Header {
				for _, v := range vs {
					hs = append(hs, [2]string{k, v})
				}
			}
			o := vm.NewObject()
			_ = o.Set("status", a.res.StatusCode)
			_ = o.Set("statusText", http.StatusText(a.res.StatusCode))
			_ = o.Set("url", a.res.Request.URL.String())
			_ = o.Set("redirected", a.res.Request.URL.String() != url)
			_ = o.Set("headers", hs)
			_ = o.Set("body", vm.NewArrayBuffer(a.body))
			_, _ = done(goja.Undefined(), goja.Null(), o)
		})
		return vm.ToValue(func(goja.FunctionCall) goja.Value { cancel(); return goja.Undefined() })
	})
}
