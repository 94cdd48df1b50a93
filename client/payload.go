package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// ReadPayload reads the whole payload id with payload/read, chunk after
// chunk from offset 0 until eof, and returns its bytes (spec: "History,
// listings, and large values"). Errors: the server's *Error
// (invalidParams with data.reason "unknown" or "expired": read the thread
// again for a fresh reference); a chunk that is not base64 or does not
// advance the offset as its nextOffset says.
func (c *Client) ReadPayload(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	var off int64
	for {
		res, err := Call(ctx, c, protocol.PayloadRead, protocol.PayloadReadParams{ID: id, Offset: off})
		if err != nil {
			return nil, err
		}
		b := res.Data // decoded from base64 by encoding/json
		out = append(out, b...)
		if res.EOF {
			return out, nil
		}
		if res.NextOffset == nil || *res.NextOffset != off+int64(len(b)) || len(b) == 0 {
			return nil, fmt.Errorf("client: payload %s: chunk of %d bytes at %d gave nextOffset %v", id, len(b), off, res.NextOffset)
		}
		off = *res.NextOffset
	}
}

// payloadWindow is how many payload/read requests ReadPayloadRef keeps in
// flight.
const payloadWindow = 8

// ReadPayloadRef reads the whole payload of ref, whose length it knows
// (ref.Bytes), with up to payloadWindow payload/read requests in flight at
// once (each chunk's offset is known in advance: chunks are
// protocol.MaxPayloadChunk bytes but the last), and returns its bytes.
// Errors: as ReadPayload's; a chunk whose length, nextOffset or eof does
// not match ref.Bytes.
func (c *Client) ReadPayloadRef(ctx context.Context, ref protocol.PayloadRef) ([]byte, error) {
	const chunk = protocol.MaxPayloadChunk
	if ref.Bytes <= chunk {
		return c.ReadPayload(ctx, ref.ID)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]byte, ref.Bytes)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	sem := make(chan struct{}, payloadWindow)
	for off := int64(0); off < ref.Bytes; off += chunk {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			res, err := Call(ctx, c, protocol.PayloadRead, protocol.PayloadReadParams{ID: ref.ID, Offset: off})
			if err != nil {
				fail(err)
				return
			}
			b := res.Data
			end := off + int64(len(b))
			if int64(len(b)) != min(int64(chunk), ref.Bytes-off) || res.EOF != (end == ref.Bytes) || (!res.EOF && (res.NextOffset == nil || *res.NextOffset != end)) {
				fail(fmt.Errorf("client: payload %s: chunk of %d bytes at %d (eof %v, nextOffset %v) does not fit its %d bytes", ref.ID, len(b), off, res.EOF, res.NextOffset, ref.Bytes))
				return
			}
			copy(out[off:end], b)
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ResolveItem returns it with every payload reference read back: an item
// sent as a reference (Ref) becomes the whole item; referenced arguments
// and output (ArgumentsRef, OutputRef) are filled in. An item without
// references is returned as it is. Errors as ReadPayload's, and an item
// payload that is not an item.
func (c *Client) ResolveItem(ctx context.Context, it protocol.Item) (protocol.Item, error) {
	if it.Ref != nil {
		b, err := c.ReadPayloadRef(ctx, *it.Ref)
		if err != nil {
			return it, err
		}
		var whole protocol.Item
		if err := json.Unmarshal(b, &whole); err != nil {
			return it, fmt.Errorf("client: item payload %s: %w", it.Ref.ID, err)
		}
		return whole, nil
	}
	if it.ArgumentsRef != nil {
		b, err := c.ReadPayloadRef(ctx, *it.ArgumentsRef)
		if err != nil {
			return it, err
		}
		it.Arguments, it.ArgumentsRef = json.RawMessage(b), nil
	}
	if it.OutputRef != nil {
		b, err := c.ReadPayloadRef(ctx, *it.OutputRef)
		if err != nil {
			return it, err
		}
		s := string(b)
		it.Output, it.OutputRef = &s, nil
	}
	return it, nil
}

// ResolveTurn returns t with every payload reference read back: a turn
// sent as a reference (Ref) becomes the whole turn with all its items;
// otherwise each item is resolved with ResolveItem. Errors as
// ResolveItem's, and a turn payload that is not a turn.
func (c *Client) ResolveTurn(ctx context.Context, t protocol.Turn) (protocol.Turn, error) {
	if t.Ref != nil {
		b, err := c.ReadPayloadRef(ctx, *t.Ref)
		if err != nil {
			return t, err
		}
		var whole protocol.Turn
		if err := json.Unmarshal(b, &whole); err != nil {
			return t, fmt.Errorf("client: turn payload %s: %w", t.Ref.ID, err)
		}
		return whole, nil
	}
	if len(t.Items) == 0 {
		return t, nil
	}
	items := make([]protocol.Item, len(t.Items))
	for i, it := range t.Items {
		r, err := c.ResolveItem(ctx, it)
		if err != nil {
			return t, err
		}
		items[i] = r
	}
	t.Items = items
	return t, nil
}
