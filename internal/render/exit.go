package render

import (
	"errors"
	"fmt"
	"os"
)

// Exit ends a command (prog: render, preview) that failed with err: a
// Crossplane failure prints the function's message without the prefixes
// each layer of crossplane adds (and crossplane's whole stderr when
// verbose) and exits with crossplane's code; any other error exits 1, or
// 130 when the command was interrupted.
func Exit(prog string, err error, stderr []byte, verbose, interrupted bool) {
	var ce *CrossplaneError
	if errors.As(err, &ce) {
		if verbose {
			_, _ = os.Stderr.Write(stderr)
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, Message(ce.Stderr)) //nolint:errcheck // exiting
		os.Exit(max(ce.ExitCode, 1))
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err) //nolint:errcheck // exiting
	if interrupted {
		os.Exit(130)
	}
	os.Exit(1)
}
