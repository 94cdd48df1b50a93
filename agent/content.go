package agent

import (
	"encoding/json"
	"fmt"
)

// ContentType tags a ContentBlock: "text", "thinking", "image" or "toolCall".
// Blocks of other types read from a session file keep their JSON in Raw.
type ContentType string

// The content block types of the message model.
const (
	ContentText     ContentType = "text"     // {"type":"text","text"}
	ContentThinking ContentType = "thinking" // {"type":"thinking","thinking","thinkingSignature"?}
	ContentImage    ContentType = "image"    // {"type":"image","data":"<base64>","mimeType"}
	ContentToolCall ContentType = "toolCall" // {"type":"toolCall","id","name","arguments":{...}}
)

// ContentBlock is one block of a message's content: a tagged union whose Type
// says which fields are set. It round-trips through JSON exactly for the four
// known types; a block of any other type keeps its whole JSON object in Raw and
// is written back verbatim.
type ContentBlock struct {
	Type ContentType

	Text string // text

	Thinking          string // thinking
	ThinkingSignature string // thinking: the provider's opaque signature, if any

	Data     string // image: base64 bytes
	MimeType string // image: "image/png", "image/jpeg", "image/gif" or "image/webp"

	ID        string          // toolCall: the call id ("call_1")
	Name      string          // toolCall: the tool name
	Arguments json.RawMessage // toolCall: the arguments object; empty means {}

	Raw json.RawMessage // unknown types: the block as read
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: ContentText, Text: text} }

// ThinkingBlock returns a thinking content block.
func ThinkingBlock(thinking string) ContentBlock {
	return ContentBlock{Type: ContentThinking, Thinking: thinking}
}

// ToolCallBlock returns the content block of a tool call.
func ToolCallBlock(call ToolCall) ContentBlock {
	return ContentBlock{Type: ContentToolCall, ID: call.ID, Name: call.Name, Arguments: call.Arguments}
}

// ToolCall returns the block's call (meaningful for toolCall blocks).
func (b ContentBlock) ToolCall() ToolCall {
	return ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments}
}

// ToolCall is one tool invocation an assistant reply asks for: the call id (the
// wire item id of the call), the tool name and the JSON arguments object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type textJSON struct {
	Type ContentType `json:"type"`
	Text string      `json:"text"`
}

type thinkingJSON struct {
	Type      ContentType `json:"type"`
	Thinking  string      `json:"thinking"`
	Signature string      `json:"thinkingSignature,omitempty"`
}

type imageJSON struct {
	Type     ContentType `json:"type"`
	Data     string      `json:"data"`
	MimeType string      `json:"mimeType"`
}

type toolCallJSON struct {
	Type      ContentType     `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// MarshalJSON writes the block in the shape of its type; an unknown type is
// written as Raw when set, else as {"type": Type}.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case ContentText:
		return json.Marshal(textJSON{b.Type, b.Text})
	case ContentThinking:
		return json.Marshal(thinkingJSON{b.Type, b.Thinking, b.ThinkingSignature})
	case ContentImage:
		return json.Marshal(imageJSON{b.Type, b.Data, b.MimeType})
	case ContentToolCall:
		args := b.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		return json.Marshal(toolCallJSON{b.Type, b.ID, b.Name, args})
	}
	if len(b.Raw) > 0 {
		return b.Raw, nil
	}
	return json.Marshal(struct {
		Type ContentType `json:"type"`
	}{b.Type})
}

// UnmarshalJSON reads a block. It fails only when data is not a JSON object with
// a string "type" or a known type's field has the wrong JSON type; unknown types
// are kept in Raw.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var head struct {
		Type ContentType `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	*b = ContentBlock{Type: head.Type}
	var err error
	switch head.Type {
	case ContentText:
		var v textJSON
		err = json.Unmarshal(data, &v)
		b.Text = v.Text
	case ContentThinking:
		var v thinkingJSON
		err = json.Unmarshal(data, &v)
		b.Thinking, b.ThinkingSignature = v.Thinking, v.Signature
	case ContentImage:
		var v imageJSON
		err = json.Unmarshal(data, &v)
		b.Data, b.MimeType = v.Data, v.MimeType
	case ContentToolCall:
		var v toolCallJSON
		err = json.Unmarshal(data, &v)
		b.ID, b.Name, b.Arguments = v.ID, v.Name, v.Arguments
	default:
		b.Raw = append(json.RawMessage(nil), data...)
	}
	if err != nil {
		return fmt.Errorf("%s content block: %w", head.Type, err)
	}
	return nil
}
