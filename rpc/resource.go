package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The resource family: resource/list and resource/set over
// config.Store's resources (spec: Method reference, resource/list and
// resource/set). Installed by RegisterSettingsMethods.

// resourceList answers resource/list from Store.Resources: what a thread
// in cwd (or with no project) finds, installing nothing, with the
// warnings of what it cannot list (a package not on disk).
func (s Settings) resourceList(ctx context.Context, _ *jsonrpc.Conn, p protocol.ResourceListParams) (protocol.ResourceListResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ResourceListResult{}, err
	}
	set, err := s.Store.Resources(ctx, p.Cwd)
	if err != nil {
		return protocol.ResourceListResult{}, err
	}
	res := protocol.ResourceListResult{Resources: []protocol.ResourceInfo{}, Warnings: warnings(set.Warnings)}
	for _, r := range set.Resources {
		res.Resources = append(res.Resources, protocol.ResourceInfo{
			Type: r.Type, Path: r.Path, Name: r.Name, Enabled: r.Enabled,
			Scope: string(r.Scope), Origin: r.Origin, Source: r.Source,
		})
	}
	return res, nil
}

// resourceSet answers resource/set with Store.SetResource: a + or -
// pattern in the settings of the scope defining the resource, for threads
// that load afterwards. Errors: invalidParams for an unknown path ("path")
// or an untrusted project ("cwd", data.reason "untrusted"); a corrupt
// settings file (internal).
func (s Settings) resourceSet(ctx context.Context, _ *jsonrpc.Conn, p protocol.ResourceSetParams) (protocol.ResourceSetResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ResourceSetResult{}, err
	}
	if err := s.Store.SetResource(ctx, p.Cwd, p.Type, p.Path, p.Enabled); err != nil {
		return protocol.ResourceSetResult{}, err
	}
	return protocol.ResourceSetResult{}, nil
}
