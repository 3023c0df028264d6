// Command api-gen writes what derives from apis/v1alpha1's tables (the
// version table, the Talos support matrix, the rule tables) into the
// package's sources (spec.version's default and enum markers,
// talos.version's description of the matrix) and into the generated
// section of docs/validation.md. It is run by `make generate`, before
// controller-gen and crd-ref-docs read the sources; the lines it writes
// are never edited by hand.
package main

import (
	"os"
	"path/filepath"

	"github.com/alecthomas/kong"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/apigen"
)

type cli struct {
	Dir string `default:"apis/v1alpha1" help:"Directory of the API package, rewritten in place." type:"existingdir"`
	Doc string `default:"docs/validation.md" help:"docs/validation.md, whose generated section is rewritten in place." type:"existingfile"`
}

func main() {
	c := &cli{}
	ctx := kong.Parse(c, kong.Name("api-gen"), kong.Description("Write what derives from the API's tables."))
	ctx.FatalIfErrorf(c.run())
}

func (c *cli) run() error {
	lines := v1alpha1.VersionSourceLines(v1alpha1.KubernetesVersions, v1alpha1.TalosSupport)
	files := map[string]bool{}
	for _, l := range lines {
		files[l.File] = true
	}
	for file := range files {
		path := filepath.Join(c.Dir, file)
		if err := rewrite(path, func(src []byte) ([]byte, error) { return apigen.RewriteSource(file, src, lines) }); err != nil {
			return err
		}
	}
	return rewrite(c.Doc, func(doc []byte) ([]byte, error) {
		return apigen.ValidationDoc(doc, v1alpha1.KubernetesVersions, v1alpha1.TalosSupport, v1alpha1.RuleDocs())
	})
}

// rewrite writes f of path's contents to path when they differ.
func rewrite(path string, f func([]byte) ([]byte, error)) error {
	in, err := os.ReadFile(path) //nolint:gosec // the caller's file
	if err != nil {
		return err
	}
	out, err := f(in)
	if err != nil {
		return err
	}
	if string(out) == string(in) {
		return nil
	}
	return os.WriteFile(path, out, 0o644) //nolint:gosec // a source file
}
