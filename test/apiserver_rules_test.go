package test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	genericfeatures "k8s.io/apiserver/pkg/features"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Reserved volume names and mount paths of the control-plane pod, from
// their upstream sources (Kamaji at the pinned commit e51909fa, the one
// test/e2e plays; tenantkube's own volumes are held to the composed pod by
// functions/control-plane's TestPodNames).
var (
	upstreamVolumeNames = []string{
		v1alpha1.AuthenticationConfigVolume, v1alpha1.TalosCAVolume, v1alpha1.TalosTLSVolume, v1alpha1.EncryptionConfigVolume,
		// the KMS plugins' socket directories, at most two generations
		// (functions/control-plane/encryption.go mountEncryption)
		"encryption-kms-0", "encryption-kms-1",
		// kamaji internal/builders/controlplane/deployment.go:31-41
		"etc-kubernetes-pki", "etc-ca-certificates", "usr-share-ca-certificates", "usr-local-share-ca-certificates",
		"scheduler-kubeconfig", "controller-manager-kubeconfig", "kine-uds", "kine-config", "kine-certs",
		// kamaji internal/builders/controlplane/konnectivity_server.go:28-30
		"egress-selector-configuration", "konnectivity-uds", "konnectivity-server-kubeconfig",
		// kamaji v1.0.0 internal/builders/controlplane/deployment.go:34,250-262
		// (buildSSLCertsVolume reuses a volume of that name)
		"etc-ssl-certs",
	}
	upstreamMountPaths = []string{
		// kamaji internal/builders/controlplane/deployment.go:531,541,546,551
		"/etc/kubernetes", "/etc/ca-certificates", "/usr/share/ca-certificates", "/usr/local/share/ca-certificates",
		// Go's system roots, which kube-apiserver reads: crypto/x509/root_linux.go:21 (certDirectories)
		"/etc/ssl/certs",
		// kamaji internal/builders/controlplane/konnectivity_server.go:26
		"/run/konnectivity",
		// the service account token's parent: kubernetes
		// plugin/pkg/admission/serviceaccount/admission.go:57 (DefaultAPITokenMountPath)
		"/var/run/secrets/kubernetes.io",
		// the runtime's kernel file systems: containerd oci/mounts.go:28,34,58
		"/proc", "/dev", "/sys",
	}
)

// TestReservedVolumeNames: v1alpha1.ReservedVolumeNames is the upstream
// list, entry by entry, and the XRD and Validate refuse an extra volume
// named as each.
func TestReservedVolumeNames(t *testing.T) {
	sameSet(t, "ReservedVolumeNames", v1alpha1.ReservedVolumeNames, upstreamVolumeNames)
	xrd := clusterAdmission(t)
	for _, name := range upstreamVolumeNames {
		spec := `{controlPlane: {apiServer: {extraVolumes: [{name: ` + name + `, configMap: {name: c}}]}}}`
		for who, errs := range map[string]field.ErrorList{"XRD admission": xrd.admit(t, spec, ""), "spec.Validate()": clusterValidate(t, spec)} {
			if got := fieldPaths(errs); len(got) != 1 || got[0] != "spec.controlPlane.apiServer.extraVolumes[0].name" || !namesValue(errs, name) {
				t.Errorf("%s: volume %s: want one refusal of its name naming it, got %v", who, name, errs.ToAggregate())
			}
		}
	}
}

// TestReservedMountPaths: v1alpha1.ReservedMountPaths is the upstream
// list, entry by entry, and the XRD and Validate refuse a mount on each
// path and under it.
func TestReservedMountPaths(t *testing.T) {
	sameSet(t, "ReservedMountPaths", v1alpha1.ReservedMountPaths, upstreamMountPaths)
	xrd := clusterAdmission(t)
	for _, p := range upstreamMountPaths {
		for _, mount := range []string{p, p + "/x"} {
			spec := `{controlPlane: {apiServer: {extraVolumes: [{name: v, configMap: {name: c}}], extraVolumeMounts: [{name: v, mountPath: ` + mount + `}]}}}`
			for who, errs := range map[string]field.ErrorList{"XRD admission": xrd.admit(t, spec, ""), "spec.Validate()": clusterValidate(t, spec)} {
				if got := fieldPaths(errs); len(got) != 1 || got[0] != "spec.controlPlane.apiServer.extraVolumeMounts[0].mountPath" || !namesValue(errs, mount) {
					t.Errorf("%s: mountPath %s: want one refusal of it naming it, got %v", who, mount, errs.ToAggregate())
				}
			}
		}
	}
}

// TestReservedFlagNamesExist: each entry of v1alpha1.ReservedFlagNames (a
// name or a name pattern) names a flag kube-apiserver v1.36 has: it
// matches a string literal of the option packages of kube-apiserver,
// k8s.io/apiserver and k8s.io/component-base's logs, read from their
// source. An entry matching nothing is a typo or a flag upstream removed.
func TestReservedFlagNamesExist(t *testing.T) {
	var literals []string
	for _, d := range []string{
		filepath.Join(kubernetesModuleDir(t), "cmd", "kube-apiserver"),
		filepath.Join(kubernetesModuleDir(t), "pkg", "controlplane", "apiserver", "options"),
		filepath.Join(kubernetesModuleDir(t), "pkg", "kubeapiserver", "options"),
		filepath.Join(moduleDir(t, "k8s.io/apiserver"), "pkg", "server", "options"),
		filepath.Join(moduleDir(t, "k8s.io/component-base"), "logs"),
	} {
		literals = append(literals, stringLiterals(t, d)...)
	}
	for _, entry := range v1alpha1.ReservedFlagNames {
		re := regexp.MustCompile("^(" + entry + ")$")
		if !slices.ContainsFunc(literals, re.MatchString) {
			t.Errorf("ReservedFlagNames entry %q names no flag of kube-apiserver's option packages", entry)
		}
	}
}

// sameSet fails unless got and want hold the same entries, naming each
// one only one holds.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s holds %q, which no upstream source names", what, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// stringLiterals are the string literals of the non-test Go files under
// dir.
func stringLiterals(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out = append(out, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("no string literals under %s: %v", dir, err)
	}
	return out
}

// kubernetesModuleDir is the directory of the module k8s.io/kubernetes
// that tools/kubernetes pins (kube-apiserver's own source) in the Go
// module cache, downloaded by the go command when it is not there yet
// (what building bin/kube-apiserver does). The test is skipped when it
// cannot be had, or fails under TENANTKUBE_REQUIRE_TOOLS.
func kubernetesModuleDir(t *testing.T) string {
	t.Helper()
	return moduleDir(t, "k8s.io/kubernetes")
}

// moduleDir is the directory of module path, at the version
// tools/kubernetes pins, as kubernetesModuleDir.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path)
	cmd.Dir = filepath.Join(repoRoot(t), "tools", "kubernetes")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err != nil || mod.Dir == "" {
		if os.Getenv("TENANTKUBE_REQUIRE_TOOLS") != "" {
			t.Fatalf("cannot download %s of tools/kubernetes: %v %s", path, err, mod.Error)
		}
		t.Skipf("cannot download %s of tools/kubernetes: %v %s", path, err, mod.Error)
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
