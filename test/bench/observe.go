package bench

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// The fixed timestamp of every generated object (deterministic output).
const (
	created    = "2026-01-01T00:00:00Z"
	transition = "2026-01-01T00:05:00Z"
)

// World is the state of one tenant cluster as the management cluster holds
// it after the pipeline's objects were applied and their controllers made
// them ready: the observed state Crossplane sends every step, and the
// objects the functions' required resources select.
type World struct {
	Observed *fnv1.State
	Cluster  Cluster
}

// Observe turns a reconcile's desired state into what Crossplane observes
// on the next one, once every object exists and its controller reports it
// ready: each composed resource as applied (Crossplane's labels, annotation
// and owner reference, server-set metadata, managed fields) with a ready
// status of its kind; the XR (xr, the object as written) with Crossplane's
// spec fields, the references of every composed resource and the status the
// functions set, with their conditions. base is the management cluster's
// other objects (instance types); the MachineSets of each MachineDeployment
// and Kamaji's kubeconfig Secret are added to it.
func Observe(xr map[string]any, rec *Reconcile, base Cluster) (*World, error) {
	xrs, err := structpb.NewStruct(xr)
	if err != nil {
		return nil, err
	}
	xrName := str(xrs, "metadata", "name")
	claimName := str(xrs, "metadata", "labels", "crossplane.io/claim-name")
	claimNS := str(xrs, "metadata", "labels", "crossplane.io/claim-namespace")
	xrUID := uid("xr/" + xrName)

	names := make([]string, 0, len(rec.Desired.GetResources()))
	for n := range rec.Desired.GetResources() {
		names = append(names, n)
	}
	sort.Strings(names)

	obs := &fnv1.State{Resources: map[string]*fnv1.Resource{}}
	cluster := append(Cluster{}, base...)
	var refs []any
	for i, name := range names {
		o := proto.Clone(rec.Desired.GetResources()[name].GetResource()).(*structpb.Struct)
		md := child(o, "metadata")
		ns := md.Fields["namespace"].GetStringValue()
		kind, apiVersion := o.Fields["kind"].GetStringValue(), o.Fields["apiVersion"].GetStringValue()
		applied := proto.Clone(o).(*structpb.Struct)

		labels := child(md, "labels")
		labels.Fields["crossplane.io/composite"] = structpb.NewStringValue(xrName)
		labels.Fields["crossplane.io/claim-name"] = structpb.NewStringValue(claimName)
		labels.Fields["crossplane.io/claim-namespace"] = structpb.NewStringValue(claimNS)
		child(md, "annotations").Fields["crossplane.io/composition-resource-name"] = structpb.NewStringValue(name)
		objUID := uid(kind + "/" + ns + "/" + md.Fields["name"].GetStringValue())
		setServerMetadata(md, objUID, 1000+i)
		md.Fields["ownerReferences"] = mustValue([]any{map[string]any{
			"apiVersion": "tenantkube.io/v1alpha1", "kind": "XKubernetesCluster", "name": xrName,
			"uid": xrUID, "controller": true, "blockOwnerDeletion": true,
		}})

		status := statusOf(o)
		entries := []any{managedEntry("apiextensions.crossplane.io/composed/"+hash8(xrName), "Apply", apiVersion, "", applied)}
		if status != nil {
			o.Fields["status"] = structpb.NewStructValue(status)
			entries = append(entries, managedEntry(controllerOf(apiVersion), "Update", apiVersion, "status",
				&structpb.Struct{Fields: map[string]*structpb.Value{"status": structpb.NewStructValue(status)}}))
		}
		md.Fields["managedFields"] = mustValue(entries)

		obs.Resources[name] = &fnv1.Resource{Resource: o}
		ref := map[string]any{"apiVersion": apiVersion, "kind": kind, "name": md.Fields["name"].GetStringValue()}
		if ns != "" {
			ref["namespace"] = ns
		}
		refs = append(refs, ref)

		if kind == "MachineDeployment" {
			cluster = append(cluster, machineSetOf(o))
		}
		if kind == "KamajiControlPlane" {
			cluster = append(cluster, kubeconfigSecret(md.Fields["name"].GetStringValue(), ns))
		}
	}

	// The XR as the API server holds it.
	xo := proto.Clone(xrs).(*structpb.Struct)
	xmd := child(xo, "metadata")
	setServerMetadata(xmd, xrUID, 900)
	xmd.Fields["finalizers"] = mustValue([]any{"composite.apiextensions.crossplane.io"})
	spec := child(xo, "spec")
	spec.Fields["compositionRef"] = mustValue(map[string]any{"name": "xkubernetesclusters.tenantkube.io"})
	spec.Fields["compositionRevisionRef"] = mustValue(map[string]any{"name": "xkubernetesclusters.tenantkube.io-" + hash8("rev")[:7]})
	spec.Fields["compositionUpdatePolicy"] = structpb.NewStringValue("Automatic")
	spec.Fields["claimRef"] = mustValue(map[string]any{
		"apiVersion": "tenantkube.io/v1alpha1", "kind": "KubernetesCluster", "name": claimName, "namespace": claimNS,
	})
	spec.Fields["writeConnectionSecretToRef"] = mustValue(map[string]any{"name": xrUID, "namespace": "crossplane-system"})
	spec.Fields["resourceRefs"] = mustValue(refs)

	status := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if ds := rec.Desired.GetComposite().GetResource().GetFields()["status"].GetStructValue(); ds != nil {
		status = proto.Clone(ds).(*structpb.Struct)
	}
	conds := []any{
		condition("Synced", "True", "ReconcileSuccess", ""),
		condition("Ready", "True", "Available", ""),
	}
	for _, step := range Steps {
		for _, c := range rec.Responses[step].GetConditions() {
			st := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")
			conds = append(conds, condition(c.GetType(), st[:1]+strings.ToLower(st[1:]), c.GetReason(), c.GetMessage()))
		}
	}
	status.Fields["conditions"] = mustValue(conds)
	status.Fields["connectionDetails"] = mustValue(map[string]any{"lastPublishedTime": transition})
	xo.Fields["status"] = structpb.NewStructValue(status)
	xmd.Fields["managedFields"] = mustValue([]any{
		managedEntry("kubectl-client-side-apply", "Update", "tenantkube.io/v1alpha1", "",
			&structpb.Struct{Fields: map[string]*structpb.Value{"spec": mustValue(xr["spec"])}}),
		managedEntry("apiextensions.crossplane.io/composite", "Apply", "tenantkube.io/v1alpha1", "status",
			&structpb.Struct{Fields: map[string]*structpb.Value{"status": structpb.NewStructValue(status)}}),
	})

	var conn map[string][]byte
	if c := rec.Desired.GetComposite().GetConnectionDetails(); len(c) > 0 {
		conn = c
	}
	obs.Composite = &fnv1.Resource{Resource: xo, ConnectionDetails: conn}
	return &World{Observed: obs, Cluster: cluster}, nil
}

// statusOf is a ready status for o's kind, as its controller reports it;
// nil for kinds without a status (templates, RBAC, ConfigMaps).
func statusOf(o *structpb.Struct) *structpb.Struct {
	kind, apiVersion := o.Fields["kind"].GetStringValue(), o.Fields["apiVersion"].GetStringValue()
	group := strings.Split(apiVersion, "/")[0]
	spec := o.Fields["spec"].GetStructValue()
	var st map[string]any
	switch {
	case kind == "Cluster" && group == "cluster.x-k8s.io":
		st = map[string]any{
			"phase":              "Provisioned",
			"observedGeneration": 1,
			"initialization":     map[string]any{"infrastructureProvisioned": true, "controlPlaneInitialized": true},
			"controlPlane":       map[string]any{"desiredReplicas": 2, "readyReplicas": 2, "availableReplicas": 2, "replicas": 2, "upToDateReplicas": 2},
			"conditions": []any{
				condition("Available", "True", "Available", ""), condition("InfrastructureReady", "True", "Ready", ""),
				condition("ControlPlaneAvailable", "True", "Available", ""), condition("ControlPlaneInitialized", "True", "Initialized", ""),
				condition("WorkersAvailable", "True", "Available", ""), condition("RemoteConnectionProbe", "True", "ProbeSucceeded", ""),
				condition("Deleting", "False", "NotDeleting", ""), condition("Paused", "False", "NotPaused", ""),
			},
		}
	case kind == "KamajiControlPlane":
		r := spec.GetFields()["replicas"].GetNumberValue()
		st = map[string]any{
			"ready": true, "initialized": true, "externalManagedControlPlane": true,
			"version":  spec.GetFields()["version"].GetStringValue(),
			"replicas": r, "readyReplicas": r, "updatedReplicas": r, "unavailableReplicas": 0,
			"selector": "kamaji.clastix.io/name=" + str(o, "metadata", "name"),
			"conditions": []any{
				condition("Ready", "True", "Ready", ""), condition("KamajiControlPlaneIsReady", "True", "Ready", ""),
				condition("TenantControlPlaneCreated", "True", "Created", ""), condition("TenantControlPlaneAddressReady", "True", "Ready", ""),
			},
		}
	case kind == "KubevirtCluster":
		st = map[string]any{"ready": true, "conditions": []any{condition("Ready", "True", "Ready", "")},
			"failureDomains": []any{map[string]any{"name": "default", "controlPlane": true}}}
	case kind == "DataStore":
		st = map[string]any{"ready": true, "usedBy": []any{str(o, "metadata", "name")}}
	case kind == "MachineDeployment":
		r := float64(max(1, minSize(o)))
		st = map[string]any{
			"observedGeneration": 1, "phase": "Running",
			"replicas": r, "readyReplicas": r, "availableReplicas": r, "upToDateReplicas": r,
			"selector": "cluster.x-k8s.io/cluster-name=" + str(o, "spec", "clusterName") + ",cluster.x-k8s.io/deployment-name=" + str(o, "metadata", "name"),
			"conditions": []any{
				condition("Available", "True", "Available", ""), condition("MachinesReady", "True", "Ready", ""),
				condition("MachinesUpToDate", "True", "UpToDate", ""), condition("RollingOut", "False", "NotRollingOut", ""),
				condition("ScalingUp", "False", "NotScalingUp", ""), condition("ScalingDown", "False", "NotScalingDown", ""),
				condition("Remediating", "False", "NotRemediating", ""), condition("Deleting", "False", "NotDeleting", ""),
				condition("Paused", "False", "NotPaused", ""),
			},
		}
	case kind == "MachineHealthCheck":
		st = map[string]any{"expectedMachines": 2, "currentHealthy": 2, "remediationsAllowed": 2, "observedGeneration": 1,
			"targets":    []any{str(o, "metadata", "name") + "-a1b2c", str(o, "metadata", "name") + "-d3e4f"},
			"conditions": []any{condition("RemediationAllowed", "True", "RemediationAllowed", "")}}
	case kind == "Deployment":
		st = map[string]any{"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1,
			"conditions": []any{
				condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
				condition("Progressing", "True", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed."),
			}}
	case kind == "HelmRelease":
		name := str(o, "metadata", "name")
		st = map[string]any{
			"observedGeneration": 1, "lastAttemptedGeneration": 1, "lastAttemptedRevision": "1.0.0",
			"lastAttemptedConfigDigest": "sha256:" + hash64(name+"/config"), "lastAttemptedReleaseAction": "install",
			"storageNamespace": str(o, "spec", "storageNamespace"), "helmChart": str(o, "metadata", "namespace") + "/" + str(o, "metadata", "namespace") + "-" + name,
			"history": []any{map[string]any{
				"name": str(o, "spec", "releaseName"), "namespace": str(o, "spec", "targetNamespace"), "version": 1, "status": "deployed",
				"chartName": name, "chartVersion": "1.0.0", "appVersion": "1.0.0", "configDigest": "sha256:" + hash64(name+"/config"),
				"digest": "sha256:" + hash64(name+"/release"), "firstDeployed": transition, "lastDeployed": transition,
			}},
			"conditions": []any{
				condition("Ready", "True", "InstallSucceeded", "Helm install succeeded for release "+name+".v1 with chart "+name+"@1.0.0"),
				condition("Released", "True", "InstallSucceeded", "Helm install succeeded for release "+name+".v1 with chart "+name+"@1.0.0"),
			},
		}
	case group == "source.toolkit.fluxcd.io":
		name := str(o, "metadata", "name")
		st = map[string]any{"observedGeneration": 1, "url": str(o, "spec", "url"),
			"artifact": map[string]any{"digest": "sha256:" + hash64(name), "lastUpdateTime": transition,
				"path": strings.ToLower(kind) + "/" + name + "/index.yaml", "revision": "sha256:" + hash64(name+"/rev"), "size": 123456,
				"url": "http://source-controller.flux-system.svc.cluster.local./" + strings.ToLower(kind) + "/" + name + "/index.yaml"},
			"conditions": []any{condition("Ready", "True", "Succeeded", "stored artifact: revision 'sha256:"+hash64(name+"/rev")+"'")}}
	case kind == "Certificate":
		st = map[string]any{"notBefore": created, "notAfter": "2027-01-01T00:00:00Z", "renewalTime": "2026-12-01T00:00:00Z", "revision": 1,
			"conditions": []any{condition("Ready", "True", "Ready", "Certificate is up to date and has not expired")}}
	case kind == "Issuer" || kind == "ClusterIssuer":
		st = map[string]any{"conditions": []any{condition("Ready", "True", "KeyPairVerified", "Signing CA verified")}}
	case kind == "EtcdCluster":
		st = map[string]any{"conditions": []any{
			condition("Initialized", "True", "InitializationComplete", "Cluster initialized"),
			condition("Ready", "True", "AllPodsReady", "Cluster is ready"),
		}}
	case kind == "Service":
		st = map[string]any{"loadBalancer": map[string]any{}}
	case kind == "Ingress":
		st = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.10"}}}}
	default:
		return nil
	}
	s, err := structpb.NewStruct(st)
	if err != nil {
		panic(err)
	}
	return s
}

// machineSetOf is the current MachineSet CAPI keeps for an observed
// MachineDeployment: it refers to the deployment's current machine template.
func machineSetOf(md *structpb.Struct) *structpb.Struct {
	name := str(md, "metadata", "name") + "-" + hash8(str(md, "spec", "template", "spec", "infrastructureRef", "name"))[:5]
	ns := str(md, "metadata", "namespace")
	cluster := str(md, "spec", "clusterName")
	r := float64(max(1, minSize(md)))
	tmpl := md.Fields["spec"].GetStructValue().GetFields()["template"]
	o := map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
		"metadata": map[string]any{
			"name": name, "namespace": ns, "uid": uid("MachineSet/" + ns + "/" + name), "resourceVersion": "5000",
			"generation": 1, "creationTimestamp": created,
			"labels": map[string]any{
				"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": str(md, "metadata", "name"),
				"machine-template-hash": hash8(name)[:8],
			},
			"ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
				"name": str(md, "metadata", "name"), "uid": str(md, "metadata", "uid"), "controller": true, "blockOwnerDeletion": true}},
		},
		"spec": map[string]any{
			"clusterName": cluster, "replicas": r,
			"selector": map[string]any{"matchLabels": map[string]any{
				"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": str(md, "metadata", "name"),
				"machine-template-hash": hash8(name)[:8]}},
			"template": tmpl.AsInterface(),
		},
		"status": map[string]any{"replicas": r, "readyReplicas": r, "availableReplicas": r, "upToDateReplicas": r,
			"observedGeneration": 1, "selector": "cluster.x-k8s.io/cluster-name=" + cluster,
			"conditions": []any{condition("MachinesReady", "True", "Ready", ""), condition("MachinesUpToDate", "True", "UpToDate", "")}},
	}
	s, err := structpb.NewStruct(o)
	if err != nil {
		panic(err)
	}
	return s
}

// kubeconfigSecret is Kamaji's admin kubeconfig Secret of a tenant control
// plane: four kubeconfigs with embedded certificates, as large as real ones.
func kubeconfigSecret(tcp, ns string) *structpb.Struct {
	data := map[string]any{}
	for _, k := range []string{"admin.conf", "admin.svc", "super-admin.conf", "super-admin.svc"} {
		data[k] = base64.StdEncoding.EncodeToString([]byte(fakeKubeconfig(tcp + "/" + k)))
	}
	o := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": tcp + "-admin-kubeconfig", "namespace": ns, "uid": uid("Secret/" + ns + "/" + tcp),
			"resourceVersion": "4000", "creationTimestamp": created,
			"labels": map[string]any{"kamaji.clastix.io/name": tcp, "kamaji.clastix.io/component": "admin-kubeconfig"}},
		"data": data,
	}
	s, err := structpb.NewStruct(o)
	if err != nil {
		panic(err)
	}
	return s
}

// fakeKubeconfig is a kubeconfig of realistic size: a CA, a client
// certificate and a client key, base64 as kubectl writes them.
func fakeKubeconfig(seed string) string {
	blob := func(n int, s string) string {
		var b []byte
		for i := 0; len(b) < n; i++ {
			h := sha256.Sum256([]byte(s + strconv.Itoa(i)))
			b = append(b, h[:]...)
		}
		return base64.StdEncoding.EncodeToString(b[:n])
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: %s
    server: https://demo.tenant-demo.svc:6443
  name: demo
contexts:
- context:
    cluster: demo
    user: admin
  name: admin@demo
current-context: admin@demo
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
`, blob(1100, seed+"/ca"), blob(1150, seed+"/crt"), blob(1190, seed+"/key"))
}

// ObserveCluster is the management cluster's objects before any tenant
// object exists: the instance types of examples/instancetypes.yaml, each
// with server-set metadata.
func ObserveCluster(objs []map[string]any) (Cluster, error) {
	var out Cluster
	for i, o := range objs {
		s, err := structpb.NewStruct(o)
		if err != nil {
			return nil, err
		}
		md := child(s, "metadata")
		setServerMetadata(md, uid(s.Fields["kind"].GetStringValue()+"/"+md.Fields["name"].GetStringValue()), 100+i)
		out = append(out, s)
	}
	return out, nil
}

func setServerMetadata(md *structpb.Struct, id string, rv int) {
	md.Fields["uid"] = structpb.NewStringValue(id)
	md.Fields["resourceVersion"] = structpb.NewStringValue(strconv.Itoa(rv))
	md.Fields["generation"] = structpb.NewNumberValue(1)
	md.Fields["creationTimestamp"] = structpb.NewStringValue(created)
}

// managedEntry is a managedFields entry for the fields of o (server-side
// apply's fieldsV1 form, approximately: list items keyed by name or type).
func managedEntry(manager, operation, apiVersion, subresource string, o *structpb.Struct) any {
	fields := map[string]any{}
	for k, v := range o.GetFields() {
		if k == "apiVersion" || k == "kind" {
			continue
		}
		fields["f:"+k] = fieldsV1(v)
	}
	e := map[string]any{"manager": manager, "operation": operation, "apiVersion": apiVersion,
		"time": transition, "fieldsType": "FieldsV1", "fieldsV1": fields}
	if subresource != "" {
		e["subresource"] = subresource
	}
	return e
}

func fieldsV1(v *structpb.Value) any {
	switch x := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		out := map[string]any{}
		for k, c := range x.StructValue.GetFields() {
			out["f:"+k] = fieldsV1(c)
		}
		return out
	case *structpb.Value_ListValue:
		out := map[string]any{}
		for i, item := range x.ListValue.GetValues() {
			if st := item.GetStructValue(); st != nil {
				key := "i:" + strconv.Itoa(i)
				for _, k := range []string{"name", "type", "key", "port"} {
					if kv, ok := st.GetFields()[k]; ok {
						raw, _ := json.Marshal(map[string]any{k: kv.AsInterface()})
						key = "k:" + string(raw)
						break
					}
				}
				m := fieldsV1(item).(map[string]any)
				m["."] = map[string]any{}
				out[key] = m
				continue
			}
			raw, _ := json.Marshal(item.AsInterface())
			out["v:"+string(raw)] = map[string]any{}
		}
		return out
	default:
		return map[string]any{}
	}
}

func controllerOf(apiVersion string) string {
	switch g := strings.Split(apiVersion, "/")[0]; {
	case strings.HasSuffix(g, "cluster.x-k8s.io"):
		return "manager"
	case strings.HasSuffix(g, "fluxcd.io"):
		return strings.Split(g, ".")[0] + "-controller"
	case g == "cert-manager.io":
		return "cert-manager-certificates-issuing"
	case g == "apps" || g == "v1":
		return "kube-controller-manager"
	default:
		return g + "-controller"
	}
}

func condition(typ, status, reason, message string) map[string]any {
	c := map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": transition, "observedGeneration": 1}
	if message != "" {
		c["message"] = message
	}
	return c
}

// minSize is a MachineDeployment's autoscaler min-size annotation.
func minSize(md *structpb.Struct) int {
	n, _ := strconv.Atoi(str(md, "metadata", "annotations", "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"))
	return n
}

// str is the string at path in s ("" when absent).
func str(s *structpb.Struct, path ...string) string {
	for i, p := range path {
		v := s.GetFields()[p]
		if i == len(path)-1 {
			return v.GetStringValue()
		}
		s = v.GetStructValue()
	}
	return ""
}

// child is s's struct field k, created when absent.
func child(s *structpb.Struct, k string) *structpb.Struct {
	if c := s.Fields[k].GetStructValue(); c != nil {
		if c.Fields == nil {
			c.Fields = map[string]*structpb.Value{}
		}
		return c
	}
	c := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	s.Fields[k] = structpb.NewStructValue(c)
	return c
}

func mustValue(v any) *structpb.Value {
	out, err := structpb.NewValue(normalize(v))
	if err != nil {
		panic(err)
	}
	return out
}

// normalize turns ints into float64 for structpb.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = normalize(c)
		}
		return x
	case []any:
		for i, c := range x {
			x[i] = normalize(c)
		}
		return x
	case int:
		return float64(x)
	default:
		return v
	}
}

func uid(seed string) string {
	h := hash64(seed)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func hash64(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func hash8(s string) string { return hash64(s)[:8] }
