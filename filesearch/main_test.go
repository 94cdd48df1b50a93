package filesearch

import (
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// TestMain runs the tests and benchmarks with HOME and the git environment
// in a temporary directory (gittest.Main), which also holds the benchmark
// repository.
func TestMain(m *testing.M) { gittest.Main(m) }
