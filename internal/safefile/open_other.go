//go:build !unix

package safefile

// openFlags: no extra open flags exist here (Windows opens neither FIFOs nor
// devices by an ordinary path; the fstat check still refuses anything not
// regular).
const openFlags = 0
