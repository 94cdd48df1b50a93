package mcpauth

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// openTimeout bounds how long the system opener may run.
const openTimeout = 30 * time.Second

// openBrowser opens url in the system browser: the opener of the OS
// ([openerArgv]) with url as one argument of an argument array, never
// through a shell, so nothing in the URL is interpreted
// (EXTENSIBILITY.md §2, "OAuth sign-in"). It waits for the opener to exit
// (xdg-open, open and rundll32 return once the browser has the URL), at
// most 30 s. Callers check url with [CheckURL] first.
func openBrowser(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	argv := openerArgv(url)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mcpauth: %s: %w (%s)", argv[0], err, truncate(out, 200))
	}
	return nil
}

// truncate returns b as a string of at most n bytes.
func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
