package config

import (
	"fmt"

	"github.com/knightcode/knightcode/internal/coreerr"
)

// ReasonUntrusted is ParamError.Reason for a project write refused because
// the project is not explicitly trusted (spec config/write: invalidParams
// with data.reason "untrusted").
const ReasonUntrusted = coreerr.ReasonUntrusted

// ParamError is the core invalidParams error ([coreerr.ParamError]): Field
// is its wire name ("cwd"), Message what is wrong with it, and Reason, when
// set, the wire's data.reason (ReasonUntrusted). rpc maps it to
// invalidParams.
type ParamError = coreerr.ParamError

// VersionConflictError is a config/write whose expectedVersion did not match
// the file under its lock: Version is the file's current version (a SHA-256
// hex, or VersionNone). rpc maps it to configConflict with data.version.
type VersionConflictError struct {
	Path    string
	Version string
}

func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("config: %s changed (now at version %s): read it again and resolve the conflict", e.Path, e.Version)
}

// CorruptError is a settings or tools file that does not parse, refused for
// a write and left as it is: Line and Column are one-based (0 when unknown).
// rpc maps it to internal.
type CorruptError struct {
	Path         string
	Line, Column int
	Err          error
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config: %s is not valid JSON at line %d, column %d (left as it is): %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("config: %s is not valid JSON (left as it is): %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }
