package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// demoTimeout bounds the whole demo: a guard against a hung server, not a
// speed goal.
const demoTimeout = 3 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args and runs the demo; it returns the exit code: 0 when every
// step worked, 1 when one failed, 2 for a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("knightcode-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts options
	fs.StringVar(&opts.Bin, "bin", "bin/knightcode", "path to the built knightcode binary")
	fs.StringVar(&opts.Repo, "repo", "", "repository to clone (default: the repository of the working directory)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "knightcode-demo: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	if err := demo(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "knightcode-demo: %v\n", err)
		return 1
	}
	return 0
}
