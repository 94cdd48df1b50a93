package gitstate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeInfo is a file size for chooseUntracked tests.
type fakeInfo struct {
	os.FileInfo
	size int64
}

func (f fakeInfo) Size() int64       { return f.size }
func (f fakeInfo) Mode() os.FileMode { return 0o644 }

func TestChooseUntracked(t *testing.T) {
	files := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%sf%04d", prefix, i)
		}
		return out
	}
	cat := func(groups ...[]string) []string {
		var out []string
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	type want struct {
		included int
		skipped  int
		dropped  bool
		excluded []string // folders none of whose files are included
		leftOut  []string // what choice.leftOut names
	}
	tests := []struct {
		name  string
		paths []string
		big   map[string]bool
		want  want
	}{
		{"few files", files("src/", 10), nil, want{included: 10}},
		{"exactly 500", files("a/", 500), nil, want{included: 500}},
		{"501 in one folder: folder left out", files("a/", 501), nil, want{skipped: 501, excluded: []string{"a/"}, leftOut: []string{"a/"}}},
		{"a folder of 250 among 550", cat(files("gen/", 250), files("a/", 150), files("b/", 150)), nil,
			want{included: 300, skipped: 250, excluded: []string{"gen/"}, leftOut: []string{"gen/"}}},
		{"deepest folder first: the project's own files stay", cat(files("web/node_modules/x/", 300), files("web/node_modules/y/", 199), files("web/src/", 150)), nil,
			want{included: 349, skipped: 300, excluded: []string{"web/node_modules/x/"}, leftOut: []string{"web/node_modules/x/"}}},
		{"nested big folders", cat(files("web/node_modules/x/", 300), files("web/node_modules/y/", 150), files("web/node_modules/", 150), files("web/src/", 150), files("web/z/", 100)), nil,
			want{included: 250, skipped: 600, excluded: []string{"web/node_modules/"}, leftOut: []string{"web/node_modules/"}}},
		{"no big folder: all dropped", cat(files("a/", 199), files("b/", 199), files("c/", 199)), nil,
			want{skipped: 597, dropped: true}},
		{"big folders left out, still too many: dropped", cat(files("gen/", 300), files("a/", 199), files("b/", 199), files("c/", 199)), nil,
			want{skipped: 897, dropped: true}},
		{"files over 10 MiB left out", cat(files("a/", 3)), map[string]bool{"a/f0001": true},
			want{included: 2, skipped: 1, leftOut: []string{"a/f0001"}}},
		{"big files bring 501 to 500", files("a/", 501), nil, want{skipped: 501, excluded: []string{"a/"}, leftOut: []string{"a/"}}},
		{"root files over the limit", files("", 501), map[string]bool{"f0000": true}, want{included: 500, skipped: 1, leftOut: []string{"f0000"}}},
		{"names bounded", files("a/", 8), map[string]bool{"a/f0000": true, "a/f0001": true, "a/f0002": true, "a/f0003": true, "a/f0004": true, "a/f0005": true, "a/f0006": true},
			want{included: 1, skipped: 7, leftOut: []string{"a/f0000", "a/f0001", "a/f0002", "a/f0003", "a/f0004", "a/f0005"}}},
		{"root files over the limit, none big", files("", 501), nil, want{skipped: 501, dropped: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chooseUntracked(tc.paths, func(p string) (os.FileInfo, error) {
				if tc.big[p] {
					return fakeInfo{size: MaxUntrackedSize + 1}, nil
				}
				return fakeInfo{size: 10}, nil
			})
			g := want{included: len(got.include), skipped: got.skipped, dropped: got.dropped, leftOut: got.leftOut}
			for _, ex := range tc.want.excluded {
				for _, p := range got.include {
					if strings.HasPrefix(p, ex) {
						t.Errorf("%s included, but %s should be left out", p, ex)
						break
					}
				}
			}
			g.excluded = tc.want.excluded
			if diff := cmp.Diff(g, tc.want, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
