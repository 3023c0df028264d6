// Command configuration writes the root of the tenantkube Configuration
// package for the registry the packages are pushed to: package/crossplane.yaml
// with each Function dependency under that registry, and every
// package/composition*.yaml (the claim's, the namespaced TenantCluster's, the
// Tenant's) with each pipeline step's functionRef named as Crossplane names
// the Function it installs for that dependency, plus every package/xrd*.yaml
// as it is. `make xpkg XPKG_REGISTRY=...` builds the package from it.
//
// Crossplane's package manager names a dependency's Function after the
// dependency's repository path without the registry host, made a DNS label
// (the resolver of Crossplane v2.4, internal/controller/pkg/resolver
// NewPackage: ToDNSLabel of the reference's RepositoryStr): xpkg.tenantkube.io/tenantkube/function-workers
// → tenantkube-function-workers, registry.example.com/platform/tenantkube/function-workers
// → platform-tenantkube-function-workers. A registry with a path therefore
// changes the names the Composition must use; an ImageConfig rewriting the
// canonical prefix at install time does not (the name comes from dependsOn).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// CanonicalRegistry is the registry package/crossplane.yaml names the
// Function packages under; the committed Composition uses the Function
// names Crossplane derives from it.
const CanonicalRegistry = "xpkg.tenantkube.io"

type cli struct {
	PackageRoot string `default:"package" help:"Directory with crossplane.yaml, composition*.yaml and xrd*.yaml." type:"existingdir"`
	Registry    string `default:"xpkg.tenantkube.io" help:"Registry (host, optionally with a path) the packages are pushed to, without /tenantkube."`
	Output      string `help:"Directory to write the package root to." required:"" type:"path"`
}

func main() {
	c := &cli{}
	ctx := kong.Parse(c, kong.Name("configuration"),
		kong.Description("Write the tenantkube Configuration package root for the registry the packages are pushed to."))
	ctx.FatalIfErrorf(c.run())
}

func (c *cli) run() error {
	meta, comps, err := Render(c.PackageRoot, c.Registry)
	if err != nil {
		return err
	}
	xrds, err := filepath.Glob(filepath.Join(c.PackageRoot, xrdGlob))
	if err != nil {
		return err
	}
	if len(xrds) == 0 {
		return fmt.Errorf("%s: no %s (run make generate)", c.PackageRoot, xrdGlob)
	}
	out := map[string][]byte{"crossplane.yaml": meta}
	for f, b := range comps {
		out[f] = b
	}
	for _, p := range xrds {
		b, err := os.ReadFile(p) //nolint:gosec // the caller's package root
		if err != nil {
			return err
		}
		out[filepath.Base(p)] = b
	}
	if err := os.MkdirAll(c.Output, 0o755); err != nil {
		return err
	}
	for f, b := range out {
		if err := os.WriteFile(filepath.Join(c.Output, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The package's Compositions and XRDs, by file name in the package root.
const (
	compositionGlob = "composition*.yaml"
	xrdGlob         = "xrd*.yaml"
)

// FunctionName is the name Crossplane gives the Function it installs for a
// dependency on the package at source (a reference without tag).
func FunctionName(source string) (string, error) {
	ref, err := name.ParseReference(source)
	if err != nil {
		return "", fmt.Errorf("dependency %q: %w", source, err)
	}
	return dnsLabel(ref.Context().RepositoryStr()), nil
}

// dnsLabel makes a repository path a DNS label the way Crossplane's
// package manager does (crossplane-runtime v2.4 pkg/xpkg ToDNSLabel, not
// imported: that package pulls every registry's credential helpers into
// this module): of the first 63 bytes, lower-case letters and digits are
// kept, '.', '/', ':' and '-' become '-' except as the first or last byte
// of that span, anything else is dropped; leading and trailing '-' go.
func dnsLabel(s string) string {
	var b strings.Builder
	last := min(len(s), 63) - 1
	for i := 0; i <= last; i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		case (c == '.' || c == '/' || c == ':' || c == '-') && i != 0 && i != last && i != len(s)-1:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// Render returns crossplane.yaml of root with every Function dependency
// under CanonicalRegistry moved to registry, and each composition*.yaml of
// root, by file name, with every functionRef that names such a
// dependency's Function renamed to match.
func Render(root, registry string) (meta []byte, compositions map[string][]byte, err error) {
	registry = strings.TrimSuffix(registry, "/")
	var pkg map[string]any
	if err := readYAML(filepath.Join(root, "crossplane.yaml"), &pkg); err != nil {
		return nil, nil, err
	}
	renamed := map[string]string{} // Function name for the canonical registry → for registry
	spec, _ := pkg["spec"].(map[string]any)
	deps, _ := spec["dependsOn"].([]any)
	for _, d := range deps {
		dep, _ := d.(map[string]any)
		src, _ := dep["function"].(string)
		rest, ok := strings.CutPrefix(src, CanonicalRegistry+"/")
		if !ok {
			continue
		}
		moved := registry + "/" + rest
		from, err := FunctionName(src)
		if err != nil {
			return nil, nil, err
		}
		to, err := FunctionName(moved)
		if err != nil {
			return nil, nil, err
		}
		dep["function"] = moved
		renamed[from] = to
	}
	if len(renamed) == 0 {
		return nil, nil, fmt.Errorf("%s: no Function dependency under %s", filepath.Join(root, "crossplane.yaml"), CanonicalRegistry)
	}
	files, err := filepath.Glob(filepath.Join(root, compositionGlob))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no %s", root, compositionGlob)
	}
	compositions = map[string][]byte{}
	for _, f := range files {
		b, err := renameFunctionRefs(f, renamed)
		if err != nil {
			return nil, nil, err
		}
		compositions[filepath.Base(f)] = b
	}
	if meta, err = yaml.Marshal(pkg); err != nil {
		return nil, nil, err
	}
	return meta, compositions, nil
}

// renameFunctionRefs returns the Composition at path with each pipeline
// step's functionRef renamed by renamed; a step naming a Function that no
// dependency installs is an error.
func renameFunctionRefs(path string, renamed map[string]string) ([]byte, error) {
	var comp map[string]any
	if err := readYAML(path, &comp); err != nil {
		return nil, err
	}
	cspec, _ := comp["spec"].(map[string]any)
	steps, _ := cspec["pipeline"].([]any)
	if len(steps) == 0 {
		return nil, fmt.Errorf("%s: no pipeline steps", filepath.Base(path))
	}
	for _, s := range steps {
		step, _ := s.(map[string]any)
		ref, _ := step["functionRef"].(map[string]any)
		n, _ := ref["name"].(string)
		to, ok := renamed[n]
		if !ok {
			return nil, fmt.Errorf("%s: step %v refers to Function %q, which no dependency of crossplane.yaml under %s installs", filepath.Base(path), step["step"], n, CanonicalRegistry)
		}
		ref["name"] = to
	}
	return yaml.Marshal(comp)
}

func readYAML(path string, out any) error {
	b, err := os.ReadFile(path) //nolint:gosec // the caller's package root
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
