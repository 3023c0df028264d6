package main

import (
	"time"

	"maps"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/presets"
	etcdv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/etcd/v1alpha1"
	kamajiv1alpha1 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha1"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// Values below come from docs/tenant-guide.md (version table, presets),
// docs/architecture.md (composed objects), the seed chart's defaults and arithmetic by hand, not from the
// code under test.

// tenantHost is the tenant host of tenant-demo under the default base
// domain tenants.example.com.
const tenantHost = "tenant-demo.tenants.example.com"

// demoSchema is "t" and the first 31 hex digits of sha256("tenant-demo/demo")
// (`printf tenant-demo/demo | sha256sum`: 5e3740528f0aca546516b5d8c022c2aef5…).
const demoSchema = "t5e3740528f0aca546516b5d8c022c2a"

// planOf runs plan on c's request with the step input given as YAML
// (defaulted as RunFunction does) and the tenant host of tenant-demo.
func planOf(t *testing.T, c fntest.Call, inputYAML string) (*function.Plan, field.ErrorList) {
	t.Helper()
	in := &cpinput.ControlPlaneInput{}
	if err := yaml.UnmarshalStrict([]byte(inputYAML), in); err != nil {
		t.Fatalf("bad test input: %v", err)
	}
	in.Default()
	r, tenant := c.Read(t)
	return plan(tenant, in, function.HostPolicy{TenantHost: tenantHost}, r, time.Time{})
}

// composedObject is the composed resource name of p, of type T.
func composedObject[T any](t *testing.T, p *function.Plan, name string) *T {
	t.Helper()
	for _, c := range p.Composed {
		if c.Name != name {
			continue
		}
		o, ok := c.Object.(*T)
		if !ok {
			t.Fatalf("composed %s is a %T", name, c.Object)
		}
		return o
	}
	t.Fatalf("no composed resource %s", name)
	return nil
}

func composedNames(p *function.Plan) []string {
	var out []string
	for _, c := range p.Composed {
		out = append(out, c.Name)
	}
	return out
}

// quantities compare by their serialized form: what the API server gets.
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.String() == b.String() })

// resources are a component's container resources per the presets of docs/tenant-guide.md at
// the default CPU allocation ratio 10: limits cpu and memory, requests cpu
// / 10 and memory; ephemeral-storage 2Gi, requested 2Gi / 40 = 53687091.2
// bytes, rounded down.
func resources(cpuLimit, cpuRequest, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memory),
			corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
		},
		Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpuRequest), corev1.ResourceMemory: resource.MustParse(memory),
			corev1.ResourceEphemeralStorage: resource.MustParse("53687091"),
		},
	}
}

func TestPlanKamajiControlPlane(t *testing.T) {
	// c1.medium (seed default of the API server): 2 CPU, 1 GiB per CPU;
	// t1.micro (the other components): 500m, 0.5 GiB per CPU.
	c1medium, t1micro := resources("2", "200m", "2Gi"), resources("500m", "50m", "256Mi")
	seedDefaults := kamajiv1alpha2.KamajiControlPlane{
		TypeMeta: metav1.TypeMeta{APIVersion: "controlplane.cluster.x-k8s.io/v1alpha2", Kind: "KamajiControlPlane"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "demo", Namespace: "tenant-demo",
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo",
				"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/role": "control-plane",
			},
			Annotations: map[string]string{"kamaji.clastix.io/kubeconfig-secret-key": "super-admin.svc"},
		},
		Spec: kamajiv1alpha2.KamajiControlPlaneSpec{
			Replicas:          ptr.To[int32](2),
			Version:           "v1.35.6",
			DataStoreName:     "tenant-demo.demo",
			DataStoreSchema:   demoSchema,
			DataStoreUsername: demoSchema,
			APIServer:         &kamajiv1alpha2.ControlPlaneComponent{Resources: &c1medium},
			ControllerManager: &kamajiv1alpha2.ControlPlaneComponent{Resources: &t1micro},
			Scheduler:         &kamajiv1alpha2.ControlPlaneComponent{Resources: &t1micro},
			Addons: &kamajiv1alpha2.AddonsSpec{Konnectivity: &kamajiv1alpha2.KonnectivitySpec{
				Server: &kamajiv1alpha2.KonnectivityServerSpec{Port: 8132, Version: "v0.34.0", Resources: &t1micro},
				Agent:  &kamajiv1alpha2.KonnectivityAgentSpec{Version: "v0.34.0"},
			}},
			Kubelet: &kamajiv1alpha2.KubeletSpec{
				CgroupFS:              "systemd",
				PreferredAddressTypes: []corev1.NodeAddressType{"InternalIP", "ExternalIP"},
			},
			Network: &kamajiv1alpha2.NetworkSpec{
				ServiceType: "ClusterIP",
				CertSANs:    []string{"demo.tenant-demo.svc.cluster.local"},
				Ingress: &kamajiv1alpha2.IngressSpec{
					Hostname:         "demo." + tenantHost + ":443",
					ClassName:        "tenantkube-unserved",
					ExtraAnnotations: map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"},
				},
			},
		},
	}
	with := func(change func(k *kamajiv1alpha2.KamajiControlPlane)) *kamajiv1alpha2.KamajiControlPlane {
		k := seedDefaults.DeepCopy()
		change(k)
		return k
	}
	type args struct {
		call  fntest.Call
		input string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *kamajiv1alpha2.KamajiControlPlane
	}{
		"SeedDefaults": {
			reason: "An empty spec gets the seed's defaults: v1.35 (patch v1.35.6, konnectivity v0.34.0), 2 replicas, c1.medium and t1.micro, the default host under the tenant host, the dedicated DataStore <NS>.<N>.",
			args:   args{call: fntest.Call{Spec: `{}`}},
			want:   &seedDefaults,
		},
		"V133ThreeReplicasLargeAPIServer": {
			reason: "v1.33 deploys v1.33.13 without a konnectivity override; s1.large is 4 CPU with 2 GiB each.",
			args:   args{call: fntest.Call{Spec: `{version: v1.33, controlPlane: {replicas: 3, apiServer: {resourcesPreset: s1.large}}}`}},
			want: with(func(k *kamajiv1alpha2.KamajiControlPlane) {
				k.Spec.Version, k.Spec.Replicas = "v1.33.13", ptr.To[int32](3)
				s1large := resources("4", "400m", "8Gi")
				k.Spec.APIServer.Resources = &s1large
				k.Spec.Addons.Konnectivity.Server.Version, k.Spec.Addons.Konnectivity.Agent = "", nil
			}),
		},
		"ExplicitResourcesOverridePerKey": {
			reason: "resources.cpu and resources.memory replace the preset's key by key: c1.medium's 2 CPU stay beside 3Gi; 1500m requests 150m.",
			args: args{call: fntest.Call{Spec: `{controlPlane: {scheduler: {resourcesPreset: c1.medium, resources: {memory: 3Gi}},
				controllerManager: {resources: {cpu: 1500m, memory: 1Gi}}}}`}},
			want: with(func(k *kamajiv1alpha2.KamajiControlPlane) {
				sched, cm := resources("2", "200m", "3Gi"), resources("1500m", "150m", "1Gi")
				k.Spec.Scheduler.Resources, k.Spec.ControllerManager.Resources = &sched, &cm
			}),
		},
		"CPUAllocationRatio": {
			reason: "Requests are limits divided by the input's CPU allocation ratio: 2 / 4 = 500m, 500m / 4 = 125m.",
			args:   args{call: fntest.Call{Spec: `{}`}, input: `{cpuAllocationRatio: 4}`},
			want: with(func(k *kamajiv1alpha2.KamajiControlPlane) {
				for _, r := range []*corev1.ResourceRequirements{k.Spec.APIServer.Resources, k.Spec.ControllerManager.Resources,
					k.Spec.Scheduler.Resources, k.Spec.Addons.Konnectivity.Server.Resources} {
					cpu := r.Limits[corev1.ResourceCPU]
					r.Requests = r.Requests.DeepCopy()
					r.Requests[corev1.ResourceCPU] = map[string]resource.Quantity{"2": resource.MustParse("500m"), "500m": resource.MustParse("125m")}[cpu.String()]
				}
			}),
		},
		"SharedDataStoreAndHost": {
			reason: "A shared DataStore named in the input is the control plane's; spec.host replaces the default host; Kamaji's own Ingress keeps the unserved class whatever the input's.",
			args:   args{call: fntest.Call{Spec: `{host: api.tenant-demo.tenants.example.com}`}, input: `{dataStoreName: shared-etcd, ingressClassName: haproxy}`},
			want: with(func(k *kamajiv1alpha2.KamajiControlPlane) {
				k.Spec.DataStoreName = "shared-etcd"
				k.Spec.Network.Ingress.Hostname = "api.tenant-demo.tenants.example.com:443"
			}),
		},
		"ObservedDataStoreAccountKept": {
			reason: "An observed control plane keeps its schema and user, even none (Kamaji's default, immutable).",
			args: args{call: fntest.Call{Spec: `{}`, Observed: map[string]string{
				"kamajicontrolplane": `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6, dataStoreSchema: old_s}}`,
			}}},
			want: with(func(k *kamajiv1alpha2.KamajiControlPlane) {
				k.Spec.DataStoreSchema, k.Spec.DataStoreUsername = "old_s", ""
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args.call, tc.args.input)
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			got := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane")
			if diff := cmp.Diff(tc.want, got, quantities); diff != "" {
				t.Errorf("\n%s\nplan(...): -want KamajiControlPlane, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanVersionTable pins each row of the version table of docs/tenant-guide.md through plan.
func TestPlanVersionTable(t *testing.T) {
	type want struct{ patch, konnectivity string }
	cases := map[string]struct {
		reason string
		args   string
		want   want
	}{
		"V135": {reason: "v1.35 deploys v1.35.6 with konnectivity v0.34.0.", args: "v1.35", want: want{"v1.35.6", "v0.34.0"}},
		"V134": {reason: "v1.34 deploys v1.34.9; Kamaji derives konnectivity.", args: "v1.34", want: want{"v1.34.9", ""}},
		"V133": {reason: "v1.33 deploys v1.33.13.", args: "v1.33", want: want{"v1.33.13", ""}},
		"V132": {reason: "v1.32 deploys v1.32.13.", args: "v1.32", want: want{"v1.32.13", ""}},
		"V131": {reason: "v1.31 deploys v1.31.14.", args: "v1.31", want: want{"v1.31.14", ""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, fntest.Call{Spec: `{version: ` + tc.args + `}`}, "")
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			k := composedObject[kamajiv1alpha2.KamajiControlPlane](t, p, "kamajicontrolplane")
			got := want{patch: k.Spec.Version, konnectivity: k.Spec.Addons.Konnectivity.Server.Version}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
			if (k.Spec.Addons.Konnectivity.Agent != nil) != (tc.want.konnectivity != "") {
				t.Errorf("\n%s\nkonnectivity agent %+v, want one only with an override", tc.reason, k.Spec.Addons.Konnectivity.Agent)
			}
		})
	}
}

func TestPlanDedicatedEtcd(t *testing.T) {
	labels := map[string]string{"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo"}
	etcd := func(replicas int32, storage, quota, class string) *etcdv1alpha1.EtcdCluster {
		return &etcdv1alpha1.EtcdCluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: "etcd.aenix.io/v1alpha1", Kind: "EtcdCluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "demo-etcd", Namespace: "tenant-demo", Labels: labels},
			Spec: etcdv1alpha1.EtcdClusterSpec{
				Replicas: &replicas,
				Options: map[string]string{
					"quota-backend-bytes": quota, "auto-compaction-mode": "periodic",
					"auto-compaction-retention": "5m", "snapshot-count": "10000",
				},
				Storage: etcdv1alpha1.StorageSpec{VolumeClaimTemplate: &etcdv1alpha1.EmbeddedPersistentVolumeClaim{
					Metadata: etcdv1alpha1.EmbeddedObjectMetadata{Labels: labels},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
						StorageClassName: &class,
						Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse(storage)}},
					},
				}},
				Security: &etcdv1alpha1.SecuritySpec{TLS: &etcdv1alpha1.TLSSpec{
					PeerTrustedCASecret: "demo-etcd-peer-ca", PeerSecret: "demo-etcd-peer-tls", ServerSecret: "demo-etcd-server-tls",
					ClientTrustedCASecret: "demo-etcd-ca", ClientSecret: "demo-etcd-client-tls",
				}},
			},
		}
	}
	secretKey := func(secret, key string) kamajiv1alpha1.ContentRef {
		return kamajiv1alpha1.ContentRef{SecretReference: &kamajiv1alpha1.SecretReference{Name: secret, Namespace: "tenant-demo", KeyPath: key}}
	}
	caKey := secretKey("demo-etcd-ca", "tls.key")
	dataStore := &kamajiv1alpha1.DataStore{
		TypeMeta: metav1.TypeMeta{APIVersion: "kamaji.clastix.io/v1alpha1", Kind: "DataStore"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-demo.demo", Labels: map[string]string{
			"app.kubernetes.io/managed-by": "tenantkube", "tenantkube.io/cluster": "demo", "tenantkube.io/namespace": "tenant-demo",
		}},
		Spec: kamajiv1alpha1.DataStoreSpec{
			Driver:    "etcd",
			Endpoints: []string{"demo-etcd.tenant-demo.svc:2379"},
			TLSConfig: &kamajiv1alpha1.TLSConfig{
				CertificateAuthority: kamajiv1alpha1.CertificateAuthority{Certificate: secretKey("demo-etcd-ca", "tls.crt"), PrivateKey: &caKey},
				ClientCertificate: &kamajiv1alpha1.ClientCertificate{
					Certificate: secretKey("demo-etcd-client-tls", "tls.crt"), PrivateKey: secretKey("demo-etcd-client-tls", "tls.key"),
				},
			},
		},
	}
	type want struct {
		etcd      *etcdv1alpha1.EtcdCluster
		dataStore *kamajiv1alpha1.DataStore
	}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		input  string
		want   want
	}{
		"Defaults": {
			reason: "3 members of 4Gi on spec.storageClass (default replicated); quota 95% of 4Gi = 4294967296 × 0.95 = 4080218931.2, rounded down.",
			args:   fntest.Call{Spec: `{}`},
			want:   want{etcd: etcd(3, "4Gi", "4080218931", "replicated"), dataStore: dataStore},
		},
		"InputSizing": {
			reason: "The input's replicas, size and storage class: 95% of 8Gi = 8589934592 × 0.95 = 8160437862.4.",
			args:   fntest.Call{Spec: `{storageClass: fast}`},
			input:  `{etcd: {replicas: 5, storageSize: 8Gi, storageClassName: local-nvme}}`,
			want:   want{etcd: etcd(5, "8Gi", "8160437862", "local-nvme"), dataStore: dataStore},
		},
		"SpecStorageClass": {
			reason: "Without an input storage class, the members use spec.storageClass.",
			args:   fntest.Call{Spec: `{storageClass: fast}`},
			want:   want{etcd: etcd(3, "4Gi", "4080218931", "fast"), dataStore: dataStore},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args, tc.input)
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			got := want{
				etcd:      composedObject[etcdv1alpha1.EtcdCluster](t, p, "etcdcluster"),
				dataStore: composedObject[kamajiv1alpha1.DataStore](t, p, "datastore"),
			}
			if diff := cmp.Diff(tc.want, got, quantities, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanComposedResources: which objects a control plane is made of, in the
// order plan adds them.
func TestPlanComposedResources(t *testing.T) {
	pki := []string{"etcd-ca-issuer", "etcd-peer-ca-issuer", "etcd-selfsigned-issuer",
		"etcd-ca", "etcd-client-cert", "etcd-peer-ca", "etcd-peer-cert", "etcd-server-cert"}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		input  string
		want   []string
	}{
		"DedicatedEtcd": {
			reason: "EtcdCluster, DataStore, the PKI (3 Issuers, 5 Certificates), the Usages (etcd by the control plane, the control plane by node group md0), the management namespace with a Usage by each of the three controllers (no kubeconfig yet), Cluster, KubevirtCluster, KamajiControlPlane.",
			args:   fntest.Call{Spec: `{}`},
			want: append(append([]string{"etcdcluster", "datastore"}, pki...),
				"usage-etcdcluster-by-kamajicontrolplane", "usage-kamajicontrolplane-by-nodegroup-md0", "management-namespace", "usage-namespace-by-cluster-autoscaler", "usage-namespace-by-kccm", "usage-namespace-by-kcsi-controller",
				"cluster", "kubevirtcluster", "kamajicontrolplane", "apiserver-service", "apiserver-ingress"),
		},
		"SharedDataStore": {
			reason: "No etcd objects with a shared DataStore; node groups still go first, sorted.",
			args:   fntest.Call{Spec: `{nodeGroups: {gpu: {}, a: {}}}`},
			input:  `{dataStoreName: shared}`,
			want: []string{"usage-kamajicontrolplane-by-nodegroup-a", "usage-kamajicontrolplane-by-nodegroup-gpu", "management-namespace", "usage-namespace-by-cluster-autoscaler", "usage-namespace-by-kccm", "usage-namespace-by-kcsi-controller",
				"cluster", "kubevirtcluster", "kamajicontrolplane", "apiserver-service", "apiserver-ingress"},
		},
		"DeletionOrderNone": {
			reason: "deletionOrder None declares no Usages.",
			args:   fntest.Call{Spec: `{}`},
			input:  `{deletionOrder: None}`,
			want:   append(append([]string{"etcdcluster", "datastore"}, pki...), "management-namespace", "cluster", "kubevirtcluster", "kamajicontrolplane", "apiserver-service", "apiserver-ingress"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args, tc.input)
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, composedNames(p)); diff != "" {
				t.Errorf("\n%s\nplan(...): -want composed, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanStatusAndCondition: the XR's status and ControlPlaneReady per
// observed state.
func TestPlanStatusAndCondition(t *testing.T) {
	const (
		kcpReady    = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {ready: true, version: v1.35.1}}`
		kcpNotReady = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {ready: false, version: v1.34.4}}`
		etcdReady   = `{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, status: {conditions: [{type: Ready, status: "True"}]}}`
		etcdFalse   = `{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, status: {conditions: [{type: Ready, status: "False"}]}}`
		dsReady     = `{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, status: {ready: true}}`
	)
	endpoint := "https://demo." + tenantHost + ":443"
	status := func(version string) map[string]any {
		s := map[string]any{"controlPlane": map[string]any{"endpoint": endpoint}, "kubeconfigSecret": "demo-admin-kubeconfig"}
		if version != "" {
			s["version"] = version
		}
		return s
	}
	type want struct {
		status    map[string]any
		condition function.Condition
	}
	waiting := func(reason, msg string) function.Condition {
		return function.Condition{Type: "ControlPlaneReady", Reason: reason, Message: msg}
	}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		input  string
		want   want
	}{
		"NothingObserved": {
			reason: "A new cluster waits for its etcd first.",
			args:   fntest.Call{Spec: `{}`},
			want:   want{status: status(""), condition: waiting("WaitingForEtcd", "the dedicated etcd cluster is not ready yet")},
		},
		"EtcdNotReady": {
			reason: "etcd's Ready condition False: still waiting for etcd.",
			args:   fntest.Call{Spec: `{}`, Observed: map[string]string{"etcdcluster": etcdFalse, "datastore": dsReady}},
			want:   want{status: status(""), condition: waiting("WaitingForEtcd", "the dedicated etcd cluster is not ready yet")},
		},
		"DataStoreNotReady": {
			reason: "etcd Ready, the DataStore not yet.",
			args:   fntest.Call{Spec: `{}`, Observed: map[string]string{"etcdcluster": etcdReady}},
			want:   want{status: status(""), condition: waiting("WaitingForDataStore", "the Kamaji DataStore is not ready yet")},
		},
		"ControlPlaneNotReady": {
			reason: "etcd and DataStore ready, the KamajiControlPlane not: status.version is what it runs.",
			args:   fntest.Call{Spec: `{}`, Observed: map[string]string{"etcdcluster": etcdReady, "datastore": dsReady, "kamajicontrolplane": kcpNotReady}},
			want:   want{status: status("v1.34.4"), condition: waiting("WaitingForControlPlane", "the KamajiControlPlane is not ready yet")},
		},
		"VersionNotAPatchVersion": {
			reason: "A status.version that is not exactly vMAJOR.MINOR.PATCH never reaches the XR: no status.version.",
			args: fntest.Call{Spec: `{}`, Observed: map[string]string{"etcdcluster": etcdReady, "datastore": dsReady,
				"kamajicontrolplane": `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {version: "v1.35.1-URGENT.platform-admins.rotate.creds"}}`}},
			want: want{status: status(""), condition: waiting("WaitingForControlPlane", "the KamajiControlPlane is not ready yet")},
		},
		"SharedDataStoreWaitsForControlPlaneOnly": {
			reason: "A shared DataStore is not ours to wait for.",
			args:   fntest.Call{Spec: `{}`},
			input:  `{dataStoreName: shared}`,
			want:   want{status: status(""), condition: waiting("WaitingForControlPlane", "the KamajiControlPlane is not ready yet")},
		},
		"Available": {
			reason: "status.ready of the KamajiControlPlane: the API server answers at its endpoint.",
			args:   fntest.Call{Spec: `{}`, Observed: map[string]string{"kamajicontrolplane": kcpReady}},
			want: want{status: status("v1.35.1"), condition: function.Condition{Type: "ControlPlaneReady", True: true, Reason: "Available",
				Message: "the tenant API server answers at " + endpoint}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args, tc.input)
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want.status, p.Status); diff != "" {
				t.Errorf("\n%s\nplan(...): -want status, +got:\n%s", tc.reason, diff)
			}
			// DataStoreShared is TestDataStoreShared's.
			var conds []function.Condition
			for _, c := range p.Conditions {
				if c.Type != tkv1alpha1.ConditionDataStoreShared {
					conds = append(conds, c)
				}
			}
			if diff := cmp.Diff([]function.Condition{tc.want.condition}, conds); diff != "" {
				t.Errorf("\n%s\nplan(...): -want conditions, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanKubeconfig: the kubeconfig Secret is required, and its admin
// kubeconfig keys become connection details once it arrived.
func TestPlanKubeconfig(t *testing.T) {
	secret := func(data string) string {
		return `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo}, data: ` + data + `}`
	}
	type want struct {
		details     map[string][]byte
		requirement *fnv1.ResourceSelector
	}
	requirement := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: "demo-admin-kubeconfig"}, Namespace: ptr.To("tenant-demo")}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		want   want
	}{
		"NotArrived": {
			reason: "Before Crossplane fetched it there are no connection details.",
			args:   fntest.Call{Spec: `{}`},
			want:   want{requirement: requirement},
		},
		"NotFound": {
			reason: "Kamaji has not written it yet.",
			args:   fntest.Call{Spec: `{}`, Required: map[string][]string{"kubeconfig-secret": nil}},
			want:   want{requirement: requirement},
		},
		"Arrived": {
			reason: "admin.conf and super-admin.svc, base64-decoded (YWRtaW4= is admin, c3VwZXI= super); other keys are not copied.",
			args: fntest.Call{Spec: `{}`, Required: map[string][]string{"kubeconfig-secret": {
				secret(`{admin.conf: YWRtaW4=, super-admin.svc: c3VwZXI=, other: eA==}`)}}},
			want: want{details: map[string][]byte{"admin.conf": []byte("admin"), "super-admin.svc": []byte("super")}, requirement: requirement},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args, "")
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			got := want{details: p.ConnectionDetails, requirement: p.Requirements["kubeconfig-secret"]}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), protocmp.Transform(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanErrors: plan names every bad value at once, each by its field.
func TestPlanErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   fntest.Call
		input  string
		want   field.ErrorList
	}{
		"UnknownVersion": {
			reason: "v1.29 is not in the version table.",
			args:   fntest.Call{Spec: `{version: v1.29}`},
			want: field.ErrorList{field.NotSupported(field.NewPath("spec", "version"), "v1.29",
				[]string{"v1.35", "v1.34", "v1.33", "v1.32", "v1.31"})},
		},
		"SkippedMinor": {
			reason: "A control plane running v1.33.8 may go to v1.33 or v1.34, not v1.35 (kubeadm's rule).",
			args: fntest.Call{Spec: `{version: v1.35}`, Observed: map[string]string{
				"kamajicontrolplane": `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.33.8}, status: {version: v1.33.8}}`}},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "version"), "v1.35",
				"the control plane runs v1.33.8; minor versions cannot be skipped (kubeadm upgrades one minor at a time); allowed next: v1.33 or v1.34")},
		},
		"EveryProblemAtOnce": {
			reason: "Zero replicas, an unknown preset and a bad input storage size are reported together.",
			args:   fntest.Call{Spec: `{controlPlane: {replicas: 0, apiServer: {resourcesPreset: x9.huge}}}`},
			input:  `{etcd: {storageSize: lots}}`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "controlPlane", "replicas"), int32(0), "must be between 1 and 7"),
				field.NotSupported(field.NewPath("spec", "controlPlane", "apiServer", "resourcesPreset"), "x9.huge", presets.Names()),
				field.Invalid(field.NewPath("input", "etcd", "storageSize"), "lots", "must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e9"),
			},
		},
		"StorageSizeUnusedWithSharedDataStore": {
			reason: "The etcd size is not read when the DataStore is shared.",
			args:   fntest.Call{Spec: `{}`},
			input:  `{dataStoreName: shared, etcd: {storageSize: lots}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := planOf(t, tc.args, tc.input)
			if diff := cmp.Diff(tc.want, errs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nplan(...): -want errors, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanReadiness: each composed resource's readiness comes from its
// observed status: Cluster Available, KamajiControlPlane
// and KubevirtCluster and DataStore status.ready, EtcdCluster, the PKI and
// the Usages Ready.
func TestPlanReadiness(t *testing.T) {
	cond := func(typ, status string) string {
		return `{status: {conditions: [{type: ` + typ + `, status: "` + status + `"}]}}`
	}
	ready := `{status: {ready: true}}`
	cases := map[string]struct {
		reason string
		args   map[string]string // observed objects by composed-resource name
		want   map[string]fnv1.Ready
	}{
		"NothingObserved": {
			reason: "Nothing is ready before it is observed.",
			want: map[string]fnv1.Ready{"cluster": fnv1.Ready_READY_FALSE, "kamajicontrolplane": fnv1.Ready_READY_FALSE,
				"etcdcluster": fnv1.Ready_READY_FALSE, "etcd-ca": fnv1.Ready_READY_FALSE},
		},
		"ReadyAsObserved": {
			reason: "Each kind's own signal of readiness.",
			args: map[string]string{
				"cluster": cond("Available", "True"), "kubevirtcluster": ready, "kamajicontrolplane": ready, "datastore": ready,
				"etcdcluster": cond("Ready", "True"), "etcd-ca": cond("Ready", "True"), "etcd-selfsigned-issuer": cond("Ready", "True"),
				"usage-etcdcluster-by-kamajicontrolplane": cond("Ready", "True"),
			},
			want: map[string]fnv1.Ready{"cluster": fnv1.Ready_READY_TRUE, "kubevirtcluster": fnv1.Ready_READY_TRUE,
				"kamajicontrolplane": fnv1.Ready_READY_TRUE, "datastore": fnv1.Ready_READY_TRUE, "etcdcluster": fnv1.Ready_READY_TRUE,
				"etcd-ca": fnv1.Ready_READY_TRUE, "etcd-selfsigned-issuer": fnv1.Ready_READY_TRUE,
				"usage-etcdcluster-by-kamajicontrolplane": fnv1.Ready_READY_TRUE},
		},
		"OtherSignalsAreNotReadiness": {
			reason: "A Cluster Ready but not Available, a KamajiControlPlane with a Ready condition but not status.ready, an EtcdCluster with status.ready but no Ready condition, a Usage that merely exists: none is ready.",
			args: map[string]string{
				"cluster": cond("Ready", "True"), "kamajicontrolplane": cond("Ready", "True"), "etcdcluster": ready,
				"usage-kamajicontrolplane-by-nodegroup-md0": `{kind: Usage}`,
			},
			want: map[string]fnv1.Ready{"cluster": fnv1.Ready_READY_FALSE, "kamajicontrolplane": fnv1.Ready_READY_FALSE,
				"etcdcluster": fnv1.Ready_READY_FALSE, "usage-kamajicontrolplane-by-nodegroup-md0": fnv1.Ready_READY_FALSE},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			call := fntest.Call{Spec: `{}`, Observed: tc.args}
			p, errs := planOf(t, call, "")
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			r, _ := call.Read(t)
			got := map[string]fnv1.Ready{}
			for _, c := range p.Composed {
				if _, ok := tc.want[c.Name]; ok {
					got[c.Name] = c.Ready(r, c.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nplan(...): -want readiness, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanNamespaced: a namespaced XR (TenantCluster) composes
// nothing cluster-scoped and has no connection details. Without a shared
// DataStore in the input it requires its tenant's DataStore
// tenantkube.tenant.<NS>; until that exists it composes no control plane
// (keeping one already composed) and waits with
// WaitingForTenantDataStore.
func TestPlanNamespaced(t *testing.T) {
	const (
		ds  = `{apiVersion: kamaji.clastix.io/v1alpha1, kind: DataStore, metadata: {name: tenantkube.tenant.tenant-demo}, status: {ready: true}}`
		kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1alpha2, kind: KamajiControlPlane, spec: {version: v1.35.6}, status: {ready: false}}`
		use = `{apiVersion: protection.crossplane.io/v1beta1, kind: Usage}`
		sec = `{apiVersion: v1, kind: Secret, metadata: {name: demo-admin-kubeconfig, namespace: tenant-demo}, data: {admin.conf: YQ==}}`
	)
	dsSelector := &fnv1.ResourceSelector{ApiVersion: "kamaji.clastix.io/v1alpha1", Kind: "DataStore",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: "tenantkube.tenant.tenant-demo"}}
	waitMsg := "the tenant's DataStore tenantkube.tenant.tenant-demo does not exist yet: no control plane is composed until it does"
	type want struct {
		composed     []string
		kept         []function.Kept
		dataStore    string
		requirements map[string]*fnv1.ResourceSelector
		reason       string
		message      string
	}
	cases := map[string]struct {
		reason string
		args   fntest.Call
		input  string
		want   want
	}{
		"NotArrived": {
			reason: "The tenant DataStore has not arrived: no KamajiControlPlane and no Usage of it; no etcd, no DataStore, no kubeconfig requirement.",
			args:   fntest.Call{Namespaced: true, Spec: `{}`},
			want: want{composed: []string{"cluster", "kubevirtcluster"},
				requirements: map[string]*fnv1.ResourceSelector{"tenant-datastore": dsSelector},
				reason:       "WaitingForTenantDataStore", message: waitMsg},
		},
		"NotFound": {
			reason: "Crossplane answered: no such DataStore. Still waiting, not Fatal.",
			args:   fntest.Call{Namespaced: true, Spec: `{}`, Required: map[string][]string{"tenant-datastore": nil}},
			want: want{composed: []string{"cluster", "kubevirtcluster"},
				requirements: map[string]*fnv1.ResourceSelector{"tenant-datastore": dsSelector},
				reason:       "WaitingForTenantDataStore", message: waitMsg},
		},
		"NotFoundKeepsComposed": {
			reason: "A control plane and Usage composed before are kept unchanged while the DataStore is missing: never a smaller desired state.",
			args: fntest.Call{Namespaced: true, Spec: `{}`, Required: map[string][]string{"tenant-datastore": nil},
				Observed: map[string]string{"kamajicontrolplane": kcp, "usage-kamajicontrolplane-by-nodegroup-md0": use}},
			want: want{composed: []string{"cluster", "kubevirtcluster", "apiserver-service", "apiserver-ingress"},
				kept:         []function.Kept{{Name: "usage-kamajicontrolplane-by-nodegroup-md0"}, {Name: "kamajicontrolplane"}},
				requirements: map[string]*fnv1.ResourceSelector{"tenant-datastore": dsSelector},
				reason:       "WaitingForTenantDataStore", message: waitMsg},
		},
		"NotFoundKeepsRoute": {
			reason: "The API server's Service and Ingress composed before stay desired even when no control plane is observed: never a smaller desired state.",
			args: fntest.Call{Namespaced: true, Spec: `{}`, Required: map[string][]string{"tenant-datastore": nil},
				Observed: map[string]string{"apiserver-ingress": `{apiVersion: networking.k8s.io/v1, kind: Ingress}`}},
			want: want{composed: []string{"cluster", "kubevirtcluster", "apiserver-service", "apiserver-ingress"},
				requirements: map[string]*fnv1.ResourceSelector{"tenant-datastore": dsSelector},
				reason:       "WaitingForTenantDataStore", message: waitMsg},
		},
		"Found": {
			reason: "With the tenant DataStore the control plane uses it; the kubeconfig Secret is never required nor copied.",
			args:   fntest.Call{Namespaced: true, Spec: `{}`, Required: map[string][]string{"tenant-datastore": {ds}, "kubeconfig-secret": {sec}}},
			want: want{composed: []string{"usage-kamajicontrolplane-by-nodegroup-md0", "cluster", "kubevirtcluster", "kamajicontrolplane", "apiserver-service", "apiserver-ingress"},
				dataStore:    "tenantkube.tenant.tenant-demo",
				requirements: map[string]*fnv1.ResourceSelector{"tenant-datastore": dsSelector},
				reason:       "WaitingForControlPlane", message: "the KamajiControlPlane is not ready yet"},
		},
		"SharedDataStore": {
			reason: "A shared DataStore of the input is used as for a claim; no DataStore is required.",
			args:   fntest.Call{Namespaced: true, Spec: `{}`},
			input:  `{dataStoreName: shared}`,
			want: want{composed: []string{"usage-kamajicontrolplane-by-nodegroup-md0", "cluster", "kubevirtcluster", "kamajicontrolplane", "apiserver-service", "apiserver-ingress"},
				dataStore: "shared", reason: "WaitingForControlPlane", message: "the KamajiControlPlane is not ready yet"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := planOf(t, tc.args, tc.input)
			if len(errs) > 0 {
				t.Fatalf("\n%s\nplan(...): %v", tc.reason, errs)
			}
			got := want{composed: composedNames(p), kept: p.Kept, requirements: maps.Clone(p.Requirements)}
			// The name-clash requirements are TestNameClash's.
			delete(got.requirements, requiredSameNameClaim)
			delete(got.requirements, requiredSameNameXR)
			for _, c := range p.Composed {
				if c.Name == "kamajicontrolplane" {
					got.dataStore = c.Object.(*kamajiv1alpha2.KamajiControlPlane).Spec.DataStoreName
				}
			}
			if c, ok := planCondition(p, tkv1alpha1.ConditionControlPlaneReady); ok {
				got.reason, got.message = c.Reason, c.Message
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), protocmp.Transform(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nplan(...): -want, +got:\n%s", tc.reason, diff)
			}
			if p.ConnectionDetails != nil {
				t.Errorf("\n%s\nplan(...): a namespaced XR got connection details %v", tc.reason, p.ConnectionDetails)
			}
			if diff := cmp.Diff(map[string]any{"controlPlane": map[string]any{"endpoint": "https://demo." + tenantHost + ":443"},
				"kubeconfigSecret": "demo-admin-kubeconfig"}, p.Status); diff != "" {
				t.Errorf("\n%s\nplan(...): -want status, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
