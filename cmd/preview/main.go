// Command preview says what applying a changed tenantkube XR does to the
// cluster: it renders the XR over the observed composed resources with
// the real Crossplane engine and the three functions, as `make render`
// does, and prints per node group whether its machines are replaced and
// why, whether the control plane upgrades, which add-ons' values change
// and which composed resources are created, updated or deleted.
// `make preview` runs it; only the report goes to stdout.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/tenantkube/tenantkube/internal/preview"
	"github.com/tenantkube/tenantkube/internal/render"
)

type cli struct {
	Root     string   `default:"." help:"Repository root (holds bin/, package/ and examples/)." type:"existingdir"`
	XR       string   `help:"The changed composite resource (XR)."`
	Observed string   `help:"File or directory of the composed resources running now (YAML, kubectl List output accepted)."`
	Required []string `help:"File or directory of required resources (instance types, platform settings, MachineSets); repeatable."`
	Verbose  bool     `help:"On failure, print crossplane's whole stderr and the functions' logs before the message."`
	Kinds    bool     `help:"Print the composed resources' kinds for kubectl get (plural.group, comma-separated) and exit."`
}

func main() {
	var c cli
	kong.Parse(&c, kong.Name("preview"),
		kong.Description("Preview what applying a changed tenantkube XR does to the running cluster, from renders through the real Crossplane engine."),
		kong.UsageOnError())
	if c.Kinds {
		fmt.Println(strings.Join(preview.ComposedResources, ","))
		return
	}
	if c.XR == "" || c.Observed == "" {
		fmt.Fprintln(os.Stderr, "preview: --xr and --observed are required") //nolint:errcheck // exiting
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var stderr bytes.Buffer
	rep, err := render.Preview(ctx, render.Options{
		Root: c.Root, XR: c.XR, Observed: c.Observed, Required: c.Required, Stderr: &stderr,
	})
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		render.Exit("preview", err, stderr.Bytes(), c.Verbose, interrupted)
	}
	if _, err := fmt.Print(rep.String()); err != nil {
		fmt.Fprintf(os.Stderr, "preview: %v\n", err) //nolint:errcheck // exiting
		os.Exit(1)
	}
}
