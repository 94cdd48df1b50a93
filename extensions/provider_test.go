package extensions

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
)

// TestRegisterProvider: provider.ts's configuration-only provider crosses
// the seam as its config's JSON, its streamSimple
// provider as models and a Streamer whose stream gives the deltas and the
// done message; a stream that errors or never ends is a StreamError; a
// consumer that stops early ends the stream.
func TestRegisterProvider(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := writeExt(t, dir, "bad.ts", `import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";
export default function (pi: any) {
	pi.registerProvider("bad", { models: [{ id: "fails" }, { id: "hangs" }, { id: "throws" }], streamSimple: (model: any) => {
		if (model.id === "throws") throw new Error("no stream today");
		const s = createAssistantMessageEventStream();
		if (model.id === "fails") setTimeout(() => s.push({ type: "error", reason: "error", error: { errorMessage: "quota exceeded" } }), 1);
		return s;
	} });
}
`)
	r, _, warnings, _ := loadRunner(t, 0, dir, fixture(t, "provider.ts"), bad)
	if len(warnings) != 0 {
		t.Fatalf("load warnings %+v", warnings)
	}
	ps := r.Providers()
	if len(ps) != 3 || ps[0].Name != "ext-config" || ps[1].Name != "ext-func" || ps[2].Name != "bad" {
		t.Fatalf("providers %+v", ps)
	}
	var cfg map[string]any
	if err := json.Unmarshal(ps[0].Config, &cfg); err != nil || ps[0].Streamer != nil || len(cfg["models"].([]any)) != 1 || cfg["api"] != "openai-completions" || cfg["apiKey"] != "KC_E2E_KEY" {
		t.Errorf("ext-config: %s, %v", ps[0].Config, err)
	}
	fn := ps[1]
	if diff := cmp.Diff(fn.Models, []agent.Model{{Provider: "ext-func", ID: "echo", Name: "Echo", ThinkingLevels: agent.ThinkingLevels(true), ContextWindow: 8000}}); diff != "" || fn.Config != nil {
		t.Errorf("ext-func models (-got +want):\n%s", diff)
	}
	stream := func(p int, model string, stopAfter int) []agent.StreamEvent {
		t.Helper()
		seq, err := r.Providers()[p].Streamer.Stream(context.Background(), agent.Request{Model: model,
			Messages: []agent.Message{agent.UserText("hi there", 1)}})
		if err != nil {
			t.Fatal(err)
		}
		var out []agent.StreamEvent
		for ev := range seq {
			out = append(out, ev)
			if len(out) == stopAfter {
				break
			}
		}
		return out
	}
	evs := stream(1, "echo", 0)
	if len(evs) != 3 || evs[0].Delta+evs[1].Delta != "echo (ext-func/echo): hi there" || evs[2].Type != agent.StreamDone ||
		evs[2].Message.Text() != "echo (ext-func/echo): hi there" || evs[2].Message.StopReason != agent.StopReasonStop || evs[2].Message.Usage.Output != 5 {
		t.Errorf("ext-func stream %+v", evs)
	}
	if evs := stream(1, "echo", 1); len(evs) != 1 || evs[0].Type != agent.StreamTextDelta {
		t.Errorf("stopped after one event: %+v", evs)
	}
	if evs := stream(2, "fails", 0); len(evs) != 1 || evs[0].Type != agent.StreamError || evs[0].Err.Error() != "quota exceeded" {
		t.Errorf("failing stream %+v", evs)
	}
	if evs := stream(2, "throws", 0); len(evs) != 1 || evs[0].Type != agent.StreamError || !strings.Contains(evs[0].Err.Error(), "no stream today") {
		t.Errorf("throwing streamSimple %+v", evs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seq, err := r.Providers()[2].Streamer.Stream(ctx, agent.Request{Model: "hangs"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var last agent.StreamEvent
	for ev := range seq {
		last = ev
	}
	if last.Type != agent.StreamError || last.Err != context.Canceled {
		t.Errorf("cancelled stream ended with %+v", last)
	}
	if _, err := r.Providers()[1].Streamer.Stream(context.Background(), agent.Request{Model: "nope"}); err == nil {
		t.Error("a stream of an unknown model started")
	}
	// /drop-config unregisters ext-config.
	if !r.RunCommand(context.Background(), "/drop-config") {
		t.Fatal("/drop-config is not a command")
	}
	if ps := r.Providers(); len(ps) != 2 || ps[0].Name != "ext-func" {
		t.Errorf("providers after /drop-config %+v", ps)
	}
}
