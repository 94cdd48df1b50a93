package threads

import (
	"context"
	"encoding/xml"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/config"
)

// What a turn's model request is built from besides the conversation: the
// system prompt with the thread's skills and context files, and the input
// with a prompt template or /skill:name expanded (issue 13). Both are read
// at each turn start from the settings and resources of the thread's cwd,
// as command/list {threadId} lists them.

// turnContext is what a turn starting now in a cwd gets from its settings
// and resources.
type turnContext struct {
	// systemPrompt is the manager's system prompt, then the skills, then
	// the context files (systemPrompt).
	systemPrompt string
	// resources expand the input; nil when they could not be read.
	resources *config.ResourceSet
}

// turnContext reads the resources and context files of a turn in cwd. The
// resources (skills and prompt templates) are those of config.Store.Resources:
// the global ones and, for an explicitly trusted project, the project's. The
// context files are the agent directory's own AGENTS.md (or CLAUDE.md) and,
// for a trusted project only, those of cwd and every folder above it
// (config.ContextFiles). Failures and resource warnings are logged, never
// fatal: the turn then runs with what could be read.
func (s *settings) turnContext(ctx context.Context, cwd string) turnContext {
	agentDir := s.agentDir
	set, err := s.store().Resources(ctx, cwd)
	if err != nil {
		s.log.Warn("reading the thread's resources failed; the turn runs without skills, prompt templates and project context files", "cwd", cwd, "err", err)
		set = nil
	}
	trusted := set != nil && set.Trusted
	var files []config.ContextFile
	if agentDir != "" {
		projectCwd := cwd // an untrusted project's files are never opened
		if !trusted {
			projectCwd = ""
		}
		all, warnings := config.ContextFiles(agentDir, projectCwd)
		for _, w := range warnings {
			s.log.Warn("a context file is left out of the system prompt", "path", w.Path, "err", w.Message)
		}
		for _, f := range all {
			if trusted || filepath.Dir(f.Path) == filepath.Clean(agentDir) {
				files = append(files, f)
			}
		}
	}
	var skills []config.Skill
	if set != nil {
		skills = set.Skills
		for _, w := range set.Warnings {
			s.log.Warn("a resource is not loaded", "path", w.Path, "err", w.Message)
		}
	}
	return turnContext{systemPrompt: systemPrompt(s.systemPrompt, skills, files), resources: set}
}

// skillsPreamble introduces the skills list in the system prompt.
const skillsPreamble = `The following skills provide specialized instructions for specific tasks.
Use the read tool to load a skill's file when the task matches its description.
When a skill file references a relative path, resolve it against the skill's directory (the folder holding its SKILL.md).`

// contextPreamble introduces the context files in the system prompt.
const contextPreamble = "# Project Context\n\nProject-specific instructions and guidelines:"

// systemPrompt composes a turn's system prompt: base, then, when there are
// skills, skillsPreamble and
//
//	<available_skills>
//	  <skill>
//	    <name>NAME</name>
//	    <description>DESCRIPTION</description>
//	    <location>PATH of SKILL.md</location>
//	  </skill>
//	</available_skills>
//
// (values XML-escaped), then, when there are context files, contextPreamble
// and "## PATH\n\nCONTENT" for each, in the order given. Sections are
// separated by a blank line (the shape pi gives its system prompt).
func systemPrompt(base string, skills []config.Skill, files []config.ContextFile) string {
	parts := []string{strings.TrimRight(base, "\n")}
	if len(skills) > 0 {
		var b strings.Builder
		b.WriteString(skillsPreamble)
		b.WriteString("\n\n<available_skills>\n")
		for _, s := range skills {
			b.WriteString("  <skill>\n")
			b.WriteString("    <name>" + xmlEscape(s.Name) + "</name>\n")
			b.WriteString("    <description>" + xmlEscape(s.Description) + "</description>\n")
			b.WriteString("    <location>" + xmlEscape(s.Path) + "</location>\n")
			b.WriteString("  </skill>\n")
		}
		b.WriteString("</available_skills>")
		parts = append(parts, b.String())
	}
	if len(files) > 0 {
		section := []string{contextPreamble}
		for _, f := range files {
			section = append(section, "## "+f.Path+"\n\n"+strings.TrimRight(f.Content, "\n"))
		}
		parts = append(parts, strings.Join(section, "\n\n"))
	}
	return strings.Join(parts, "\n\n")
}

// xmlEscape escapes s for XML character data.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// modelInput is the user message the model gets for in: when its text
// starts with "/name" naming a prompt template, or "/skill:name" naming a
// skill, of the turn's resources, the text block holds the expansion
// (config.ResourceSet.Expand) and Typed what the user typed, which the
// userMessage item shows; otherwise the message is in.message() as it is.
func (tc turnContext) modelInput(in input) agent.Message {
	msg := in.message()
	if tc.resources == nil {
		return msg
	}
	expanded, ok := tc.resources.Expand(in.text)
	if !ok {
		return msg
	}
	msg = in.messageWith(expanded)
	msg.Typed = in.text
	return msg
}
