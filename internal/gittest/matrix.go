package gittest

import (
	"strings"
	"testing"
)

// MatrixRun is the -run pattern of make test's second pass: every test
// that calls [CrashMatrix] has it in its name.
const MatrixRun = "Matrix"

// CrashMatrix marks t, a top-level test whose name holds [MatrixRun], as
// a crash matrix: one that stops an operation at each of its steps (a
// killed child process, or a goroutine ended there) and compares what
// recovery leaves on disk, case after case. Such a matrix runs once, in
// make test's non-race pass (`go test -run Matrix` over the packages that
// call CrashMatrix): under -race it is skipped, as the detector adds
// little there and multiplies its time; the code it drives runs under
// -race in the package's other tests. A test calling it without the
// pattern in its name fails, as that pass would never run it.
func CrashMatrix(t testing.TB) {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	if !strings.Contains(name, MatrixRun) {
		t.Fatalf("%s calls gittest.CrashMatrix, so its name must hold %q: make test runs the crash matrices with -run %s", name, MatrixRun, MatrixRun)
	}
	if RaceEnabled {
		t.Skip("a crash matrix: make test runs it once, without -race (go test -run " + MatrixRun + ")")
	}
}
