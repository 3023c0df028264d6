package test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	genericfeatures "k8s.io/apiserver/pkg/features"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// TestXRDHoldsGoLists: the XRD's CEL rules on the API server's extra
// flags, volumes and mounts carry the lists Validate uses
// (v1alpha1.ReservedFlags, PeerProxyFeatureGate, OIDCFlags, VerbosityFlag, ReservedVolumeNames,
// ReservedMountPaths), so
// the two cannot drift apart.
func TestXRDHoldsGoLists(t *testing.T) {
	api := xrdRootSchema(t).Properties["spec"].Properties["controlPlane"].Properties["apiServer"]
	rules := func(v []string) string { return strings.Join(v, "\n") }
	var argRules, volumeRules, mountRules []string
	for _, r := range api.Properties["extraArgs"].Items.Schema.XValidations {
		argRules = append(argRules, r.Rule)
	}
	for _, r := range api.Properties["extraVolumes"].Items.Schema.XValidations {
		volumeRules = append(volumeRules, r.Rule)
	}
	for _, r := range api.Properties["extraVolumeMounts"].Items.Schema.XValidations {
		mountRules = append(mountRules, r.Rule)
	}
	if !strings.Contains(rules(argRules), "'"+v1alpha1.ReservedFlags+"'") {
		t.Errorf("no CEL rule of extraArgs items matches v1alpha1.ReservedFlags %s:\n%s", v1alpha1.ReservedFlags, rules(argRules))
	}
	if !strings.Contains(rules(argRules), "!self.matches('"+v1alpha1.PeerProxyFeatureGate+"')") {
		t.Errorf("no CEL rule of extraArgs items refuses v1alpha1.PeerProxyFeatureGate %s:\n%s", v1alpha1.PeerProxyFeatureGate, rules(argRules))
	}
	if !strings.Contains(rules(argRules), "!self.matches('"+v1alpha1.OIDCFlags+"')") {
		t.Errorf("no CEL rule of extraArgs items refuses v1alpha1.OIDCFlags %s:\n%s", v1alpha1.OIDCFlags, rules(argRules))
	}
	if !strings.Contains(rules(argRules), "!self.matches('"+v1alpha1.VerbosityFlag+"') || self.matches('"+v1alpha1.MaxVerbosityFlag+"')") {
		t.Errorf("no CEL rule of extraArgs items bounds --v as v1alpha1.VerbosityFlag and MaxVerbosityFlag:\n%s", rules(argRules))
	}
	quoted := func(v []string) string { return "['" + strings.Join(v, "', '") + "']" }
	if !strings.Contains(rules(volumeRules), quoted(v1alpha1.ReservedVolumeNames)) {
		t.Errorf("no CEL rule of extraVolumes items lists v1alpha1.ReservedVolumeNames %s:\n%s", quoted(v1alpha1.ReservedVolumeNames), rules(volumeRules))
	}
	if !strings.Contains(rules(mountRules), quoted(v1alpha1.ReservedMountPaths)) {
		t.Errorf("no CEL rule of extraVolumeMounts items lists v1alpha1.ReservedMountPaths %s:\n%s", quoted(v1alpha1.ReservedMountPaths), rules(mountRules))
	}
}

// kubernetesModuleDir is the directory of the module k8s.io/kubernetes
// that tools/kubernetes pins (kube-apiserver's own source) in the Go
// module cache, downloaded by the go command when it is not there yet
// (what building bin/kube-apiserver does). The test is skipped when it
// cannot be had, or fails under TENANTKUBE_REQUIRE_TOOLS.
func kubernetesModuleDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes")
	cmd.Dir = filepath.Join(repoRoot(t), "tools", "kubernetes")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err != nil || mod.Dir == "" {
		if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
			t.Fatalf("cannot download k8s.io/kubernetes of tools/kubernetes: %v %s", err, mod.Error)
		}
		t.Skipf("cannot download k8s.io/kubernetes of tools/kubernetes: %v %s", err, mod.Error)
	}
	return mod.Dir
}

// kubeAPIServerFlags are the names of the flags kube-apiserver's own
// options register in the packages of k8s.io/kubernetes that define them
// (cmd/kube-apiserver/app/options, pkg/controlplane/apiserver/options): the
// string literal naming the flag in each pflag call fs.<Type>Var[P](p,
// "name", ...) and fs.Var(v, "name", ...).
func kubeAPIServerFlags(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, pkg := range []string{"cmd/kube-apiserver/app/options", "pkg/controlplane/apiserver/options"} {
		files, err := filepath.Glob(filepath.Join(dir, pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", filepath.Join(dir, pkg), err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !(strings.HasSuffix(sel.Sel.Name, "Var") || strings.HasSuffix(sel.Sel.Name, "VarP")) {
					return true
				}
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if name, err := strconv.Unquote(lit.Value); err == nil {
						names = append(names, name)
					}
				}
				return true
			})
		}
	}
	return names
}

// TestPeerProxyRefused: every --peer-* flag of kube-apiserver v1.36 (read
// from its source, not from tenantkube's list) and every spelling of
// --feature-gates naming the peer proxy's gate
// UnknownVersionInteroperabilityProxy (the gate's name from
// k8s.io/apiserver, whose registration for kube-apiserver is read from the
// source too) are refused by both the XRD and Validate, naming the entry.
// With them the control plane's replicas would proxy requests to an
// address and port a tenant chose, from the management network.
func TestPeerProxyRefused(t *testing.T) {
	dir := kubernetesModuleDir(t)
	var peer []string
	for _, name := range kubeAPIServerFlags(t, dir) {
		if strings.HasPrefix(name, "peer-") {
			peer = append(peer, name)
		}
	}
	if len(peer) == 0 {
		t.Fatalf("kube-apiserver in %s registers no --peer-* flag: the source moved, read it again", dir)
	}
	gate := string(genericfeatures.UnknownVersionInteroperabilityProxy)
	features, err := os.ReadFile(filepath.Join(dir, "pkg", "features", "kube_features.go"))
	if err != nil || !strings.Contains(string(features), "genericfeatures."+gate+":") {
		t.Fatalf("kube-apiserver's feature gates (pkg/features/kube_features.go) do not register %s: %v", gate, err)
	}
	xrd := clusterAdmission(t)
	var refused []string
	for _, name := range peer {
		refused = append(refused, "--"+name+"=10.0.0.1", "--"+name)
	}
	refused = append(refused,
		"--feature-gates="+gate+"=true",
		"--feature-gates="+gate+"=false",
		"--feature-gates=APIServerIdentity=true, "+gate+"=TRUE",
		"--feature-gates=\u00a0"+gate+"\u00a0=1", // kube-apiserver trims Unicode white space around a key
	)
	for _, arg := range refused {
		spec := `{controlPlane: {apiServer: {extraArgs: [` + strconv.Quote(arg) + `]}}}`
		for who, errs := range map[string]field.ErrorList{"XRD admission": xrd.admit(t, spec, ""), "spec.Validate()": clusterValidate(t, spec)} {
			if got := fieldPaths(errs); len(got) != 1 || got[0] != "spec.controlPlane.apiServer.extraArgs[0]" || !namesValue(errs, arg) {
				t.Errorf("%s: %q: want one refusal of spec.controlPlane.apiServer.extraArgs[0] naming it, got %v", who, arg, errs.ToAggregate())
			}
		}
	}
	// Other gates and flags named like the peer proxy's stay the tenant's.
	for _, arg := range []string{"--feature-gates=APIServerIdentity=true", "--profiling=false"} {
		spec := `{controlPlane: {apiServer: {extraArgs: [` + strconv.Quote(arg) + `]}}}`
		for who, errs := range map[string]field.ErrorList{"XRD admission": xrd.admit(t, spec, ""), "spec.Validate()": clusterValidate(t, spec)} {
			if len(errs) > 0 {
				t.Errorf("%s: %q refused: %v", who, arg, errs.ToAggregate())
			}
		}
	}
	t.Logf("kube-apiserver's --peer-* flags: %v", peer)
}

// namesValue reports whether the messages of errs name v, as written or
// Go-quoted (field.Invalid quotes a string value).
func namesValue(errs field.ErrorList, v string) bool {
	msg := errs.ToAggregate().Error()
	return strings.Contains(msg, v) || strings.Contains(msg, strconv.Quote(v))
}
