package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// obj builds an unstructured object from apiVersion, kind, metadata and
// the remaining top-level fields.
func obj(apiVersion, kind string, meta map[string]interface{}, rest map[string]interface{}) *unstructured.Unstructured {
	o := map[string]interface{}{"apiVersion": apiVersion, "kind": kind}
	if meta != nil {
		o["metadata"] = meta
	}
	for k, v := range rest {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func nsMeta(name string) map[string]interface{} {
	return map[string]interface{}{"name": name, "namespace": "tenant-demo"}
}

// problems renders a ValidationError's errors as "Type field" strings (the
// stable part, good for cmp.Diff), or a single string for other errors.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return []string{"not a *ValidationError: " + err.Error()}
	}
	out := make([]string, 0, len(ve.Errs))
	for _, fe := range ve.Errs {
		out = append(out, string(fe.Type)+" "+fe.Field)
	}
	return out
}

func shared(t *testing.T) *Validator {
	t.Helper()
	v, err := LoadShared()
	if err != nil {
		t.Fatalf("LoadShared: %v", err)
	}
	return v
}

func TestLoadIsCached(t *testing.T) {
	a := shared(t)
	b := shared(t)
	if a != b {
		t.Error("LoadShared returned two different validators; want the cached one")
	}
	dir, err := SharedCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir + "/.")
	if err != nil {
		t.Fatal(err)
	}
	if a != c {
		t.Error("Load of the same directory spelled differently was not cached")
	}
}

func TestLoadIncludesCrossplaneSubdir(t *testing.T) {
	v := shared(t)
	want := map[string]bool{
		"pkg.crossplane.io/v1, Kind=Function":                             false,
		"cluster.x-k8s.io/v1beta2, Kind=Cluster":                          false,
		"controlplane.cluster.x-k8s.io/v1alpha2, Kind=KamajiControlPlane": false,
	}
	for _, gvk := range v.Kinds() {
		if _, ok := want[gvk.String()]; ok {
			want[gvk.String()] = true
		}
	}
	for k, found := range want {
		if !found {
			t.Errorf("kind %s not loaded", k)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no CustomResourceDefinitions") {
		t.Errorf("Load(empty dir) = %v, want a 'no CustomResourceDefinitions' error", err)
	}
	if _, err := Load("/nonexistent/crds"); err == nil {
		t.Error("Load(missing dir) succeeded")
	}
}

func TestAllSharedRulesCompile(t *testing.T) {
	if err := shared(t).CheckRules(); err != nil {
		t.Errorf("CheckRules:\n%v", err)
	}
}

func TestValidateShared(t *testing.T) {
	v := shared(t)
	ref := func(group, kind, name string) map[string]interface{} {
		return map[string]interface{}{"apiGroup": group, "kind": kind, "name": name}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		// want lists "Type field" of every expected problem; nil = valid.
		want []string
		// wantText must appear in the error message.
		wantText []string
	}{
		{
			name: "valid CAPI Cluster v1beta2",
			obj: obj("cluster.x-k8s.io/v1beta2", "Cluster", map[string]interface{}{
				"name": "demo", "namespace": "tenant-demo",
				"labels": map[string]interface{}{"tenantkube.io/cluster": "demo"},
			}, map[string]interface{}{"spec": map[string]interface{}{
				"clusterNetwork": map[string]interface{}{
					"pods":     map[string]interface{}{"cidrBlocks": []interface{}{"10.243.0.0/16"}},
					"services": map[string]interface{}{"cidrBlocks": []interface{}{"10.95.0.0/16"}},
				},
				"controlPlaneRef":   ref("controlplane.cluster.x-k8s.io", "KamajiControlPlane", "demo"),
				"infrastructureRef": ref("infrastructure.cluster.x-k8s.io", "KubevirtCluster", "demo"),
			}}),
		},
		{
			name: "valid cert-manager Issuer",
			obj: obj("cert-manager.io/v1", "Issuer", nsMeta("demo-etcd-selfsigned"),
				map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}}),
		},
		{
			name: "valid Flux HelmRelease with chartRef and Go int values",
			obj: obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", nsMeta("demo-cilium"),
				map[string]interface{}{"spec": map[string]interface{}{
					"interval": "5m",
					"chartRef": map[string]interface{}{"kind": "ExternalArtifact", "name": "cilium"},
					"install":  map[string]interface{}{"remediation": map[string]interface{}{"retries": 3}},
				}}),
		},
		{
			name: "valid cluster-scoped Crossplane Function without namespace",
			obj: obj("pkg.crossplane.io/v1", "Function", map[string]interface{}{"name": "function-control-plane"},
				map[string]interface{}{"spec": map[string]interface{}{"package": "xpkg.example/fn:v0.1.0"}}),
		},
		{
			name: "valid namespaced object without namespace (filled in by Crossplane)",
			obj: obj("cert-manager.io/v1", "Issuer", map[string]interface{}{"name": "x"},
				map[string]interface{}{"spec": map[string]interface{}{"ca": map[string]interface{}{"secretName": "x-ca"}}}),
		},
		{
			name: "wrong type names the path",
			obj: obj("cluster.x-k8s.io/v1beta2", "Cluster", nsMeta("demo"),
				map[string]interface{}{"spec": map[string]interface{}{"paused": "yes"}}),
			want:     []string{"FieldValueTypeInvalid spec.paused", "FieldValueInvalid x-kubernetes-validations"},
			wantText: []string{"spec.paused", "must be of type boolean"},
		},
		{
			name: "unknown fields would be pruned, spec and metadata",
			obj: obj("cert-manager.io/v1", "Issuer",
				map[string]interface{}{"name": "x", "namespace": "tenant-demo", "lables": map[string]interface{}{"a": "b"}},
				map[string]interface{}{"spec": map[string]interface{}{
					"selfSigned": map[string]interface{}{},
					"ca":         map[string]interface{}{"secretName": "x", "secretNmae": "y"},
				}}),
			want:     []string{"FieldValueForbidden metadata.lables", "FieldValueForbidden spec.ca.secretNmae"},
			wantText: []string{"would be pruned"},
		},
		{
			name: "unknown top-level field would be pruned",
			obj: obj("cert-manager.io/v1", "Issuer", nsMeta("x"),
				map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}, "sepc": map[string]interface{}{}}),
			want: []string{"FieldValueForbidden sepc"},
		},
		{
			name: "CEL rule violated: HelmRelease with both chart and chartRef",
			obj: obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", nsMeta("demo-cilium"),
				map[string]interface{}{"spec": map[string]interface{}{
					"interval": "5m",
					"chartRef": map[string]interface{}{"kind": "ExternalArtifact", "name": "cilium"},
					"chart": map[string]interface{}{"spec": map[string]interface{}{
						"chart": "cilium", "sourceRef": map[string]interface{}{"kind": "HelmRepository", "name": "r"},
					}},
				}}),
			want:     []string{"FieldValueInvalid spec"},
			wantText: []string{"either chart or chartRef must be set"},
		},
		{
			name: "CEL rule violated: etcd DataStore without CA private key",
			obj: obj("kamaji.clastix.io/v1alpha1", "DataStore", map[string]interface{}{"name": "tenant-demo-demo"},
				map[string]interface{}{"spec": map[string]interface{}{
					"driver":    "etcd",
					"endpoints": []interface{}{"demo-etcd.tenant-demo.svc:2379"},
					"tlsConfig": map[string]interface{}{
						"certificateAuthority": map[string]interface{}{
							"certificate": map[string]interface{}{"secretReference": map[string]interface{}{"name": "ca", "namespace": "tenant-demo", "keyPath": "tls.crt"}},
						},
						"clientCertificate": map[string]interface{}{
							"certificate": map[string]interface{}{"secretReference": map[string]interface{}{"name": "c", "namespace": "tenant-demo", "keyPath": "tls.crt"}},
							"privateKey":  map[string]interface{}{"secretReference": map[string]interface{}{"name": "c", "namespace": "tenant-demo", "keyPath": "tls.key"}},
						},
					},
				}}),
			want:     []string{"FieldValueInvalid spec"},
			wantText: []string{"certificateAuthority privateKey must have secretReference or content"},
		},
		{
			name: "cluster-scoped object with a namespace",
			obj: obj("pkg.crossplane.io/v1", "Function", map[string]interface{}{"name": "f", "namespace": "tenant-demo"},
				map[string]interface{}{"spec": map[string]interface{}{"package": "xpkg.example/fn:v0.1.0"}}),
			want: []string{"FieldValueForbidden metadata.namespace"},
		},
		{
			name: "name missing",
			obj: obj("cert-manager.io/v1", "Issuer", map[string]interface{}{"namespace": "tenant-demo"},
				map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}}),
			want: []string{"FieldValueRequired metadata.name"},
		},
		{
			name: "generateName only",
			obj: obj("cert-manager.io/v1", "Issuer", map[string]interface{}{"generateName": "x-", "namespace": "tenant-demo"},
				map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}}),
			want: []string{"FieldValueRequired metadata.name"},
		},
		{
			name: "invalid name",
			obj: obj("cert-manager.io/v1", "Issuer", nsMeta("Demo_Issuer"),
				map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}}),
			want: []string{"FieldValueInvalid metadata.name"},
		},
		{
			name: "metadata missing",
			obj:  obj("cert-manager.io/v1", "Issuer", nil, map[string]interface{}{"spec": map[string]interface{}{}}),
			want: []string{"FieldValueRequired metadata"},
		},
		{
			name:     "no CRD for the kind",
			obj:      obj("apps/v1", "Deployment", nsMeta("x"), nil),
			want:     []string{"FieldValueNotFound kind"},
			wantText: []string{"no CustomResourceDefinition for Deployment.apps"},
		},
		{
			name:     "version not defined by the CRD",
			obj:      obj("cluster.x-k8s.io/v9", "Cluster", nsMeta("x"), nil),
			want:     []string{"FieldValueNotSupported apiVersion"},
			wantText: []string{"cluster.x-k8s.io/v1beta2"},
		},
		{
			name: "kind missing",
			obj:  obj("cluster.x-k8s.io/v1beta2", "", nsMeta("x"), nil),
			want: []string{"FieldValueRequired kind"},
		},
		{
			name:     "required field missing and enum violated",
			obj:      obj("kamaji.clastix.io/v1alpha1", "DataStore", map[string]interface{}{"name": "d"}, map[string]interface{}{"spec": map[string]interface{}{"driver": "Redis"}}),
			want:     []string{"FieldValueNotSupported spec.driver", "FieldValueRequired spec.endpoints", "FieldValueInvalid x-kubernetes-validations"},
			wantText: []string{`supported values: "etcd", "MySQL", "PostgreSQL", "NATS"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.obj.Object)
			err := v.Validate(tc.obj)
			if diff := cmp.Diff(tc.want, problems(err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			for _, s := range tc.wantText {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v does not contain %q", err, s)
				}
			}
			after, _ := json.Marshal(tc.obj.Object)
			if diff := cmp.Diff(string(before), string(after)); diff != "" {
				t.Errorf("Validate modified its argument (-before +after):\n%s", diff)
			}
		})
	}
}

func TestValidateFixture(t *testing.T) {
	v, err := Load("testdata/crds")
	if err != nil {
		t.Fatal(err)
	}
	widget := func(version string, spec map[string]interface{}) *unstructured.Unstructured {
		return obj("example.test/"+version, "Widget", nsMeta("w"), map[string]interface{}{"spec": spec})
	}
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		want     []string
		wantText []string
	}{
		{name: "defaults are applied before CEL (size defaults to 3)", obj: widget("v1", map[string]interface{}{})},
		{
			name: "preserve-unknown-fields subtree is not pruned",
			obj:  widget("v1", map[string]interface{}{"free": map[string]interface{}{"anything": map[string]interface{}{"goes": true}}}),
		},
		{
			name:     "CEL rule violated",
			obj:      widget("v1", map[string]interface{}{"size": 1}),
			want:     []string{"FieldValueInvalid spec.size"},
			wantText: []string{"size must be at least 3"},
		},
		{
			name:     "rule that cannot compile is reported",
			obj:      widget("v1", map[string]interface{}{"broken": "x"}),
			want:     []string{"FieldValueInvalid spec.broken"},
			wantText: []string{"compile error", "noSuchFunction"},
		},
		{
			name: "paths: a map key and an index in brackets, the pattern of a quantity in words, the nearest field",
			obj: widget("v1", map[string]interface{}{
				"groups": map[string]interface{}{"md0": map[string]interface{}{"disk": "20Gx", "bogus": 1, "dsik": 1}},
				"labels": map[string]interface{}{"a.b/c": "abcd"},
				"list":   []interface{}{map[string]interface{}{"count": 11}, map[string]interface{}{"bogus": 1}},
			}),
			want: []string{
				"FieldValueForbidden spec.groups[md0].bogus", "FieldValueForbidden spec.groups[md0].dsik", "FieldValueForbidden spec.list[1].bogus",
				"FieldValueInvalid spec.groups[md0].disk", "FieldValueTooLong spec.labels[a.b/c]", "FieldValueInvalid spec.list[0].count",
				"FieldValueInvalid x-kubernetes-validations",
			},
			wantText: []string{
				`spec.groups[md0].disk: Invalid value: "20Gx": must be a quantity such as 20Gi` + "\n",
				// The nearest field, when one is near ("dsik" is 1 swap from disk).
				"spec.groups[md0].dsik: Forbidden: unknown field, would be pruned by the API server; did you mean disk?\n",
				"spec.groups[md0].bogus: Forbidden: unknown field, would be pruned by the API server\n",
				"spec.list[0].count: Invalid value: 11: should be less than or equal to 10\n",
			},
		},
		{
			name:     "version not served",
			obj:      widget("v1old", map[string]interface{}{}),
			want:     []string{"FieldValueInvalid apiVersion"},
			wantText: []string{"not served"},
		},
		{
			name: "cluster-scoped with namespace, bad enum",
			obj: obj("example.test/v1", "Gadget", nsMeta("g"),
				map[string]interface{}{"spec": map[string]interface{}{"color": "green"}}),
			want: []string{"FieldValueForbidden metadata.namespace", "FieldValueNotSupported spec.color"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(tc.obj)
			if diff := cmp.Diff(tc.want, problems(err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			for _, s := range tc.wantText {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v does not contain %q", err, s)
				}
			}
		})
	}

	err = v.CheckRules()
	if err == nil || !strings.Contains(err.Error(), "noSuchFunction") || !strings.Contains(err.Error(), "openAPIV3Schema.properties[spec].properties[broken]") {
		t.Errorf("CheckRules() = %v, want the broken rule reported with its schema path", err)
	}
}

func TestValidateYAMLStream(t *testing.T) {
	v := shared(t)
	stream := `
---
# empty document above and this comment-only one are skipped
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: skipped-builtin
data: {bogus: [1]}
---
apiVersion: tenantkube.io/v1alpha1
kind: KubernetesCluster
metadata:
  name: demo
spec: {anything: goes}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: demo-selfsigned
  namespace: tenant-demo
spec:
  selfSigned: {}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: demo
  namespace: tenant-demo
spec:
  paused: true
  controlPlaneReff: {}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: skipped}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: not-skipped}
`
	err := v.ValidateYAMLStream([]byte(stream))
	if err == nil {
		t.Fatal("ValidateYAMLStream succeeded, want errors for documents 3 and 5")
	}
	msg := err.Error()
	for _, s := range []string{
		"document 3: cluster.x-k8s.io/v1beta2 Cluster",
		"spec.controlPlaneReff: Forbidden: unknown field, would be pruned",
		"document 5: policy/v1 PodDisruptionBudget",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error does not contain %q:\n%s", s, msg)
		}
	}
	for _, s := range []string{"ConfigMap", "KubernetesCluster", "Issuer", "Deployment"} {
		if strings.Contains(msg, s) {
			t.Errorf("error mentions %s, which should pass or be skipped:\n%s", s, msg)
		}
	}

	if err := v.ValidateYAMLStream([]byte("---\n---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: a}\nspec: {selfSigned: {}}\n")); err != nil {
		t.Errorf("valid stream: %v", err)
	}
	if err := v.ValidateYAMLStream([]byte("- not\n- an object\n")); err == nil {
		t.Error("a YAML list document was accepted")
	}
}

func TestStreamSkip(t *testing.T) {
	tests := map[string]bool{
		"v1":                           true,
		"apps/v1":                      true,
		"rbac.authorization.k8s.io/v1": true,
		"networking.k8s.io/v1":         true,
		"tenantkube.io/v1alpha1":       true,
		"tenantkube.io/v2":             true,
		"fn.tenantkube.io/v1alpha1":    false,
		"apps/v1beta1":                 false,
		"cert-manager.io/v1":           false,
		"":                             false,
	}
	for apiVersion, want := range tests {
		if got := skippedInStream(apiVersion); got != want {
			t.Errorf("skippedInStream(%q) = %v, want %v", apiVersion, got, want)
		}
	}
}

func TestValidateConcurrently(t *testing.T) {
	v := shared(t)
	good := obj("cert-manager.io/v1", "Issuer", nsMeta("x"),
		map[string]interface{}{"spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}})
	bad := obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", nsMeta("x"),
		map[string]interface{}{"spec": map[string]interface{}{"interval": "5m"}})
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		go func() { errs <- v.Validate(good) }()
		go func() {
			if err := v.Validate(bad); err == nil {
				errs <- errors.New("HelmRelease without chart or chartRef validated")
				return
			}
			errs <- nil
		}()
	}
	for i := 0; i < 16; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
