package protocol

// Rows of the project trust methods (spec: Method reference,
// project/trust/read and project/trust/set).
var (
	// ProjectTrustRead ("project/trust/read") reads the server-owned trust
	// decision of a directory's project.
	ProjectTrustRead = clientRequest[ProjectTrustReadParams, ProjectTrustReadResult]("project/trust/read", Concurrent)

	// ProjectTrustSet ("project/trust/set") records a trust decision for a
	// directory's project.
	ProjectTrustSet = clientRequest[ProjectTrustSetParams, ProjectTrustSetResult]("project/trust/set", Concurrent)
)

// ProjectTrustReadParams are the params of project/trust/read: an existing
// directory.
type ProjectTrustReadParams struct {
	Cwd string `json:"cwd"`
}

// ProjectTrustReadResult is the result of project/trust/read: Trusted is
// true, false or null (undecided); NeedsTrust means the project has
// project-local resources (a .knightcode folder) that need a decision;
// Project is the path the decision is kept under (at a managed worktree's
// cwd, its project).
type ProjectTrustReadResult struct {
	Trusted    *bool  `json:"trusted" jsonschema:"nullable"`
	NeedsTrust bool   `json:"needsTrust"`
	Project    string `json:"project"`
}

// ProjectTrustSetParams are the params of project/trust/set: an existing
// directory and the decision.
type ProjectTrustSetParams struct {
	Cwd     string `json:"cwd"`
	Trusted bool   `json:"trusted"`
}

// ProjectTrustSetResult is the (empty) result of project/trust/set.
type ProjectTrustSetResult struct{}
