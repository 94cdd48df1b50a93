package session

import (
	"encoding/json"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// RoleCustom is the role of an extension's message (pi's CustomMessage,
// {"role":"custom","customType","content","display","details"?,"timestamp"});
// it reads back as an extensionMessage item.
const RoleCustom = "custom"

// extensionDetails is the part of a custom message's details that its item
// shows.
type extensionDetails struct {
	BackgroundShells []protocol.BackgroundShellNotice `json:"backgroundShells"`
}

// ExtensionItem is the extensionMessage item of a custom message written by
// extension customType with text and details at completedAt (Unix ms), live
// and read back alike: its extension, text and, for background_shell, the
// backgroundShells of its details (nil when malformed). The caller gives it
// its id and index.
func ExtensionItem(customType, text string, details json.RawMessage, completedAt int64) protocol.Item {
	it := protocol.Item{Type: protocol.ItemExtensionMessage, Extension: customType, Text: text, CompletedAt: completedAt}
	if customType == protocol.ExtensionBackgroundShell && len(details) > 0 {
		var d extensionDetails
		if json.Unmarshal(details, &d) == nil {
			it.BackgroundShells = d.BackgroundShells
		}
	}
	return it
}
