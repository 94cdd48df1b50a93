package main

import (
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/rpctest"
)

// TestE2EMalformedMessages checks that no message goes unanswered for lack
// of a clear shape: a "method" member makes a request even when empty
// (methodNotFound), an id without method, result or error is answered
// parseError, a request with a null id or none gets an error notification
// (it has no id to be answered by; unknown notifications are tolerated),
// and replies to ids this server never used are dropped with a warning in
// the log, not on the wire.
func TestE2EMalformedMessages(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	rpctest.Run(t, p.peer(t), []rpctest.Step{
		{Send: e2eInitialize},
		{Expect: initResult(p.home)},
		{Send: e2eInitialized},
		{Send: `{"id":77,"method":""}`},
		{Expect: `{"id":77,"error":{"code":"methodNotFound","message":"unknown method \"\": the method name is empty"}}`},
		{Send: `{"id":78,"method":"","params":{}}`},
		{Expect: `{"id":78,"error":{"code":"methodNotFound","message":"unknown method \"\": the method name is empty"}}`},
		{Send: `{"id":79}`},
		{Expect: `{"id":79,"error":{"code":"parseError","message":"message has an id but neither method, result nor error"}}`},
		{Send: `{"id":"p","params":{}}`},
		{Expect: `{"id":"p","error":{"code":"parseError","message":"message has an id but neither method, result nor error"}}`},
		{Send: `{"id":null,"method":"thread/start","params":{"cwd":"/"}}`},
		{Expect: `{"method":"error","params":{"code":"parseError","message":"a request's id must be a JSON string or number, got null (a notification has no id member)"}}`},
		{Send: `{"method":"thread/start","params":{"cwd":"/"}}`},
		{Expect: `{"method":"error","params":{"code":"parseError","message":"thread/start is a request: send it with a string or numeric id to get an answer; this one was ignored"}}`},
		{Send: `{"method":"no/such/notification"}`},
		{Send: `{"id":"nobody","result":{}}`},
		{Send: `{"id":null,"error":{"code":"parseError","message":"cannot read that"}}`},
		{Send: `{"id":80,"method":"a/b"}`},
		{Expect: `{"id":80,"error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
		{CloseInput: true},
		{ExpectEOF: true},
	})
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
	log := p.stderr.String()
	for _, want := range []string{
		`msg="reply to an unknown request id dropped" conn=1 id="\"nobody\""`,
		`msg="reply to an unknown request id dropped" conn=1 id=null`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("server log lacks %s:\n%s", want, log)
		}
	}
}
