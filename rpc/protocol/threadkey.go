package protocol

// ThreadKey methods of the PerThread methods' params (ThreadScoped): each
// returns params.threadId, the key the rpc frame serializes requests by.

func (p ThreadArchiveParams) ThreadKey() string         { return p.ThreadID }
func (p ThreadUnarchiveParams) ThreadKey() string       { return p.ThreadID }
func (p ThreadDeleteParams) ThreadKey() string          { return p.ThreadID }
func (p ThreadDiffFileParams) ThreadKey() string        { return p.ThreadID }
func (p ThreadDiffReadParams) ThreadKey() string        { return p.ThreadID }
func (p ThreadDiffRevertParams) ThreadKey() string      { return p.ThreadID }
func (p FileListParams) ThreadKey() string              { return p.ThreadID }
func (p FileReadParams) ThreadKey() string              { return p.ThreadID }
func (p FileWriteParams) ThreadKey() string             { return p.ThreadID }
func (p GitStageParams) ThreadKey() string              { return p.ThreadID }
func (p GitUnstageParams) ThreadKey() string            { return p.ThreadID }
func (p ThreadResumeParams) ThreadKey() string          { return p.ThreadID }
func (p ThreadUnsubscribeParams) ThreadKey() string     { return p.ThreadID }
func (p ThreadSettingsUpdateParams) ThreadKey() string  { return p.ThreadID }
func (p TurnStartParams) ThreadKey() string             { return p.ThreadID }
func (p TurnSteerParams) ThreadKey() string             { return p.ThreadID }
func (p TurnQueueAddParams) ThreadKey() string          { return p.ThreadID }
func (p TurnQueueRemoveParams) ThreadKey() string       { return p.ThreadID }
func (p ThreadWorktreeRestoreParams) ThreadKey() string { return p.ThreadID }
