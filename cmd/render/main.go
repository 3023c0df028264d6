// Command render renders a tenantkube XR with `crossplane composition render`
// and the real Crossplane engine, starting the three composition functions
// locally. `make render` runs it; only the rendered YAML goes to stdout.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/tenantkube/tenantkube/internal/render"
)

type cli struct {
	Root     string   `default:"."   help:"Repository root (holds bin/, package/ and examples/)." type:"existingdir"`
	XR       string   `help:"Composite resource (XR) to render."                   required:""`
	Required []string `help:"File or directory of required resources (--required-resources); repeatable."`
	Observed string   `help:"File or directory of observed composed resources (--observed-resources)."`

	FirstReconcile bool `help:"Render an XKubernetesCluster's first reconcile: its management namespace not observed yet (by default it is, as on every later reconcile)." name:"first-reconcile"`

	RenderArg      []string          `help:"Extra flag for 'crossplane composition render'; repeatable." name:"render-arg"`
	Functions      string            `help:"Functions file (default <root>/examples/functions.yaml)."`
	Composition    string            `help:"Composition (default <root>/package/composition.yaml)."`
	XRD            string            `help:"XRD (default <root>/package/xrd.yaml, when it exists)."                         name:"xrd"`
	FunctionBinary map[string]string `help:"Serve a Function with this binary instead of <root>/bin/function-<name>: NAME=PATH." mapsep:","`
	Build          bool              `help:"go build the function binaries into <root>/bin first."`
	Verbose        bool              `help:"On failure, print crossplane's whole stderr and the functions' logs before the message."`
}

func main() {
	var c cli
	kong.Parse(&c, kong.Name("render"),
		kong.Description("Render a tenantkube XR through the real Crossplane engine with the composition functions started locally."),
		kong.UsageOnError())

	// SIGINT/SIGTERM cancel the render; the driver then stops every function
	// it started before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var stderr bytes.Buffer
	out, err := render.Render(ctx, render.Options{
		Root:           c.Root,
		XR:             c.XR,
		Required:       c.Required,
		Observed:       c.Observed,
		FirstReconcile: c.FirstReconcile,
		ExtraArgs:      c.RenderArg,
		Functions:      c.Functions,
		Composition:    c.Composition,
		XRD:            c.XRD,
		Binaries:       c.FunctionBinary,
		Build:          c.Build,
		Stderr:         &stderr,
	})
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		render.Exit("render", err, stderr.Bytes(), c.Verbose, interrupted)
	}
	// What crossplane reported besides the output (warnings).
	_, _ = os.Stderr.Write(stderr.Bytes())
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintf(os.Stderr, "render: %v\n", err) //nolint:errcheck // exiting
		os.Exit(1)
	}
}
