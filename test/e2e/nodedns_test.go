//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tenantkube/tenantkube/internal/render"
)

// nodeDNS is the scenario of TestEtcdPeers's network for the names the
// functions hand to worker VMs and tenant pods. For the default cluster
// domain (clusterDomain left out of the platform settings) and for
// nodeDomainOther it:
//
//   - renders nodeClaims through the real Crossplane engine with the
//     three functions (package/composition.yaml) and walks every composed
//     object for host names (nodeHosts): URL hosts, host:port strings and
//     any name with a "svc" label or under a cluster domain (the
//     platform's, cluster.local, cozy.local); YAML held in a string
//     (Talos patches) and Secret data are walked too;
//   - checks each cluster name against nodeFields and fails on a field
//     it does not list; a name a node or tenant pod dials must be
//     <svc>.<ns>.svc.<domain> of a Service the test knows, a search domain
//     handed to a node svc.<domain> or <domain>;
//   - serves in CoreDNS what cluster DNS gives those Services in that
//     domain, A records <svc>.<ns>.svc.<domain> (kubernetes/dns
//     docs/specification.md 2.3.1), and NXDOMAIN for every other name;
//   - resolves each name from peersNode, whose resolv.conf holds only the
//     nameserver (what KubeVirt's DHCP gives a VM), with the Go resolver
//     (kubeadm, Talos, Cilium and vmagent are Go programs) and glibc's
//     (getent ahosts): each resolves to its Service's address;
//   - negative control: the partial name <svc>.<ns>.svc, and
//     <svc>.<ns>.svc.cluster.local under another domain, are NXDOMAIN from
//     the node, while the partial name resolves from a pod's resolv.conf
//     (search path, ndots:5), the only difference.
func (w *peersWorld) nodeDNS(t *testing.T) {
	for _, domain := range []string{"", nodeDomainOther} {
		name := cmp.Or(domain, "the default cluster domain")
		t.Run(name, func(t *testing.T) { w.nodeDNSDomain(t, domain) })
	}
}

const (
	// nodeDomainOther is a cluster domain other than cluster.local.
	nodeDomainOther = "tenants.example.net"
	// nodeDomainDefault is clusterDomain's documented default
	// (docs/platform-guide.md, platform settings).
	nodeDomainDefault = "cluster.local"
	// nodeResolveEnv makes the test binary a resolver (TestMain): it
	// looks up the space-separated names and prints their
	// nodeLookupResults (nodeResolveMain).
	nodeResolveEnv = "TENANTKUBE_E2E_RESOLVE"
	// nodeFirstServiceIP is the last octet of the first Service's ClusterIP.
	nodeFirstServiceIP = 101
)

// nodeClaims are the claims rendered, with their required resources
// besides the instance types and the platform settings: a kubeadm node
// group; Talos node groups (the Talos and Kamaji CAs observed) beside an
// Ubuntu (kubeadm) group; every add-on. Cilium is installed on each.
var nodeClaims = []struct {
	name, xr string
	required []string
}{
	{"kubeadm", "examples/xr.yaml", nil},
	{"talos", "test/testdata/workers/xr-talos.yaml", []string{"test/testdata/workers/talos-pki.yaml"}},
	{"every add-on", "test/testdata/addons/xr-everything.yaml", nil},
}

// The roles of a field holding cluster names (nodeFields).
const (
	// roleDial: a worker VM or a tenant pod dials the name; it must be
	// <svc>.<ns>.svc.<domain> of a known Service and resolve on the node.
	roleDial = iota
	// roleSearch: a search domain handed to a node; it must be
	// svc.<domain> or <domain>.
	roleSearch
	// roleTenantDomain: the tenant cluster's own DNS domain, cluster.local
	// whatever the management cluster's (the default of kubeadm's
	// networking.dnsDomain and of Talos's cluster.network.dnsDomain).
	roleTenantDomain
	// roleMgmt: read only in the management cluster, or a name a
	// certificate covers; never resolved on a node (docs/architecture.md,
	// Names).
	roleMgmt
)

// nodeFields are the fields of composed objects, kind and path ([] a list
// item, | a YAML document held in a string), that hold cluster names, with
// their role and who reads them. Dialled from a worker VM or a tenant pod:
//   - the kubeadm join's discovery endpoint, host:port (kubeadm on the VM);
//   - the Talos machine configuration's cluster.controlPlane.endpoint, a
//     URL (machined and the kubelet on the VM);
//   - Cilium's k8sServiceHost (its agents, host network on the VM);
//   - vmagent's remote-write URL, Fluent Bit's http output (its Host
//     line) and the VPA recommender's --prometheus-address (tenant pods,
//     through the tenant's CoreDNS, which forwards to the VM's resolvers).
var nodeFields = map[string]struct {
	role int
	who  string
}{
	"KubeadmConfigTemplate spec.template.spec.joinConfiguration.discovery.bootstrapToken.apiServerEndpoint": {roleDial, "kubeadm join"},
	"TalosConfigTemplate spec.template.spec.strategicPatches[]|cluster.controlPlane.endpoint":               {roleDial, "Talos endpoint"},
	"HelmRelease spec.values.k8sServiceHost":                                                                {roleDial, "Cilium"},
	"HelmRelease spec.values.vmagent.remoteWrite.url":                                                       {roleDial, "vmagent"},
	"HelmRelease spec.values.fluent-bit.config.outputs":                                                     {roleDial, "Fluent Bit"},
	"HelmRelease spec.values.recommender.extraArgs.prometheus-address":                                      {roleDial, "VPA recommender"},
	"TalosConfigTemplate spec.template.spec.strategicPatches[]|machine.network.searchDomains[]":             {roleSearch, "Talos resolver"},
	"HelmRelease spec.values.controller.clusterDomain":                                                      {roleTenantDomain, "ouroboros"},
	"DataStore spec.endpoints[]":                                                                            {roleMgmt, "Kamaji and the tenant API servers dial the etcd client Service"},
	"Certificate spec.dnsNames[]":                                                                           {roleMgmt, "names a certificate covers"},
	"KamajiControlPlane spec.network.certSANs[]":                                                            {roleMgmt, "names the API server certificate covers"},
}

// nodeKubeconfigKey is Kamaji's kubeconfig Secret key, a file name that
// looks like a host: the file name with ".conf" replaced by ".svc"
// (clastix/kamaji internal/resources/kubeconfig.go:233).
const nodeKubeconfigKey = "super-admin.svc"

var (
	nodeURL      = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s"',]+`)
	nodeHostPort = regexp.MustCompile(`^([a-z0-9*]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]*[a-z0-9])?:[0-9]+$`)
	nodeDNSName  = regexp.MustCompile(`([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]*[a-z0-9])?`)
)

// nodeClaimOf is the name of the nodeClaims entry each rendered object
// came from, for messages.
var nodeClaimOf sync.Map

// nodeHost is a host name found in a composed object.
type nodeHost struct {
	object, field, host string
}

// nodeHosts walks every string of obj and returns the host names in it:
// the host of every URL, a whole host:port string's host, and every DNS
// name with a "svc" label or under one of domains.
func nodeHosts(obj *unstructured.Unstructured, domains []string) []nodeHost {
	var out []nodeHost
	id := obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
	if c, ok := nodeClaimOf.Load(obj); ok {
		id = fmt.Sprint(c) + " claim: " + id
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], strings.TrimPrefix(path+"."+k, "."))
			}
		case []any:
			for _, e := range v {
				walk(e, path+"[]")
			}
		case string:
			if strings.Contains(v, "\n") {
				var doc any
				if err := yaml.Unmarshal([]byte(v), &doc); err == nil {
					if _, ok := doc.(map[string]any); ok {
						walk(doc, path+"|")
						return
					}
				}
			}
			seen := map[string]bool{}
			add := func(h string) {
				if h != "" && !seen[h] {
					seen[h] = true
					out = append(out, nodeHost{object: id, field: obj.GetKind() + " " + strings.Replace(path, "|.", "|", 1), host: h})
				}
			}
			for _, u := range nodeURL.FindAllString(v, -1) {
				if p, err := url.Parse(u); err == nil {
					add(p.Hostname())
				}
			}
			if nodeHostPort.MatchString(v) {
				add(v[:strings.LastIndex(v, ":")])
			}
			for _, n := range nodeDNSName.FindAllString(v, -1) {
				if nodeClusterName(n, domains) {
					add(n)
				}
			}
		}
	}
	o := obj.DeepCopy().Object
	if obj.GetKind() == "Secret" {
		// Values Secrets: each data value decoded.
		data, _, _ := unstructured.NestedStringMap(o, "data")
		dec := map[string]any{}
		for k, b := range data {
			raw, _ := base64.StdEncoding.DecodeString(b)
			var doc any
			if err := yaml.Unmarshal(raw, &doc); err == nil && doc != nil {
				dec[k] = doc
			} else {
				dec[k] = string(raw)
			}
		}
		o["data"] = dec
	}
	delete(o, "apiVersion")
	delete(o, "kind")
	walk(o, "")
	return out
}

// nodeClusterName: n has a "svc" label, is one of domains or under one.
func nodeClusterName(n string, domains []string) bool {
	if slices.Contains(strings.Split(n, "."), "svc") {
		return true
	}
	return slices.ContainsFunc(domains, func(d string) bool { return n == d || strings.HasSuffix(n, "."+d) })
}

// nodeMonitoring are the seed chart's monitoring Services in tenant-root
// that the default monitoring settings name under the platform's cluster
// domain ({clusterDomain}, apis/settings/v1alpha1/addons.go):
// vmagent's remote write, VPA's Prometheus, Fluent Bit's output.
var nodeMonitoring = []string{"vminsert-shortterm", "vmselect-shortterm", "vlinsert-generic"}

const nodeMonitoringNS = "tenant-root"

// nodeRender renders every claim with the platform settings of domain
// ("" leaves clusterDomain out) and returns the composed objects, the XR
// first of each render.
func (w *peersWorld) nodeRender(t *testing.T, domain string) []*unstructured.Unstructured {
	t.Helper()
	dom := cmp.Or(domain, nodeDomainDefault)
	data := map[string]any{"remoteStorageClasses": []any{"replicated", "fast-ssd"}}
	if domain != "" {
		data["clusterDomain"] = domain
	}
	platform, err := yaml.Marshal(map[string]any{"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"metadata": map[string]any{"name": "tenantkube"}, "data": data})
	if err != nil {
		fatal(t, err)
	}
	dir := filepath.Join(w.work, "node-dns", dom)
	if err := writeFiles(dir, map[string][]byte{"platform-settings.yaml": platform, "apiservices.yaml": w.nodeAPIServices(t)}); err != nil {
		fatal(t, err)
	}
	// The claims render at once (about 1 s each).
	rendered := make([][]*unstructured.Unstructured, len(nodeClaims))
	errs := make([]error, len(nodeClaims))
	var wg sync.WaitGroup
	for i, c := range nodeClaims {
		wg.Go(func() {
			start := time.Now()
			required := []string{filepath.Join(w.root, "examples", "instancetypes.yaml"), filepath.Join(dir, "platform-settings.yaml"), filepath.Join(dir, "apiservices.yaml")}
			for _, r := range c.required {
				required = append(required, filepath.Join(w.root, r))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			out, err := render.Render(ctx, render.Options{Root: w.root, XR: filepath.Join(w.root, c.xr), Required: required,
				BinDir: w.bin, Crossplane: filepath.Join(w.bin, "crossplane"), CrossplaneCore: filepath.Join(w.bin, "crossplane-core"), Stderr: &stderr})
			if err != nil {
				errs[i] = fmt.Errorf("render %s: %w\n%s", c.xr, err, stderr.Bytes())
				return
			}
			if rendered[i], err = decodeYAML(out); err != nil {
				errs[i] = fmt.Errorf("render %s: %w", c.xr, err)
				return
			}
			for _, o := range rendered[i] {
				nodeClaimOf.Store(o, c.name)
			}
			t.Logf("render: %s (%s), %d objects, %.2fs", c.name, c.xr, len(rendered[i]), time.Since(start).Seconds())
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fatal(t, err)
	}
	return slices.Concat(rendered...)
}

// nodeAPIServices are the APIServices and CRDs (by name) of a management
// cluster with the shared CRDs (../shared/crds, its later/ too) and
// extraCRDs installed, as a YAML stream: kube-apiserver registers
// <version>.<group> for every served version of every CRD
// (k8s.io/kubernetes v1.36.3
// pkg/controlplane/controller/crdregistration/crdregistration_controller.go:196-223).
func (w *peersWorld) nodeAPIServices(t *testing.T) []byte {
	t.Helper()
	shared := cmp.Or(os.Getenv("TENANTKUBE_SHARED"), filepath.Join(w.root, "..", "shared"))
	crds := extraCRDs()
	for _, glob := range []string{filepath.Join(shared, "crds", "*.yaml"), filepath.Join(shared, "crds", "later", "*.yaml")} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			o, err := decodeFile(f)
			if err != nil {
				fatalf(t, "%s: %v", f, err)
			}
			crds = append(crds, o...)
		}
	}
	names := map[string]bool{}
	var out []byte
	for _, c := range crds {
		out = fmt.Appendf(out, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n", c.GetName())
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		for _, v := range versions {
			if v, ok := v.(map[string]any); ok && v["served"] == true {
				names[fmt.Sprint(v["name"])+"."+group] = true
			}
		}
	}
	if len(names) == 0 {
		fatalf(t, "no CRD under %s/crds", shared)
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		out = fmt.Appendf(out, "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: %s\n", n)
	}
	return out
}

// nodeService is a Service of the management cluster and its ClusterIP.
type nodeService struct{ name, ns, ip string }

func (s nodeService) fqdn(domain string) string { return s.name + "." + s.ns + ".svc." + domain }

func (w *peersWorld) nodeDNSDomain(t *testing.T, domain string) {
	dom := cmp.Or(domain, nodeDomainDefault)
	objs := w.nodeRender(t, domain)

	// The Services the test knows: the one Kamaji creates for each
	// KamajiControlPlane, named as it and in its namespace (the Kamaji
	// provider names the TenantControlPlane as the KamajiControlPlane,
	// clastix/cluster-api-control-plane-provider-kamaji
	// controllers/kamajicontrolplane_controller_tcp.go:33-34; Kamaji the
	// Service as the TenantControlPlane, clastix/kamaji
	// internal/resources/k8s_service_resource.go:66-70), and the
	// monitoring Services the platform settings name.
	byName := map[string]nodeService{}
	known := func(name, ns string) {
		if _, ok := byName[name+"."+ns]; !ok {
			byName[name+"."+ns] = nodeService{name: name, ns: ns}
		}
	}
	for _, o := range objs {
		if o.GetKind() == "KamajiControlPlane" {
			known(o.GetName(), o.GetNamespace())
		}
	}
	for _, svc := range nodeMonitoring {
		known(svc, nodeMonitoringNS)
	}
	var services []nodeService
	for i, k := range slices.Sorted(maps.Keys(byName)) {
		s := byName[k]
		s.ip = fmt.Sprintf("%s.%d", peersNet, nodeFirstServiceIP+i)
		services = append(services, s)
	}
	svcByFQDN := map[string]nodeService{}
	for _, s := range services {
		svcByFQDN[s.fqdn(dom)] = s
	}

	// Every host name of every composed object, sorted into node names
	// and the rest.
	domains := []string{dom, nodeDomainDefault, "cozy.local"}
	nodeNames := map[string][]string{} // name: the fields it came from
	seenFields := map[string]bool{}
	foreign := map[string][]string{} // dialled names of no known Service: where
	var public []string
	for _, o := range objs {
		for _, h := range nodeHosts(o, domains) {
			switch {
			case !nodeClusterName(h.host, domains):
				public = append(public, h.host)
			case h.host == nodeKubeconfigKey:
			default:
				f, ok := nodeFields[h.field]
				switch {
				case !ok:
					errorf(t, "%s %s: cluster name %q in a field the test does not know: add it to nodeFields", h.object, h.field, h.host)
				case f.role == roleDial:
					seenFields[h.field] = true
					if _, ok := svcByFQDN[h.host]; !ok {
						// Resolved from the node below all the same, to say what it gets.
						foreign[h.host] = append(foreign[h.host], h.object+" "+h.field)
					} else if !slices.Contains(nodeNames[h.host], f.who) {
						nodeNames[h.host] = append(nodeNames[h.host], f.who)
					}
				case f.role == roleSearch && h.host != "svc."+dom && h.host != dom:
					errorf(t, "%s %s: search domain %q, want svc.%s or %s", h.object, h.field, h.host, dom, dom)
				case f.role == roleTenantDomain && h.host != nodeDomainDefault:
					errorf(t, "%s %s: %q, want the tenant cluster's domain %s", h.object, h.field, h.host, nodeDomainDefault)
				}
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(nodeFields)) {
		if nodeFields[f].role == roleDial && !seenFields[f] {
			errorf(t, "no rendered object holds %s (%s): the claims no longer cover it", f, nodeFields[f].who)
		}
	}
	slices.Sort(public)
	t.Logf("names outside the cluster domains (public DNS, not resolved here): %s", strings.Join(slices.Compact(public), ", "))
	if len(nodeNames) == 0 {
		fatalf(t, "no node name found")
	}

	// Cluster DNS for the domain: SOA, NS and the Services' A records.
	zone := fmt.Sprintf("$ORIGIN %[1]s.\n$TTL 5\n@ IN SOA ns.dns.%[1]s. hostmaster.%[1]s. 1 7200 1800 86400 5\n@ IN NS ns.dns.%[1]s.\nns.dns IN A %[2]s\n", dom, peersDNSIP)
	for _, s := range services {
		zone += fmt.Sprintf("%s.%s.svc IN A %s\n", s.name, s.ns, s.ip)
	}
	w.serveZones(t, map[string]string{dom: zone})
	probe := services[0].fqdn(dom)
	waitFor(t, 10*time.Second, "CoreDNS to answer for "+probe, func(ctx context.Context) (bool, string, error) {
		addrs, err := peersResolver().LookupHost(ctx, probe)
		return err == nil && slices.Equal(addrs, []string{services[0].ip}), fmt.Sprintf("%v %v", addrs, err), nil
	})

	// The node's resolv.conf is the nameserver alone.
	if b, err := os.ReadFile(filepath.Join("/etc/netns", peersNode, "resolv.conf")); err != nil || string(b) != "nameserver "+peersDNSIP+"\n" {
		fatalf(t, "%s resolv.conf: %q %v, want the nameserver alone", peersNode, b, err)
	}
	names := slices.Sorted(maps.Keys(nodeNames))
	var partial []string
	for _, n := range names {
		short := strings.TrimSuffix(n, "."+dom)
		partial = append(partial, short)
		if dom != nodeDomainDefault {
			partial = append(partial, short+"."+nodeDomainDefault)
		}
	}
	start := time.Now()
	others := slices.Sorted(maps.Keys(foreign))
	got := nodeLookup(t, peersNode, slices.Concat(names, partial, others))
	for _, n := range others {
		errorf(t, "%s: %q is not <svc>.<ns>.svc.%s of a known Service; from the node (no search path): Go %s, glibc %s",
			strings.Join(foreign[n], "; "), n, dom, got["go"][n], got["glibc"][n])
	}
	for _, n := range names {
		want := svcByFQDN[n].ip
		for _, r := range []string{"go", "glibc"} {
			if l := got[r][n]; !slices.Equal(l.Addrs, []string{want}) {
				errorf(t, "node, %s resolver: %s (%s) resolves to %v (%s), want %s", r, n, strings.Join(nodeNames[n], ", "), l.Addrs, l.Err, want)
			}
		}
	}
	for _, n := range partial {
		for _, r := range []string{"go", "glibc"} {
			if l := got[r][n]; !l.NotFound {
				errorf(t, "node, %s resolver: %s resolves (%v %s), want NXDOMAIN: with no search path a partial name must not resolve", r, n, l.Addrs, l.Err)
			}
		}
	}
	t.Logf("node %s (nameserver %s only), domain %s: %d names resolved, %d partial names NXDOMAIN, Go and glibc resolvers, %.2fs: %s; NXDOMAIN: %s",
		peersNode, peersDNSIP, dom, len(names), len(partial), time.Since(start).Seconds(), nodeSummary(names, nodeNames, svcByFQDN), strings.Join(partial, ", "))

	// The same partial names from a pod of the cluster's namespace: its
	// search path completes them (member 0's namespace, resolv.conf of a
	// pod in the KamajiControlPlane's namespace).
	pod := w.members[0].netns
	podNS := services[slices.IndexFunc(services, func(s nodeService) bool { return s.ns != nodeMonitoringNS })].ns
	conf := fmt.Sprintf("search %[1]s.svc.%[2]s svc.%[2]s %[2]s\nnameserver %[3]s\noptions ndots:5\n", podNS, dom, peersDNSIP)
	if err := writeFiles(filepath.Join("/etc/netns", pod), map[string][]byte{"resolv.conf": []byte(conf)}); err != nil {
		fatal(t, err)
	}
	var shortOnly []string
	for _, n := range names {
		shortOnly = append(shortOnly, strings.TrimSuffix(n, "."+dom))
	}
	podGot := nodeLookup(t, pod, shortOnly)
	for _, n := range names {
		short := strings.TrimSuffix(n, "."+dom)
		for _, r := range []string{"go", "glibc"} {
			if l := podGot[r][short]; !slices.Equal(l.Addrs, []string{svcByFQDN[n].ip}) {
				errorf(t, "pod, %s resolver: %s resolves to %v (%s), want %s through the search path", r, short, l.Addrs, l.Err, svcByFQDN[n].ip)
			}
		}
	}
	t.Logf("pod (search %s.svc.%s svc.%s %s, ndots:5): the partial names resolve", podNS, dom, dom, dom)
}

func nodeSummary(names []string, from map[string][]string, svc map[string]nodeService) string {
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s=%s (%s)", n, svc[n].ip, strings.Join(from[n], ", ")))
	}
	return strings.Join(out, "; ")
}

// nodeLookupResult is one name's lookup: its addresses, or whether the
// resolver said the name does not exist, or another error.
type nodeLookupResult struct {
	Addrs    []string `json:"addrs,omitempty"`
	NotFound bool     `json:"notFound,omitempty"`
	Err      string   `json:"err,omitempty"`
}

func (r nodeLookupResult) String() string {
	switch {
	case r.NotFound:
		return "NXDOMAIN"
	case r.Err != "":
		return r.Err
	}
	return strings.Join(r.Addrs, ",")
}

// nodeLookup resolves names inside netns (ip netns exec: its
// /etc/netns/<netns> files replace /etc's) with the Go resolver (this
// test binary re-executed with GODEBUG=netdns=go, nodeResolveMain) and
// with glibc's (getent ahosts; exit status 2: not found). Results by
// resolver ("go", "glibc") and name.
func nodeLookup(t *testing.T, netns string, names []string) map[string]map[string]nodeLookupResult {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		fatal(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", netns, self)
	cmd.Env = append(os.Environ(), nodeResolveEnv+"="+strings.Join(names, " "), "GODEBUG=netdns=go")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fatalf(t, "the Go resolver in %s: %v: %s", netns, err, stderr.Bytes())
	}
	goRes := map[string]nodeLookupResult{}
	if err := json.Unmarshal(out, &goRes); err != nil {
		fatalf(t, "the Go resolver in %s: %v: %s", netns, err, out)
	}
	res := map[string]map[string]nodeLookupResult{"go": goRes, "glibc": {}}
	for _, n := range names {
		var r nodeLookupResult
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", netns, "getent", "ahosts", n).Output()
		var exit *exec.ExitError
		switch {
		case err == nil:
			for l := range strings.Lines(string(out)) {
				if f := strings.Fields(l); len(f) > 0 && !slices.Contains(r.Addrs, f[0]) {
					r.Addrs = append(r.Addrs, f[0])
				}
			}
		case errors.As(err, &exit) && exit.ExitCode() == 2:
			r.NotFound = true
		default:
			r.Err = err.Error()
		}
		res["glibc"][n] = r
	}
	return res
}

// nodeResolveMain looks up each of the space-separated names with the
// process's resolver and prints their nodeLookupResults as JSON.
func nodeResolveMain(names string) int {
	res := map[string]nodeLookupResult{}
	for _, n := range strings.Fields(names) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		addrs, err := net.DefaultResolver.LookupHost(ctx, n)
		cancel()
		var r nodeLookupResult
		var dnsErr *net.DNSError
		switch {
		case err == nil:
			r.Addrs = addrs
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			r.NotFound = true
		default:
			r.Err = err.Error()
		}
		res[n] = r
	}
	b, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, _ = os.Stdout.Write(b)
	return 0
}
