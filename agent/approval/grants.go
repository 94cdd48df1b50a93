package approval

import (
	"slices"
	"sync"
)

// Grants are one thread load's session grants (spec: Approvals): tool names
// granted with acceptForSession and shell prefixes granted with
// acceptPrefixForSession. They live as long as the load: make a new Grants
// when a thread loads and drop it on unload, so nothing is remembered across
// unloads or restarts. The zero value holds no grant and is ready to use; a
// nil *Grants holds no grant and may be read but not written. Safe for
// concurrent use.
type Grants struct {
	mu       sync.Mutex
	tools    map[string]bool
	prefixes []Prefix
}

// GrantTool remembers a session grant of tool. A shell tool is never granted
// this way (ShellOf): the call is ignored.
func (g *Grants) GrantTool(tool string) {
	if _, shell := ShellOf(tool); shell || tool == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tools == nil {
		g.tools = make(map[string]bool)
	}
	g.tools[tool] = true
}

// GrantPrefix remembers a session grant of prefix p; an empty prefix, or one
// already granted, is ignored.
func (g *Grants) GrantPrefix(p Prefix) {
	if len(p.Words) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if slices.ContainsFunc(g.prefixes, p.Equal) {
		return
	}
	g.prefixes = append(g.prefixes, Prefix{Shell: p.Shell, Words: slices.Clone(p.Words)})
}

// ToolGranted reports whether tool was granted for the session.
func (g *Grants) ToolGranted(tool string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tools[tool]
}

// PrefixGranted reports whether command, run in shell, matches a prefix
// granted for the session (Match: its own derived prefix is exactly a granted
// one).
func (g *Grants) PrefixGranted(shell Shell, command string) bool {
	if g == nil {
		return false
	}
	p, ok := Derive(shell, command)
	if !ok {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.ContainsFunc(g.prefixes, p.Equal)
}

// Outcome is what an answered approval does to the call.
type Outcome int

// The outcomes of Answer.
const (
	// OutcomeDecline: the call does not run; the decline message, if any,
	// reaches the model as the tool's decline reason.
	OutcomeDecline Outcome = iota
	// OutcomeRun: the call runs.
	OutcomeRun
	// OutcomeCancel: the call does not run and the turn ends interrupted
	// ("cancel always blocks execution").
	OutcomeCancel
)

// Answer applies the decision d a person gave to the approval v asked for a
// call of tool, and records the session grant it makes:
// acceptForSession grants tool, acceptPrefixForSession grants v.Prefix. A
// decision v did not offer (any unknown string included) is a decline and
// grants nothing (spec: "An unoffered decision is treated as decline and
// never grants permission").
func (g *Grants) Answer(tool string, v Verdict, d Decision) Outcome {
	if !slices.Contains(v.Decisions, d) {
		return OutcomeDecline
	}
	switch d {
	case DecisionAccept:
		return OutcomeRun
	case DecisionAcceptForSession:
		g.GrantTool(tool)
		return OutcomeRun
	case DecisionAcceptPrefixForSession:
		if v.Prefix == nil {
			return OutcomeDecline
		}
		g.GrantPrefix(*v.Prefix)
		return OutcomeRun
	case DecisionCancel:
		return OutcomeCancel
	}
	return OutcomeDecline
}
