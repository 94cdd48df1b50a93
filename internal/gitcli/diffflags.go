package gitcli

import "strconv"

// DiffOptions returns the pinned options for every diff knightcode parses or
// turns into a patch (diff, diff-tree, diff-index, diff-files): no external
// diff or textconv, no color, a/ and b/ prefixes whatever diff.noprefix or
// diff.mnemonicPrefix say, Myers with the indent heuristic, hunks never
// merged across unchanged lines (--inter-hunk-context=0), full blob ids in
// index lines, and submodules as gitlink lines. Hunk boundaries and hunk ids
// therefore do not depend on the user's configuration (ARCHITECTURE.md,
// "Git"; shared/cases C01, C07, C08). It does not ask for a patch, so it
// also fits --numstat and --raw calls.
func DiffOptions() []string {
	return []string{
		"--no-ext-diff", "--no-textconv", "--no-color",
		"--src-prefix=a/", "--dst-prefix=b/",
		"--diff-algorithm=myers", "--indent-heuristic",
		"--inter-hunk-context=0", "--full-index", "--submodule=short",
	}
}

// DiffFlags returns [DiffOptions] plus -U<context>: a patch with that many
// context lines.
func DiffFlags(context int) []string {
	return append(DiffOptions(), "-U"+strconv.Itoa(context))
}

// ApplyFlags returns the pinned options for every `git apply`: whitespace
// neither warned about nor fixed, so the bytes applied are the bytes read,
// and context matched exactly whatever apply.ignoreWhitespace says.
func ApplyFlags() []string {
	return []string{"--whitespace=nowarn", "--no-ignore-whitespace"}
}
