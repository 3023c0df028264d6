//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsinput "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
)

const (
	// chartVersion is the version of every chart the loopback repository
	// serves.
	chartVersion = "0.1.0"
	// chartRepository is the managed HelmRepository's name suffix.
	chartRepository = "e2e-charts"
	// e2eComposition is the Composition the Flux scenarios' claim selects:
	// package/composition.yaml with every add-on charted from the loopback
	// repository.
	e2eComposition = "xkubernetesclusters.tenantkube.io-loopback-charts"
)

// valuesTemplate renders the release's values into a ConfigMap, so the
// tenant cluster shows what Helm was given.
const valuesTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-values
  namespace: {{ .Release.Namespace }}
data:
  values.json: {{ toJson .Values | quote }}
`

// chartName is the chart an add-on release installs (its default source's
// chart, else the release name).
func chartName(release string) string {
	if c := addonsinput.DefaultCharts()[release].Chart; c != "" {
		return c
	}
	return release
}

// buildChart packages a chart whose one template is tmpl, with values.yaml
// values.
func buildChart(name, tmpl, values string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := []struct{ path, body string }{
		{name + "/Chart.yaml", fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\ndescription: tenantkube e2e stand-in for the %s chart\n", name, chartVersion, name)},
		{name + "/values.yaml", values},
		{name + "/templates/values.yaml", tmpl},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// helmRepo is a Helm chart repository served by the test on loopback.
type helmRepo struct {
	url   string
	files map[string][]byte
	srv   *http.Server
}

// startHelmRepo serves index.yaml and one chart per add-on release; each
// fails at apply when its values set rejectValue (flux_retry_test.go).
func startHelmRepo() (*helmRepo, error) {
	charts := map[string][]byte{}
	for _, rel := range addonsinput.Releases() {
		tgz, err := buildChart(chartName(rel), valuesTemplate+rejectedTemplate, "{}\n")
		if err != nil {
			return nil, err
		}
		charts[chartName(rel)] = tgz
	}
	return serveCharts(charts)
}

// serveCharts serves a Helm repository of the packaged charts (by name, all
// at chartVersion) on loopback.
func serveCharts(charts map[string][]byte) (*helmRepo, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &helmRepo{url: fmt.Sprintf("http://%s/", l.Addr()), files: map[string][]byte{}}
	var index strings.Builder
	index.WriteString("apiVersion: v1\nentries:\n")
	var names []string
	for n := range charts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		tgz := charts[name]
		file := fmt.Sprintf("%s-%s.tgz", name, chartVersion)
		r.files[file] = tgz
		sum := sha256.Sum256(tgz)
		fmt.Fprintf(&index, "  %s:\n  - apiVersion: v2\n    name: %s\n    version: %s\n    digest: %s\n    created: \"2026-01-01T00:00:00Z\"\n    urls:\n    - %s%s\n",
			name, name, chartVersion, hex.EncodeToString(sum[:]), r.url, file)
	}
	index.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	r.files["index.yaml"] = []byte(index.String())
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		b, ok := r.files[strings.TrimPrefix(req.URL.Path, "/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(b)
	})
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// installLoopbackComposition applies package/composition.yaml renamed
// e2eComposition, with every add-on's chart source set to the loopback
// repository and releaseRetryInterval loopbackRetryInterval.
func (e *env) installLoopbackComposition(repo *helmRepo) error {
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	objs, err := decodeFile(e.path("package", "composition.yaml"))
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("package/composition.yaml holds %d objects", len(objs))
	}
	comp := objs[0]
	comp.SetName(e2eComposition)
	charts := map[string]any{}
	var c addonsinput.Charts
	for _, rel := range addonsinput.Releases() {
		_, key := c.Source(rel)
		charts[key] = map[string]any{
			"kind": "HelmRepository", "url": repo.url, "repository": chartRepository,
			"chart": chartName(rel), "version": chartVersion, "valuesLayout": "Upstream",
		}
	}
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	found := false
	for _, s := range steps {
		m := s.(map[string]any)
		if m["step"] == "addons" {
			_ = unstructured.SetNestedField(m, charts, "input", "charts")
			_ = unstructured.SetNestedField(m, loopbackRetryInterval, "input", "releaseRetryInterval")
			found = true
		}
	}
	if !found {
		return fmt.Errorf("package/composition.yaml has no addons step")
	}
	_ = unstructured.SetNestedSlice(comp.Object, steps, "spec", "pipeline")
	return apply(ctx, e.c, comp)
}

// fluxControllers are Flux's source-controller and helm-controller.
type fluxControllers struct {
	source, helm *proc
	storagePort  int
}

// installFluxCRDs installs the CRDs of source-controller and helm-controller
// from their own modules (helm-controller v1.4.3's HelmRelease, not the
// v1.6 one in ../shared/crds).
func (e *env) installFluxCRDs() (sourceVersion, helmVersion string, err error) {
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	srcDir, sourceVersion, err := e.moduleDir("flux-source", "github.com/fluxcd/source-controller")
	if err != nil {
		return "", "", err
	}
	helmDir, helmVersion, err := e.moduleDir("flux-helm", "github.com/fluxcd/helm-controller")
	if err != nil {
		return "", "", err
	}
	var names []string
	for _, glob := range []string{filepath.Join(srcDir, "config", "crd", "bases", "*.yaml"), filepath.Join(helmDir, "config", "crd", "bases", "*.yaml")} {
		files, _ := filepath.Glob(glob)
		if len(files) == 0 {
			return "", "", fmt.Errorf("no CRDs at %s", glob)
		}
		for _, f := range files {
			objs, err := decodeFile(f)
			if err != nil {
				return "", "", err
			}
			for _, o := range objs {
				if err := apply(ctx, e.c, o); err != nil {
					return "", "", fmt.Errorf("CRD %s: %w", o.GetName(), err)
				}
				names = append(names, o.GetName())
			}
		}
	}
	return sourceVersion, helmVersion, e.waitEstablished(time.Minute, names...)
}

// bringUpFlux runs the bring-up steps of Flux: its CRDs, source-controller
// and helm-controller with kubeconfigs (startFlux; *fc), and the loopback
// Helm repository (*repo) with the Composition charting from it. It
// returns the controllers' versions.
func (e *env) bringUpFlux(t *testing.T, kubeconfigs map[string]string, fc **fluxControllers, repo **helmRepo) (sourceVersion, helmVersion string) {
	t.Helper()
	step(t, "Flux CRDs", func() (err error) { sourceVersion, helmVersion, err = e.installFluxCRDs(); return err })
	step(t, "Flux source-controller and helm-controller", func() (err error) { *fc, err = e.startFlux(kubeconfigs); return err })
	step(t, "loopback Helm repository + Composition charting from it", func() (err error) {
		if *repo, err = startHelmRepo(); err != nil {
			return err
		}
		return e.installLoopbackComposition(*repo)
	})
	return sourceVersion, helmVersion
}

// startFlux starts source-controller and helm-controller with the flags of
// their own Deployments (config/manager), leader election off, watching all
// namespaces, each with the kubeconfig of its own ServiceAccount
// (kubeconfigs, by controller name).
func (e *env) startFlux(kubeconfigs map[string]string) (*fluxControllers, error) {
	fc := &fluxControllers{}
	ports := make([]int, 5)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	fc.storagePort = ports[0]
	if err := os.MkdirAll(filepath.Join(e.work, "source-controller"), 0o755); err != nil {
		return nil, err
	}
	storage := fmt.Sprintf("127.0.0.1:%d", fc.storagePort)
	fc.source = newProc(e.logs, "source-controller", e.binary("source-controller"), []string{
		"--watch-all-namespaces", "--log-level=info", "--log-encoding=json",
		"--storage-path=" + filepath.Join(e.work, "source-controller"),
		"--storage-addr=" + storage, "--storage-adv-addr=" + storage,
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[1]), fmt.Sprintf("--health-addr=127.0.0.1:%d", ports[2]),
	}, "KUBECONFIG="+kubeconfigs["source-controller"], "RUNTIME_NAMESPACE=flux-system")
	fc.helm = newProc(e.logs, "helm-controller", e.binary("helm-controller"), []string{
		"--watch-all-namespaces", "--log-level=info", "--log-encoding=json",
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[3]), fmt.Sprintf("--health-addr=127.0.0.1:%d", ports[4]),
	}, "KUBECONFIG="+kubeconfigs["helm-controller"], "RUNTIME_NAMESPACE=flux-system")
	for _, p := range []*proc{fc.source, fc.helm} {
		p.supervise()
		if err := p.start(); err != nil {
			return nil, err
		}
	}
	if err := e.waitHTTP(fc.source, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[2]), nil, 2*time.Minute); err != nil {
		return nil, err
	}
	e.flux = fc
	return fc, e.waitHTTP(fc.helm, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[4]), nil, 2*time.Minute)
}

// fluxState says, for a wait on a HelmRelease that failed, whether each
// Flux controller still runs, how often it was restarted, and
// helm-controller's last error lines.
func (e *env) fluxState() string {
	if e.flux == nil {
		return "Flux not started"
	}
	var out []string
	for _, p := range []*proc{e.flux.source, e.flux.helm} {
		if n := p.restarted(); n > 0 {
			out = append(out, fmt.Sprintf("%s restarted %d times after exiting unasked", p.name, n))
		}
		if !p.running() {
			out = append(out, p.name+" exited: "+tail(p.log, 5))
		}
	}
	var errs []string
	for l := range strings.SplitSeq(tail(e.flux.helm.log, 2000), "\n") {
		if strings.Contains(l, `"level":"error"`) {
			errs = append(errs, l)
		}
	}
	if len(errs) > 3 {
		errs = errs[len(errs)-3:]
	}
	return fmt.Sprintf("[%s; helm-controller's last errors: %v]", strings.Join(append(out, "controllers running"), "; "), errs)
}

// releaseState is what the tenant cluster shows of one HelmRelease.
type releaseState struct {
	hr        *unstructured.Unstructured
	target    string
	storage   string
	release   string
	values    map[string]any
	installed map[string]any
}

func jsonRoundTrip(v any) map[string]any {
	b, _ := json.Marshal(v)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}

// tenantRelease reads HelmRelease demo-<rel> and, from the tenant cluster,
// the values ConfigMap its chart made (nil when absent).
func (e *env) tenantRelease(ctx context.Context, ta *tenantAPI, rel string) (*releaseState, error) {
	hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-"+rel)
	if err != nil {
		return nil, err
	}
	rs := &releaseState{hr: hr}
	rs.target, _, _ = unstructured.NestedString(hr.Object, "spec", "targetNamespace")
	rs.storage, _, _ = unstructured.NestedString(hr.Object, "spec", "storageNamespace")
	rs.release, _, _ = unstructured.NestedString(hr.Object, "spec", "releaseName")
	v, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	rs.values = jsonRoundTrip(v)
	cm := &corev1.ConfigMap{}
	if err := ta.c.Get(ctx, client.ObjectKey{Namespace: rs.target, Name: rs.release + "-values"}, cm); err == nil {
		rs.installed = map[string]any{}
		if err := json.Unmarshal([]byte(cm.Data["values.json"]), &rs.installed); err != nil {
			return nil, err
		}
	} else if !kerrors.IsNotFound(err) {
		return nil, err
	}
	return rs, nil
}

// helmStorage lists the Helm release Secrets of release in ns of the tenant
// cluster (owner=helm, name=<release>).
func helmStorage(ctx context.Context, ta *tenantAPI, ns, release string) ([]corev1.Secret, error) {
	l := &corev1.SecretList{}
	err := ta.c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": release})
	return l.Items, err
}

// fluxInstallsAddons: every enabled add-on is installed into the tenant cluster by helm-controller, in dependsOn order,
// with the values the addons function composed, its namespace created and
// its Helm storage in storageNamespace.
func (e *env) fluxInstallsAddons(t *testing.T, ta *tenantAPI) {
	ok := append(append([]string{}, baseReleases...), certManagerHR...)
	waitFor(t, 6*time.Minute, "Flux installing the add-ons into the tenant cluster", func(ctx context.Context) (bool, string, error) {
		var pending []string
		for _, r := range ok {
			rs, err := e.tenantRelease(ctx, ta, r)
			if err != nil {
				return false, "", err
			}
			if rs.installed == nil {
				s, reason, m := condition(rs.hr, "Ready")
				pending = append(pending, fmt.Sprintf("%s (Ready=%s %s %q)", r, s, reason, m))
			}
		}
		return len(pending) == 0, fmt.Sprintf("not installed: %s %s", strings.Join(pending, "; "), e.fluxState()), nil
	})
	ctx, cancel := ctxT(2 * time.Minute)
	defer cancel()
	deployed := map[string]time.Time{}
	for _, r := range ok {
		rs, err := e.tenantRelease(ctx, ta, r)
		e.must(t, err, "release "+r)
		// No values at all reach the chart as an empty map.
		if !(len(rs.installed) == 0 && len(rs.values) == 0) && !reflect.DeepEqual(rs.installed, rs.values) {
			errorf(t, "release %s: values in the tenant cluster %v, composed %v", r, rs.installed, rs.values)
		}
		// CoreDNS's Service address, worked by hand: the 10th address of
		// the platform's serviceCIDR 10.95.0.0/16, the tenant API server's
		// --service-cluster-ip-range.
		if ip, _, _ := unstructured.NestedString(rs.installed, "service", "clusterIP"); r == "coredns" && ip != "10.95.0.10" {
			errorf(t, "release coredns: service.clusterIP %q in the tenant cluster, want 10.95.0.10", ip)
		}
		if _, err := get(ctx, ta.c, gvkNamespace, "", rs.target); err != nil {
			errorf(t, "release %s: target namespace %s in the tenant cluster: %v", r, rs.target, err)
		}
		secrets, err := helmStorage(ctx, ta, rs.storage, rs.release)
		e.must(t, err, "Helm storage of "+r)
		if len(secrets) != 1 || secrets[0].Labels["status"] != "deployed" {
			errorf(t, "release %s: %d Helm storage Secrets in %s (want 1, deployed)", r, len(secrets), rs.storage)
		}
		cm := &corev1.ConfigMap{}
		e.must(t, ta.c.Get(ctx, client.ObjectKey{Namespace: rs.target, Name: rs.release + "-values"}, cm), "values ConfigMap")
		deployed[demo+"-"+r] = cm.CreationTimestamp.Time
	}
	// dependsOn: nothing is installed before what it depends on.
	for _, r := range ok {
		hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-"+r)
		e.must(t, err, "HelmRelease")
		deps, _, _ := unstructured.NestedSlice(hr.Object, "spec", "dependsOn")
		for _, d := range deps {
			name, _, _ := unstructured.NestedString(d.(map[string]any), "name")
			at, ok := deployed[name]
			if !ok {
				continue
			}
			if deployed[hr.GetName()].Before(at) {
				errorf(t, "%s installed at %s, before its dependency %s (%s)", hr.GetName(), deployed[hr.GetName()], name, at)
			}
		}
	}
	var names []string
	for n := range deployed {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return deployed[names[i]].Before(deployed[names[j]]) })
	t.Logf("installed in the tenant cluster, in order: %s", strings.Join(names, ", "))
}

// disabledAddonUninstalled: enabling velero installs it into the tenant
// cluster; disabling it deletes the HelmRelease and helm-controller
// uninstalls it from the tenant cluster.
func (e *env) disabledAddonUninstalled(t *testing.T, ta *tenantAPI) {
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"velero":{"enabled":true}}}}`)
	var rs *releaseState
	waitFor(t, 4*time.Minute, "velero installed in the tenant cluster", func(ctx context.Context) (bool, string, error) {
		var err error
		rs, err = e.tenantRelease(ctx, ta, "velero")
		if err != nil {
			return false, err.Error(), nil
		}
		s, r, m := condition(rs.hr, "Ready")
		return rs.installed != nil, fmt.Sprintf("Ready=%s %s %q %s", s, r, m, e.fluxState()), nil
	})
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"velero":{"enabled":false}}}}`)
	waitFor(t, 3*time.Minute, "velero uninstalled from the tenant cluster", func(ctx context.Context) (bool, string, error) {
		_, hrErr := get(ctx, e.c, gvkHR, demoNS, demo+"-velero")
		cm := &corev1.ConfigMap{}
		cmErr := ta.c.Get(ctx, client.ObjectKey{Namespace: rs.target, Name: rs.release + "-values"}, cm)
		secrets, err := helmStorage(ctx, ta, rs.storage, rs.release)
		if err != nil {
			return false, "", err
		}
		return kerrors.IsNotFound(hrErr) && kerrors.IsNotFound(cmErr) && len(secrets) == 0,
			fmt.Sprintf("HelmRelease: %v; ConfigMap: %v; %d Helm storage Secrets", hrErr, cmErr, len(secrets)), nil
	})
}
