package extensions

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// interfaceMembers are the members of the interfaces of types.d.ts (tsc's
// declaration output: members at four spaces' indent), by interface.
func interfaceMembers(t *testing.T, src string, ifaces ...string) map[string][]string {
	t.Helper()
	member := regexp.MustCompile(`^    (?:readonly )?([A-Za-z_$][\w$]*)\??[(<:]`)
	out := map[string][]string{}
	lines := strings.Split(src, "\n")
	for _, iface := range ifaces {
		start := slices.IndexFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "export interface "+iface+" ") && strings.HasSuffix(l, "{")
		})
		if start < 0 {
			t.Fatalf("interface %s is not in types.d.ts", iface)
		}
		for _, l := range lines[start+1:] {
			if l == "}" {
				break
			}
			if m := member.FindStringSubmatch(l); m != nil && !slices.Contains(out[iface], m[1]) {
				out[iface] = append(out[iface], m[1])
			}
		}
	}
	return out
}

// TestMembersCoverTypes: every member of pi 0.73.1's ExtensionAPI,
// ExtensionContext, ExtensionCommandContext and ExtensionUIContext (the
// pinned types.d.ts in testdata) is in Members, and Members has nothing
// types.d.ts lacks.
func TestMembersCoverTypes(t *testing.T) {
	src, err := os.ReadFile("testdata/pi-types.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ifaces := []string{ExtensionAPI, ExtensionContext, ExtensionCommandContext, ExtensionUIContext}
	want := interfaceMembers(t, string(src), ifaces...)
	got := map[string][]string{}
	for _, m := range Members {
		got[m.Interface] = append(got[m.Interface], m.Name)
		switch m.Status {
		case Implemented, LogOnly, NoOp, NotYet:
		default:
			t.Errorf("%s.%s has status %q", m.Interface, m.Name, m.Status)
		}
	}
	for _, iface := range ifaces {
		if len(want[iface]) < 5 {
			t.Fatalf("types.d.ts parsed to %d members of %s", len(want[iface]), iface)
		}
		for _, name := range want[iface] {
			if !slices.Contains(got[iface], name) {
				t.Errorf("%s.%s of types.d.ts is not in Members", iface, name)
			}
		}
		for _, name := range got[iface] {
			if !slices.Contains(want[iface], name) {
				t.Errorf("Members has %s.%s, which types.d.ts lacks", iface, name)
			}
		}
	}
}

// TestMembersOfTheObjects: the objects an extension gets have every
// member of the table: implemented and no-op ones defined (the build
// panics on an implemented member without an implementation), not-yet
// ones throwing an Error that names them.
func TestMembersOfTheObjects(t *testing.T) {
	dir := t.TempDir()
	writeExt(t, dir, "members.ts", `
export default function (pi: any) {
	const missing: string[] = [];
	const names = `+"`"+`%s`+"`"+`.split(" ");
	pi.registerCommand("check", { handler: async (_args: string, ctx: any) => {
		const objs: Record<string, any> = { ExtensionAPI: pi, ExtensionContext: ctx, ExtensionCommandContext: ctx, ExtensionUIContext: ctx.ui };
		for (const n of names) {
			const [iface, name, status] = n.split(":");
			const o = objs[iface];
			let threw = "";
			try { const v = o[name]; if (status === "notYet" && typeof v === "function") v(); } catch (e: any) { threw = e.message; }
			if (status === "notYet") {
				if (!threw.includes(name + " is not provided by knightcode yet")) missing.push(n + " did not throw: " + threw);
			} else if (threw !== "" || !(name in o)) {
				missing.push(n + " missing: " + threw);
			}
		}
		pi.appendEntry("result", missing);
	}});
}
`)
	var names []string
	for _, m := range Members {
		names = append(names, m.Interface+":"+m.Name+":"+string(m.Status))
	}
	p := writeExt(t, dir, "members.ts", strings.Replace(readFile(t, dir, "members.ts"), "%s", strings.Join(names, " "), 1))
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	if !r.RunCommand(t.Context(), "/check") {
		t.Fatal("/check is not a command")
	}
	h.wait(t, "the result entry", func() bool { return h.entries["result"] != nil })
	if got := string(h.entries["result"]); got != "[]" {
		t.Errorf("members not as the table says: %s", got)
	}
	if len(h.warnings) > 0 {
		t.Errorf("warnings %+v", h.warnings)
	}
}

// TestDispatchedEvents: every event the table says is dispatched (but
// session_shutdown, which the runtime runs itself at unload) registers a
// typed handler of the seam when an extension calls pi.on with it; through
// them a message_end handler's replacement, a context handler's messages
// and a message_update's partial reach the thread as pi shapes them.
func TestDispatchedEvents(t *testing.T) {
	dir := t.TempDir()
	var seam []string
	for _, ev := range dispatchedEvents {
		if ev != "session_shutdown" {
			seam = append(seam, `"`+ev+`"`)
		}
	}
	p := writeExt(t, dir, "events.ts", `
export default function (pi: any) {
	for (const ev of [`+strings.Join(seam, ", ")+`]) pi.on(ev, () => undefined);
	pi.on("message_end", (e: any) => e.message.role !== "assistant" ? undefined
		: { message: { ...e.message, content: [{ type: "text", text: "replaced: " + e.message.content[0].text }] } });
	pi.on("context", (e: any) => ({ messages: e.messages.filter((m: any) => m.role !== "custom") }));
	pi.on("message_update", (e: any) => {
		pi.appendEntry("update", { same: e.assistantMessageEvent.partial === e.message, type: e.assistantMessageEvent.type,
			delta: e.assistantMessageEvent.delta, text: e.message.content[0].text });
	});
	pi.on("turn_start", (e: any) => { pi.appendEntry("turn", e); });
}
`)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	for _, ev := range dispatchedEvents {
		if ev != "session_shutdown" && !r.Handles(ev) {
			t.Errorf("pi.on(%q) registered no handler of the seam", ev)
		}
	}
	ctx := t.Context()
	reply := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock("hello")}, Provider: "p", Model: "m", Timestamp: 9}
	got, changed := r.MessageEnd(ctx, ext.MessageEndEvent{Message: reply})
	want := reply
	want.Content = []agent.ContentBlock{agent.TextBlock("replaced: hello")}
	if diff := cmp.Diff(got, want); diff != "" || !changed {
		t.Errorf("message_end (changed %v) (-got +want):\n%s", changed, diff)
	}
	if _, changed := r.MessageEnd(ctx, ext.MessageEndEvent{Message: agent.UserText("hi", 1)}); changed {
		t.Error("a handler answering undefined replaced the user message")
	}
	msgs := []agent.Message{agent.UserText("one", 1), {Role: agent.RoleCustom, CustomType: "note", Content: []agent.ContentBlock{agent.TextBlock("n")}, Timestamp: 2}, reply}
	if got := r.Context(ctx, ext.ContextEvent{Messages: msgs}); !cmp.Equal(got, []agent.Message{msgs[0], msgs[2]}) {
		t.Errorf("context messages %+v", got)
	}
	r.MessageUpdate(ctx, ext.MessageUpdateEvent{Message: reply, AssistantMessageEvent: ext.AssistantMessageEvent{Type: ext.UpdateTextDelta, Delta: "lo"}})
	r.TurnStart(ctx, ext.TurnStartEvent{TurnIndex: 2, Timestamp: 5})
	h.wait(t, "the entries", func() bool { return h.entries["update"] != nil && h.entries["turn"] != nil })
	if got := string(h.entries["update"]); got != `{"same":true,"type":"text_delta","delta":"lo","text":"hello"}` {
		t.Errorf("message_update saw %s", got)
	}
	if got := string(h.entries["turn"]); got != `{"type":"turn_start","turnIndex":2,"timestamp":5}` {
		t.Errorf("turn_start saw %s", got)
	}
	if len(h.warnings) > 0 {
		t.Errorf("warnings %+v", h.warnings)
	}
}
