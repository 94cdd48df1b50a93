//go:build !unix

package handoff

// cpuTime is 0 where getrusage is missing: the benchmark then reports no
// CPU time.
func cpuTime() float64 { return 0 }
