//go:build !linux

package main

// growOutputPipe does nothing off Linux (pipe_linux.go grows stdout's pipe).
func growOutputPipe(any) {}
