package test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

const (
	kccmPolicyFile = "deploy/kccm-service-policy.yaml"
	// kccmRefusal is in every denial message of the policy.
	kccmRefusal = "refused to a KubeVirt cloud controller"
)

var (
	serviceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	serviceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// tenantLBService is a LoadBalancer Service of a tenant cluster as the
// tenant API server holds it when its service controller hands it to
// KCCM: defaulted, with a UID and allocated node ports.
func tenantLBService(t *testing.T) *unstructured.Unstructured {
	return obj(t, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, uid: 6f1c2a4e-9b7d-4c3e-8a21-0d5e7f9a1b2c}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Cluster
  selector: {app: web}
  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080, nodePort: 31080}
  - {name: https, protocol: TCP, port: 443, targetPort: 8443, nodePort: 31443}
`)
}

// kccmService is the Service KCCM v0.6.0 creates in namespace ns of the
// management cluster for tenant Service s of cluster n in the default
// loadBalancerMode, Selectorless
// (kubevirt/cloud-provider-kubevirt v0.6.0 pkg/provider/loadbalancer.go),
// as admission sees it: after the API server's defaults and allocations
// (k8s.io/apiserver v0.36.4 pkg/registry/generic/registry/store.go:499
// BeginCreate allocates node ports, :509 BeforeCreate clears status, before
// :515 runs admission).
func kccmService(s *unstructured.Unstructured, ns, n string) *unstructured.Unstructured {
	// k8s.io/cloud-provider v0.27.3 cloud.go:89-98 (DefaultLoadBalancerName,
	// loadbalancer.go:55): "a" and the UID without dashes, at most 32 bytes.
	name := "a" + strings.ReplaceAll(string(s.GetUID()), "-", "")
	if len(name) > 32 {
		name = name[:32]
	}
	spec, _, _ := unstructured.NestedMap(s.Object, "spec")
	var ports []any
	for i, p := range spec["ports"].([]any) {
		p := p.(map[string]any)
		// :235-247: name, protocol, port; the target is the tenant node port.
		ports = append(ports, map[string]any{"name": p["name"], "protocol": p["protocol"], "port": p["port"],
			"targetPort": p["nodePort"], "nodePort": int64(32000 + i)}) // nodePort: allocated
	}
	out := map[string]any{
		"type":  "LoadBalancer", // :206
		"ports": ports,          // :205
		// No selector (:211-214: selectorless: true in the cloud-config).
		"externalTrafficPolicy": spec["externalTrafficPolicy"], // :207
		// The API server's defaults and allocations.
		"clusterIP": "10.96.12.34", "clusterIPs": []any{"10.96.12.34"}, "ipFamilies": []any{"IPv4"},
		"ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
		"allocateLoadBalancerNodePorts": true,
	}
	if ips, ok := spec["externalIPs"].([]any); ok && len(ips) > 0 { // :218-220
		out["externalIPs"] = ips
	}
	if ip, _ := spec["loadBalancerIP"].(string); ip != "" { // :221-223
		out["loadBalancerIP"] = ip
	}
	if p, _ := spec["healthCheckNodePort"].(int64); p > 0 { // :224-226
		out["healthCheckNodePort"] = p
	} else if spec["externalTrafficPolicy"] == "Local" {
		out["healthCheckNodePort"] = int64(32100) // allocated
	}
	meta := map[string]any{
		"name": name, "namespace": ns,
		// :87-95: KCCM's keys, then the cloud-config's infraLabels
		// (functions/workers/cloudcontroller.go cloudConfig).
		"labels": map[string]any{
			"cluster.x-k8s.io/tenant-service-name": s.GetName(), "cluster.x-k8s.io/tenant-service-namespace": s.GetNamespace(),
			"cluster.x-k8s.io/cluster-name": n, "tenantkube.io/cluster": n,
		},
	}
	if a, ok, _ := unstructured.NestedStringMap(s.Object, "metadata", "annotations"); ok { // :201
		m := map[string]any{}
		for k, v := range a {
			m[k] = v
		}
		meta["annotations"] = m
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": out, "status": map[string]any{}}}
}

// kccmIdentity is a KCCM ServiceAccount the golden renders compose and the
// namespace its RoleBinding lets it write Services in.
type kccmIdentity struct{ user, ns, n string }

// kccmIdentities reads, from every golden render, the subjects of the
// RoleBindings of ClusterRole tenantkube:kccm: the claim's ServiceAccount
// in its management namespace, the TenantCluster's in its own.
func kccmIdentities(t *testing.T, root string) []kccmIdentity {
	t.Helper()
	seen := map[kccmIdentity]bool{}
	var out []kccmIdentity
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		if o.obj.GetKind() != "RoleBinding" {
			continue
		}
		if ref, _, _ := unstructured.NestedString(o.obj.Object, "roleRef", "name"); ref != "tenantkube:kccm" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.obj.Object, "subjects")
		for _, s := range subjects {
			s := s.(map[string]any)
			if s["kind"] != "ServiceAccount" {
				t.Fatalf("%s RoleBinding %s: subject %v is no ServiceAccount", o.file, o.obj.GetName(), s)
			}
			n := strings.TrimSuffix(s["name"].(string), "-kccm")
			id := kccmIdentity{"system:serviceaccount:" + s["namespace"].(string) + ":" + s["name"].(string), o.obj.GetNamespace(), n}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].user < out[j].user })
	return out
}

// kccmEntry is one tenant Service field or annotation KCCM copies.
type kccmEntry struct {
	name   string
	change func(tenant *unstructured.Unstructured)
	// what the denial names; "" when the entry is admitted.
	refusal string
}

func withAnnotation(k, v string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[k] = v
		u.SetAnnotations(a)
	}
}

func withSpec(v any, field string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, v, "spec", field) }
}

// kccmEntries: what a tenant writes on its LoadBalancer Service, each
// alone.
var kccmEntries = []kccmEntry{
	{"plain", func(*unstructured.Unstructured) {}, ""},
	{"externalTrafficPolicy Local", withSpec("Local", "externalTrafficPolicy"), ""},
	{"healthCheckNodePort", func(u *unstructured.Unstructured) {
		withSpec("Local", "externalTrafficPolicy")(u)
		withSpec(int64(31999), "healthCheckNodePort")(u)
	}, ""},
	{"Helm's release name", withAnnotation("meta.helm.sh/release-name", "ingress-nginx"), ""},
	{"Helm's release namespace", withAnnotation("meta.helm.sh/release-namespace", "ingress-nginx"), ""},
	{"kubectl's last applied", withAnnotation("kubectl.kubernetes.io/last-applied-configuration", `{"kind":"Service"}`), ""},
	// The management API server's ClusterIP, the CVE-2020-8554 move.
	{"externalIPs", withSpec([]any{"10.96.0.1"}, "externalIPs"), "spec.externalIPs 10.96.0.1"},
	{"externalIPs, public", withSpec([]any{"198.51.100.7", "198.51.100.8"}, "externalIPs"), "spec.externalIPs 198.51.100.7, 198.51.100.8"},
	{"loadBalancerIP", withSpec("203.0.113.10", "loadBalancerIP"), "spec.loadBalancerIP 203.0.113.10"},
	{"MetalLB fixed address", withAnnotation("metallb.universe.tf/loadBalancerIPs", "203.0.113.10"), "annotations metallb.universe.tf/loadBalancerIPs"},
	{"MetalLB shared address", withAnnotation("metallb.universe.tf/allow-shared-ip", "platform-ingress"), "annotations metallb.universe.tf/allow-shared-ip"},
	{"MetalLB pool", withAnnotation("metallb.universe.tf/address-pool", "platform"), "annotations metallb.universe.tf/address-pool"},
	{"Cilium LB IPAM address", withAnnotation("lbipam.cilium.io/ips", "203.0.113.10"), "annotations lbipam.cilium.io/ips"},
	{"kube-vip address", withAnnotation("kube-vip.io/loadbalancerIPs", "203.0.113.10"), "annotations kube-vip.io/loadbalancerIPs"},
	{"external-dns name", withAnnotation("external-dns.alpha.kubernetes.io/hostname", "api.k8s.example.net"), "annotations external-dns.alpha.kubernetes.io/hostname"},
	{"external-dns target", withAnnotation("external-dns.alpha.kubernetes.io/target", "203.0.113.10"), "annotations external-dns.alpha.kubernetes.io/target"},
	{"an allowed key's lookalike", withAnnotation("meta.helm.sh/release-name-x", "a"), "annotations meta.helm.sh/release-name-x"},
	{"an allowed key's prefix", withAnnotation("meta.helm.sh/release", "a"), "annotations meta.helm.sh/release"},
	{"no key", withAnnotation("example.com/anything", ""), "annotations example.com/anything"},
}

func kccmCreate(t *testing.T, v validating.Validator, svc *unstructured.Unstructured, user string) (bool, string) {
	t.Helper()
	return admitted(t, v, admission.Create, serviceGVR, serviceGVK, "", svc, nil, nil, user)
}

// TestKCCMServicePolicy evaluates deploy/kccm-service-policy.yaml with
// kube-apiserver's own validator on the Service KCCM v0.6.0 builds from a
// tenant LoadBalancer Service (kccmService), for every KCCM ServiceAccount
// the golden renders bind tenantkube:kccm to (a claim's, a
// TenantCluster's): the plain Service, external traffic policy Local and
// the ownership annotations of Helm and kubectl are admitted; each address
// field and annotation of kccmEntries is refused, naming it; the same
// Services from identities that only look like KCCM's are not matched.
func TestKCCMServicePolicy(t *testing.T) {
	root := repoRoot(t)
	p, _, v := loadPolicy(t, filepath.Join(root, kccmPolicyFile))
	if p.Spec.ParamKind != nil {
		t.Errorf("%s: paramKind %+v; the allow-lists are the policy's variables", kccmPolicyFile, p.Spec.ParamKind)
	}
	covered := map[string]bool{}
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		for _, res := range r.Resources {
			for _, op := range r.Operations {
				if len(r.APIGroups) == 1 && r.APIGroups[0] == "" {
					covered[res+" "+string(op)] = true
				}
			}
		}
	}
	for _, want := range []string{"services CREATE", "services UPDATE", "services/status UPDATE"} {
		if !covered[want] {
			t.Errorf("%s does not match %s", kccmPolicyFile, want)
		}
	}

	ids := kccmIdentities(t, root)
	var claim, namespaced bool
	for _, id := range ids {
		claim = claim || strings.Contains(id.user, ":"+fntest.ManagementNamespace(id.ns, id.n)+":")
		namespaced = namespaced || strings.HasPrefix(id.user, "system:serviceaccount:"+id.ns+":")
	}
	if !claim || !namespaced {
		t.Fatalf("KCCM identities of the golden renders %v: want a claim's (management namespace) and a TenantCluster's", ids)
	}
	for _, id := range ids {
		for _, e := range kccmEntries {
			tenant := tenantLBService(t)
			e.change(tenant)
			svc := kccmService(tenant, id.ns, id.n)
			ok, msg := kccmCreate(t, v, svc, id.user)
			if ok != (e.refusal == "") {
				t.Errorf("%s: %s creates the Service with %s: admitted %t (%s)", id.ns, id.user, e.name, ok, msg)
			}
			if !ok && (!strings.Contains(msg, e.refusal) || !strings.Contains(msg, kccmRefusal) || !strings.Contains(msg, "Service "+id.ns+"/"+svc.GetName())) {
				t.Errorf("%s by %s: denial %q does not name the Service and %q", e.name, id.user, msg, e.refusal)
			}
		}
	}

	// The forbidden Service from identities that are not a KCCM of the
	// Service's namespace: matched neither way, so admitted here.
	mgmt := fntest.ManagementNamespace("tenant-demo", "demo")
	tenant := tenantLBService(t)
	withSpec([]any{"10.96.0.1"}, "externalIPs")(tenant)
	withAnnotation("metallb.universe.tf/allow-shared-ip", "platform-ingress")(tenant)
	hostile := kccmService(tenant, "tenant-demo", "demo")
	for _, u := range []string{
		crossplaneUser,
		"system:serviceaccount:kube-system:service-controller",
		"mallory",
		"demo-kccm", // a user, not a ServiceAccount
		"system:serviceaccount:tenant-other:demo-kccm",  // another tenant's TenantCluster
		"system:serviceaccount:tenant-demo-x:demo-kccm", // a namespace the request's is a prefix of
		"system:serviceaccount:tenant-dem:demo-kccm",    // a prefix of the request's namespace
		"system:serviceaccount:tenant-demo:demo-kccm-x", // the name a prefix
		"system:serviceaccount:tenant-demo:demo-kccmx",  // the suffix without its end
		"system:serviceaccount:tenant-demo:kccm",        // no cluster name
		"system:serviceaccount:tenant-demo:demo-kcsi-controller",
		"system:serviceaccount:tenant-demo:demo-cluster-autoscaler",
		"system:serviceaccount:" + mgmt + ":demo-kcsi-controller",
		"system:serviceaccount:" + mgmt[:len(mgmt)-1] + ":demo-kccm",             // 25 digest characters
		"system:serviceaccount:" + mgmt + "a:demo-kccm",                          // 27
		"system:serviceaccount:" + strings.ToUpper(mgmt) + ":demo-kccm",          // not base32 lower case
		"system:serviceaccount:" + mgmt[:len(mgmt)-1] + "1:demo-kccm",            // 1 is no base32 digit
		"system:serviceaccount:tenantkube-platformplatformplatformpla:demo-kccm", // base32 letters only, 27
		"system:serviceaccounts:" + mgmt + ":demo-kccm",                          // a group's shape
		"x-system:serviceaccount:" + mgmt + ":demo-kccm",
		"system:serviceaccount:" + mgmt + ":demo-kccm:x",
	} {
		if ok, msg := kccmCreate(t, v, hostile, u); !ok {
			t.Errorf("%s matched as a KCCM of tenant-demo: %s", u, msg)
		}
	}
	// KCCM identities nobody composed yet still match: any claim's
	// management namespace, any cluster name of a TenantCluster.
	for _, u := range []string{
		"system:serviceaccount:" + fntest.ManagementNamespace("tenant-other", "web") + ":web-kccm",
		"system:serviceaccount:tenant-demo:a-kccm",
		"system:serviceaccount:tenant-demo:a.b-kccm",
	} {
		if ok, _ := kccmCreate(t, v, hostile, u); ok {
			t.Errorf("%s, a KCCM identity, not matched in tenant-demo", u)
		}
	}
}

// TestKCCMServicePolicyUpdate: KCCM changes the ports of a Service it
// created and writes the object it read back (loadbalancer.go:148-157):
// admitted, also where a Service the policy predates carries what it now
// refuses; adding or changing any of that is refused, and any status
// write, to KCCM only.
func TestKCCMServicePolicyUpdate(t *testing.T) {
	root := repoRoot(t)
	_, _, v := loadPolicy(t, filepath.Join(root, kccmPolicyFile))
	ns, n := "tenant-demo", "demo"
	kccm := "system:serviceaccount:" + fntest.ManagementNamespace(ns, n) + ":" + n + "-kccm"
	build := func(changes ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
		tenant := tenantLBService(t)
		for _, c := range changes {
			c(tenant)
		}
		return kccmService(tenant, ns, n)
	}
	newPort := func(u *unstructured.Unstructured) {
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		ports = append(ports, map[string]any{"name": "dns", "protocol": "UDP", "port": int64(53), "targetPort": int64(31053), "nodePort": int64(32053)})
		_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
	}
	ips := withSpec([]any{"10.96.0.1"}, "externalIPs")
	lbIP := withSpec("203.0.113.10", "loadBalancerIP")
	shared := withAnnotation("metallb.universe.tf/allow-shared-ip", "platform-ingress")
	for _, c := range []struct {
		name     string
		old, new *unstructured.Unstructured
		refusal  string
	}{
		{"ports", build(), build(newPort), ""},
		{"ports of a Service carrying all of it", build(ips, lbIP, shared), build(ips, lbIP, shared, newPort), ""},
		{"externalIPs added", build(), build(ips), "spec.externalIPs"},
		{"externalIPs changed", build(ips), build(withSpec([]any{"10.96.0.2"}, "externalIPs")), "spec.externalIPs 10.96.0.2"},
		{"loadBalancerIP added", build(), build(lbIP), "spec.loadBalancerIP"},
		{"loadBalancerIP changed", build(lbIP), build(withSpec("203.0.113.11", "loadBalancerIP")), "spec.loadBalancerIP 203.0.113.11"},
		{"annotation added", build(), build(shared), "annotations metallb.universe.tf/allow-shared-ip"},
		{"annotation changed", build(shared), build(withAnnotation("metallb.universe.tf/allow-shared-ip", "other")), "annotations metallb.universe.tf/allow-shared-ip"},
		{"annotation removed", build(shared), build(), ""},
		{"allowed annotation added", build(), build(withAnnotation("meta.helm.sh/release-name", "x")), ""},
	} {
		ok, msg := admitted(t, v, admission.Update, serviceGVR, serviceGVK, "", c.new, c.old, nil, kccm)
		if ok != (c.refusal == "") || (!ok && (!strings.Contains(msg, c.refusal) || !strings.Contains(msg, kccmRefusal))) {
			t.Errorf("update, %s: admitted %t (%s), want refusal %q", c.name, ok, msg, c.refusal)
		}
		if ok, msg := admitted(t, v, admission.Update, serviceGVR, serviceGVK, "", c.new, c.old, nil, crossplaneUser); !ok {
			t.Errorf("update, %s, by %s: refused (%s)", c.name, crossplaneUser, msg)
		}
	}
	old := build()
	withStatus := build()
	_ = unstructured.SetNestedSlice(withStatus.Object, []any{map[string]any{"ip": "203.0.113.10"}}, "status", "loadBalancer", "ingress")
	for _, u := range []string{kccm, "system:serviceaccount:metallb-system:controller"} {
		ok, msg := admitted(t, v, admission.Update, serviceGVR, serviceGVK, "status", withStatus, old, nil, u)
		if ok != (u != kccm) || (!ok && !strings.Contains(msg, "status "+kccmRefusal)) {
			t.Errorf("status write by %s: admitted %t (%s)", u, ok, msg)
		}
	}
}

// TestKCCMServicePolicyAllowedAddresses: the platform's
// allowedLoadBalancerIPs admits a listed address in its namespace only.
func TestKCCMServicePolicyAllowedAddresses(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, kccmPolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	const unset = "  - name: allowedLoadBalancerIPs\n    expression: \"{}\"\n"
	if strings.Count(string(raw), unset) != 1 {
		t.Fatalf("%s: no variable allowedLoadBalancerIPs set to {}", kccmPolicyFile)
	}
	edited := strings.Replace(string(raw), unset,
		"  - name: allowedLoadBalancerIPs\n    expression: \"{'tenant-demo': ['203.0.113.10']}\"\n", 1)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, v := loadPolicy(t, path)
	for _, c := range []struct {
		ns, ip string
		want   bool
	}{
		{"tenant-demo", "203.0.113.10", true},
		{"tenant-demo", "203.0.113.11", false},
		{"tenant-other", "203.0.113.10", false},
	} {
		tenant := tenantLBService(t)
		withSpec(c.ip, "loadBalancerIP")(tenant)
		user := "system:serviceaccount:" + fntest.ManagementNamespace(c.ns, "demo") + ":demo-kccm"
		if ok, msg := kccmCreate(t, v, kccmService(tenant, c.ns, "demo"), user); ok != c.want {
			t.Errorf("loadBalancerIP %s in %s: admitted %t, want %t (%s)", c.ip, c.ns, ok, c.want, msg)
		}
	}
}
