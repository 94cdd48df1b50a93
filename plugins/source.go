package plugins

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/knightcode/knightcode/internal/coreerr"
)

// Source kinds (Source.Kind).
const (
	KindGitHub      = "github"
	KindGit         = "git"
	KindPath        = "path"
	KindMarketplace = "marketplace"
)

// GitHubBase is the URL an owner/repo source is cloned from:
// GitHubBase + "owner/repo.git". git's url.<base>.insteadOf rewrites it
// like any other URL (a mirror, or a local bare repository in tests).
const GitHubBase = "https://github.com/"

// Source is a parsed plugin or marketplace source (EXTENSIBILITY.md §4
// "source forms"): a GitHub repository (Repo "owner/repo"), a git URL
// (URL), an absolute folder (Dir), or a marketplace entry (Name and
// Marketplace); Path is a subfolder and Ref a branch, tag or commit.
type Source struct {
	Kind              string
	Repo              string
	URL               string
	Dir               string
	Path              string
	Ref               string
	Name, Marketplace string
}

// Canonical is the source's canonical form, the identity of a plugin
// installed from it and the key of its trust record: github:owner/repo,
// git:<url>, path:/abs/dir, each followed by #<path> when Path is set;
// name@marketplace for a marketplace entry.
func (s Source) Canonical() string {
	var c string
	switch s.Kind {
	case KindGitHub:
		c = "github:" + s.Repo
	case KindGit:
		c = "git:" + s.URL
	case KindPath:
		c = "path:" + s.Dir
	case KindMarketplace:
		return s.Name + "@" + s.Marketplace
	}
	if s.Path != "" {
		c += "#" + s.Path
	}
	return c
}

// CloneURL is the URL git clones for a GitHub or git source.
func (s Source) CloneURL() string {
	if s.Kind == KindGitHub {
		return GitHubBase + s.Repo + ".git"
	}
	return s.URL
}

var (
	ownerRepoRE   = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)
	marketEntryRE = regexp.MustCompile(`^([a-z0-9][a-z0-9._-]*)@([a-z0-9][a-z0-9._-]*)$`)
)

// ParseCanonical parses a canonical source ([Source.Canonical]) as a
// settings entry or trust record holds it. Errors: a string of no known
// form.
func ParseCanonical(c string) (Source, error) {
	body, sub, _ := strings.Cut(c, "#")
	var s Source
	switch {
	case strings.HasPrefix(body, "github:"):
		s = Source{Kind: KindGitHub, Repo: strings.TrimPrefix(body, "github:")}
		if !ownerRepoRE.MatchString(s.Repo) {
			return Source{}, fmt.Errorf("%q is not a GitHub owner/repo", s.Repo)
		}
	case strings.HasPrefix(body, "git:"):
		s = Source{Kind: KindGit, URL: strings.TrimPrefix(body, "git:")}
	case strings.HasPrefix(body, "path:"):
		s = Source{Kind: KindPath, Dir: strings.TrimPrefix(body, "path:")}
		if !filepath.IsAbs(s.Dir) {
			return Source{}, fmt.Errorf("%q is not an absolute folder", s.Dir)
		}
	default:
		return Source{}, fmt.Errorf("%q is not a canonical source (github:, git: or path:)", c)
	}
	if sub != "" {
		p, err := cleanSubPath(sub)
		if err != nil {
			return Source{}, err
		}
		s.Path = p
	}
	return s, nil
}

// canonicalForm splits a canonical path: or git: source (and a github:
// one with #sub) into the plain form ParseSource reads and its subfolder;
// ok is false for any other string (a plain git URL such as git://host/x
// is not git: followed by a URL).
func canonicalForm(source string) (plain, sub string, ok bool) {
	body, sub, hasSub := strings.Cut(source, "#")
	switch {
	case strings.HasPrefix(body, "path:") && filepath.IsAbs(strings.TrimPrefix(body, "path:")):
		return strings.TrimPrefix(body, "path:"), sub, true
	case strings.HasPrefix(body, "git:") && isGitURL(strings.TrimPrefix(body, "git:")):
		return strings.TrimPrefix(body, "git:"), sub, true
	case strings.HasPrefix(body, "github:") && hasSub:
		return body, sub, true
	}
	return "", "", false
}

// isGitURL reports the git URL forms: a scheme git fetches from, or
// scp-like git@host:path.
func isGitURL(s string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git://", "file://", "git@"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// checkURL refuses a URL carrying credentials: user information in an
// http(s) URL, or a password in any ([coreerr.ReasonCredentialsInURL]).
func checkURL(field, raw string) error {
	if strings.HasPrefix(raw, "git@") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return coreerr.Param(field, "%s is not a valid URL: %v", Redact(raw), err)
	}
	if u.User != nil {
		_, hasPassword := u.User.Password()
		if hasPassword || u.Scheme == "https" || u.Scheme == "http" {
			return coreerr.ParamReason(field, coreerr.ReasonCredentialsInURL,
				"%s carries credentials: remove them from the URL and let git's credential helper supply them", Redact(raw))
		}
	}
	return nil
}

// cleanSubPath checks a subfolder: relative, slash-separated, no "..".
func cleanSubPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	c := path.Clean(strings.TrimPrefix(p, "./"))
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("%q must be a relative subfolder inside the repository", p)
	}
	return c, nil
}

// ParseSource parses a plugin/install or plugin/marketplace/add source
// (EXTENSIBILITY.md §4): owner/repo or github:owner/repo, a git URL
// (https://, ssh://, git://, file://, git@host:path), an absolute folder,
// or (allowMarketplace) name@marketplace; ref and sub are the request's
// ref and path. cwd is the request's, used only to refuse an owner/repo
// that is also a folder of cwd. A canonical source as plugin/list shows
// one ([Source.Canonical]: path:/abs/dir, git:<url>, github:owner/repo,
// each with an optional #subfolder) is taken as its plain form, the part
// after "#" as sub (a sub given as well must be the same).
//
// Errors ([*coreerr.ParamError]): a relative folder (field source, reason
// relativePath; an owner/repo that names a folder of cwd lists both
// readings in Candidates); a URL with credentials (credentialsInUrl); an
// absolute folder that does not exist; a bad path ("path") or ref
// ("ref").
func ParseSource(source, ref, sub, cwd string, allowMarketplace bool) (Source, error) {
	if source == "" {
		return Source{}, coreerr.Param("source", "is required")
	}
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n\x00") {
		return Source{}, coreerr.Param("ref", "%q is not a branch, tag or commit", ref)
	}
	if plain, csub, ok := canonicalForm(source); ok {
		if sub != "" && csub != "" && sub != csub {
			return Source{}, coreerr.Param("path", "%q differs from the subfolder %q that source %s names", sub, csub, Redact(source))
		}
		source = plain
		if csub != "" {
			sub = csub
		}
	}
	p, err := cleanSubPath(sub)
	if err != nil {
		return Source{}, coreerr.Param("path", "%v", err)
	}
	s := Source{Ref: ref, Path: p}
	switch {
	case allowMarketplace && marketEntryRE.MatchString(source):
		m := marketEntryRE.FindStringSubmatch(source)
		s.Kind, s.Name, s.Marketplace = KindMarketplace, m[1], m[2]
		if p != "" {
			return Source{}, coreerr.Param("path", "a marketplace entry takes no path: its catalog says where the plugin is")
		}
	case strings.HasPrefix(source, "github:"):
		s.Kind, s.Repo = KindGitHub, strings.TrimSuffix(strings.TrimPrefix(source, "github:"), ".git")
		if !ownerRepoRE.MatchString(s.Repo) {
			return Source{}, coreerr.Param("source", "%q is not github:owner/repo", source)
		}
	case isGitURL(source):
		if err := checkURL("source", source); err != nil {
			return Source{}, err
		}
		s.Kind, s.URL = KindGit, source
	case filepath.IsAbs(source) && !strings.Contains(source, `\`):
		dir := filepath.Clean(source)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return Source{}, coreerr.Param("source", "%s is not an existing folder", source)
		}
		s.Kind, s.Dir = KindPath, dir
	case ownerRepoRE.MatchString(source) && !strings.HasPrefix(source, "."):
		if cwd != "" {
			if st, err := os.Stat(filepath.Join(cwd, source)); err == nil && st.IsDir() {
				return Source{}, &coreerr.ParamError{Field: "source", Reason: coreerr.ReasonRelativePath,
					Message:    fmt.Sprintf("%q is both a GitHub repository and a folder of %s: send github:%s or the absolute path", source, cwd, source),
					Candidates: []string{"github:" + source, filepath.Join(cwd, source)}}
			}
		}
		s.Kind, s.Repo = KindGitHub, strings.TrimSuffix(source, ".git")
	default:
		return Source{}, coreerr.ParamReason("source", coreerr.ReasonRelativePath,
			"%q is a relative folder path: the server's folder is not yours; send an absolute path", source)
	}
	return s, nil
}

// credentialsRE finds user information in URLs inside free text.
var credentialsRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@`)

// queryRE finds the query string of URLs inside free text.
var queryRE = regexp.MustCompile(`(://[^\s?]*)\?[^\s'"]*`)

// Redact replaces the user information and the query string of every URL
// in s with "***" (EXTENSIBILITY.md §4): rows, warnings, errors and git's
// words quoted in them never show a credential.
func Redact(s string) string {
	s = credentialsRE.ReplaceAllString(s, "${1}***@")
	return queryRE.ReplaceAllString(s, "${1}?***")
}
