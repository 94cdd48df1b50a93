// Command genschema writes every file package schemagen generates:
// app-server.schema.json (the JSON Schema of every message of the app-server
// protocol), app-server.d.ts (its TypeScript declarations) and
// rpc/protocol/schemagen/comments_gen.go (package protocol's doc comments,
// compiled into the binary for `knightcode app-server generate-schema` and
// `generate-ts`). Run it from the module root (`make schema`):
//
//	go run ./rpc/protocol/internal/genschema
package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/knightcode/knightcode/rpc/protocol/schemagen"
)

func main() {
	if err := write(); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}

// write generates the files from the source in the working directory (the
// module root) and writes them there.
func write() error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	files, err := schemagen.Files(".")
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.FromSlash(name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
