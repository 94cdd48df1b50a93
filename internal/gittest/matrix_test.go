package gittest

import (
	"fmt"
	"runtime"
	"testing"
)

// stopTB is a testing.TB whose Fatalf and Skip record what they were
// given and end the goroutine, as the real ones do.
type stopTB struct {
	testing.TB
	name        string
	fatal, skip string
}

func (s *stopTB) Name() string { return s.name }
func (s *stopTB) Helper()      {}
func (s *stopTB) Fatalf(format string, args ...any) {
	s.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (s *stopTB) Skip(args ...any) {
	s.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

// CrashMatrix fails a test whose name the second pass's -run pattern
// misses, skips a matrix under -race and lets it run without.
func TestCrashMatrix(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fatal, skip bool
	}{
		{"TestHandoffKillMatrix/local/begun", false, RaceEnabled},
		{"TestCrashEveryStepMatrix", false, RaceEnabled},
		{"TestCrashEveryStep", true, false},
		{"TestCrashEveryStep/Matrix", true, false}, // a subtest's name is not what -run matches first
	} {
		s := &stopTB{name: tc.name}
		done := make(chan struct{})
		go func() {
			defer close(done)
			CrashMatrix(s)
		}()
		<-done
		if (s.fatal != "") != tc.fatal || (s.skip != "") != tc.skip {
			t.Errorf("CrashMatrix in %s: fatal %q, skip %q; want fatal %v, skip %v", tc.name, s.fatal, s.skip, tc.fatal, tc.skip)
		}
	}
}
