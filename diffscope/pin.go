package diffscope

import (
	"context"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// PinPrefix is the namespace refs made by [Differ.Pin] live under.
const PinPrefix = "refs/knightcode/"

// Pin points ref at objectID (`git update-ref ref objectID`) in the
// repository of checkout, so the object (a tree captured around a turn, for
// instance) stays reachable and `git gc` keeps it. A ref may point at a
// tree. ref must be a full ref name under refs/knightcode/; git checks the
// rest of its format (ARCHITECTURE.md, "The mechanism everything shares").
//
// Errors: [*ParamError] ("ref") for a ref outside refs/knightcode/,
// ("objectID") for an id that is not 40 or 64 hex digits; an error matching
// gitcli.ErrNotRepo when checkout is not in a repository; *gitcli.Error
// when git refuses (a malformed ref name, a missing object).
func (d *Differ) Pin(ctx context.Context, checkout, ref, objectID string) error {
	if !strings.HasPrefix(ref, PinPrefix) || len(ref) == len(PinPrefix) {
		return paramErr("ref", "%q is not under %s", ref, PinPrefix)
	}
	if !isHexID(objectID, 40) && !isHexID(objectID, 64) {
		return paramErr("objectID", "%q is not a full object id", objectID)
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return err
	}
	_, err = d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: []string{"update-ref", ref, objectID}, Write: true})
	return err
}
