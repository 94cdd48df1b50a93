package diffscope

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

func TestZZStepTimes(t *testing.T) {
	dir := os.Getenv("ZZ_DIR")
	if dir == "" {
		t.Skip()
	}
	var hb, wb strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&hb, "line %d of the file\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&wb, "LINE %d changed\n", i)
		} else {
			fmt.Fprintf(&wb, "line %d of the file\n", i)
		}
	}
	if _, err := os.Stat(dir + "/" + bigHunkFile); err != nil {
		gittest.Write(t, dir, bigHunkFile, hb.String())
		gittest.Git(t, dir, "add", "--", bigHunkFile)
		gittest.Git(t, dir, "commit", "-q", "-m", "500 hunks", "--", bigHunkFile)
	}
	var last time.Time
	var marks []string
	r, _ := gitcli.New()
	r = r.WithStartHook(func(a []string) {
		marks = append(marks, fmt.Sprintf("%6.2fms start %v", float64(time.Since(last).Microseconds())/1000, a))
		last = time.Now()
	})
	d := NewWithConfig(r, Config{OplogDir: t.TempDir(), StepHook: func(s string) {
		marks = append(marks, fmt.Sprintf("%6.2fms %s", float64(time.Since(last).Microseconds())/1000, s))
		last = time.Now()
	}})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		gittest.Write(t, dir, bigHunkFile, wb.String())
		res, err := d.Read(ctx, dir, ReadOptions{Scope: ScopeUnstaged, Budget: -1})
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, f := range res.Files {
			if f.Path == bigHunkFile {
				id = f.Hunks[250].ID
			}
		}
		marks = nil
		start := time.Now()
		last = start
		if _, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: bigHunkFile, HunkID: id}); err != nil {
			t.Fatal(err)
		}
		marks = append(marks, fmt.Sprintf("%6.2fms end", float64(time.Since(last).Microseconds())/1000))
		t.Logf("total %v\n%s", time.Since(start), strings.Join(marks, "\n"))
	}
	gittest.Write(t, dir, bigHunkFile, hb.String())
}
