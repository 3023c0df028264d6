package test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
)

const (
	composedPolicyFile = "deploy/composed-objects-policy.yaml"
	mdPolicyFile       = "deploy/machinedeployment-policy.yaml"
	// crossplaneUser is Crossplane's ServiceAccount as its Helm chart
	// installs it (crossplane-system/crossplane).
	crossplaneUser = "system:serviceaccount:crossplane-system:crossplane"
	minSizeKey     = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	maxSizeKey     = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

// admitted evaluates v on one request by username (an authenticated user
// with no other group) and reports whether it admits it, with the messages
// of its denials.
func admitted(t *testing.T, v validating.Validator, op admission.Operation, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, sub string, obj, old *unstructured.Unstructured, params runtime.Object, username string) (bool, string) {
	t.Helper()
	decisions := evaluate(t, v, admissionRequest{op: op, gvr: gvr, gvk: gvk, sub: sub, obj: obj, old: old, params: params,
		user: &user.DefaultInfo{Name: username, Groups: []string{"system:authenticated"}}})
	msg := ""
	ok := true
	for _, d := range decisions {
		if d.Action != validating.ActionAdmit {
			ok = false
			msg += d.Message + "; "
		}
	}
	return ok, msg
}

// TestComposedObjectsPolicy evaluates deploy/composed-objects-policy.yaml
// with kube-apiserver's own validator on every composed ConfigMap,
// ServiceAccount, Service, Deployment, RoleBinding and Ingress of the
// golden renders: an update that changes anything but annotations (data,
// spec, subjects, labels, the image of a Deployment) is admitted for
// Crossplane's ServiceAccount only; an annotation-only update is admitted
// for anyone; a create only for Crossplane.
func TestComposedObjectsPolicy(t *testing.T) {
	root := repoRoot(t)
	p, _, v := loadPolicy(t, filepath.Join(root, composedPolicyFile))
	sel := p.Spec.MatchConstraints.ObjectSelector
	if sel == nil || len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != "crossplane.io/composite" || sel.MatchExpressions[0].Operator != "Exists" {
		t.Errorf("%s: objectSelector %+v, want crossplane.io/composite Exists", composedPolicyFile, sel)
	}
	matched := map[schema.GroupResource]bool{}
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				matched[schema.GroupResource{Group: g, Resource: res}] = true
			}
		}
	}
	resources := map[string]schema.GroupResource{
		"ConfigMap": {Resource: "configmaps"}, "ServiceAccount": {Resource: "serviceaccounts"}, "Service": {Resource: "services"},
		"Deployment": {Group: "apps", Resource: "deployments"}, "RoleBinding": {Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
		"Ingress": {Group: "networking.k8s.io", Resource: "ingresses"},
	}
	for _, gr := range resources {
		if !matched[gr] {
			t.Errorf("%s does not match %s", composedPolicyFile, gr)
		}
	}
	// Each changes one field a tenant could turn against the management
	// side; the last changes annotations only.
	changes := map[string]func(u *unstructured.Unstructured){
		"data":   func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "data", "hostile") },
		"labels": func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"crossplane.io/composite": "other"}) },
		"image":  func(u *unstructured.Unstructured) { setFirstContainerImage(u, "registry.example/evil:latest") },
		"spec": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "ExternalName", "spec", "type")
		},
		"subjects": func(u *unstructured.Unstructured) { _ = unstructured.SetNestedSlice(u.Object, []any{}, "subjects") },
		"automount": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, true, "automountServiceAccountToken")
		},
		"annotations": func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "2"})
		},
	}
	users := []string{crossplaneUser, "mallory", "system:serviceaccount:tenant-demo:demo-kccm", "system:serviceaccount:crossplane-system:other"}
	seen := map[string]int{}
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		gr, ok := resources[o.obj.GetKind()]
		if !ok || o.obj.GetNamespace() == "" {
			continue
		}
		seen[o.obj.GetKind()]++
		gvk := o.obj.GroupVersionKind()
		gvr := gr.WithVersion(gvk.Version)
		for name, change := range changes {
			changed := o.obj.DeepCopy()
			change(changed)
			for _, u := range users {
				ok, msg := admitted(t, v, admission.Update, gvr, gvk, "", changed, o.obj, nil, u)
				want := u == crossplaneUser || name == "annotations"
				if fmt.Sprint(changed.Object) == fmt.Sprint(o.obj.Object) {
					want = true // the change does not apply to this kind
				}
				if ok != want {
					t.Errorf("%s: update changing %s by %s: admitted %t, want %t (%s)", o.file+" "+o.obj.GetKind()+" "+o.obj.GetName(), name, u, ok, want, msg)
				}
			}
		}
		for _, u := range users {
			if ok, _ := admitted(t, v, admission.Create, gvr, gvk, "", o.obj, nil, nil, u); ok != (u == crossplaneUser) {
				t.Errorf("%s %s: create by %s admitted %t", o.file, o.obj.GetName(), u, ok)
			}
		}
	}
	for k := range resources {
		if k != "Ingress" && k != "Service" && seen[k] == 0 {
			t.Errorf("no composed %s in the golden renders: nothing checked", k)
		}
	}
}

func setFirstContainerImage(u *unstructured.Unstructured, image string) {
	cs, found, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if !found || len(cs) == 0 {
		return
	}
	c := cs[0].(map[string]any)
	c["image"] = image
	_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
}

// TestMachineDeploymentPolicy evaluates deploy/machinedeployment-policy.yaml
// with kube-apiserver's own validator on every composed MachineDeployment of
// the golden renders, as its own parameter (the binding selects the
// composed MachineDeployments): for every replica count from 0 to max-size
// + 2, through the object and through the scale subresource, the
// cluster-autoscaler's ServiceAccount is admitted exactly inside [min-size,
// max-size] (by the annotations, arithmetic here), Crossplane always; a
// change of either annotation is refused but to Crossplane; a parameter of
// another name leaves the request alone.
func TestMachineDeploymentPolicy(t *testing.T) {
	root := repoRoot(t)
	p, b, v := loadPolicy(t, filepath.Join(root, mdPolicyFile))
	if p.Spec.ParamKind == nil || p.Spec.ParamKind.Kind != "MachineDeployment" || b.Spec.ParamRef == nil || b.Spec.ParamRef.Selector == nil ||
		b.Spec.ParamRef.ParameterNotFoundAction == nil || *b.Spec.ParamRef.ParameterNotFoundAction != admissionregistrationv1.AllowAction {
		t.Fatalf("%s: paramKind %+v, paramRef %+v: want MachineDeployments selected by label, Allow when none", mdPolicyFile, p.Spec.ParamKind, b.Spec.ParamRef)
	}
	autoscaler := "system:serviceaccount:tenant-demo:demo-cluster-autoscaler"
	gvk := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}
	gvr := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}
	scaleGVK := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	n := 0
	for _, o := range goldenObjects(t, filepath.Join(root, "test", "testdata"), packageCompositeKinds(t, root)) {
		if o.obj.GetKind() != "MachineDeployment" {
			continue
		}
		md := o.obj
		a := md.GetAnnotations()
		lo, err1 := strconv.ParseInt(a[minSizeKey], 10, 64)
		hi, err2 := strconv.ParseInt(a[maxSizeKey], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		n++
		old := md.DeepCopy()
		oldReplicas, found, _ := unstructured.NestedInt64(old.Object, "spec", "replicas")
		if !found {
			oldReplicas = lo
			_ = unstructured.SetNestedField(old.Object, lo, "spec", "replicas")
		}
		scale := func(r int64) *unstructured.Unstructured {
			s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
				"metadata": map[string]any{"name": md.GetName(), "namespace": md.GetNamespace()}, "spec": map[string]any{}}}
			if r != 0 {
				s.Object["spec"] = map[string]any{"replicas": r}
			}
			return s
		}
		for r := int64(0); r <= hi+2; r++ {
			want := (r >= lo && r <= hi) || r == oldReplicas
			obj := old.DeepCopy()
			_ = unstructured.SetNestedField(obj.Object, r, "spec", "replicas")
			for _, u := range []string{autoscaler, crossplaneUser} {
				w := want || u == crossplaneUser
				if ok, msg := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, old, u); ok != w {
					t.Errorf("%s %s: replicas %d by %s (bounds [%d, %d]): admitted %t, want %t (%s)", o.file, md.GetName(), r, u, lo, hi, ok, w, msg)
				}
				if ok, msg := admitted(t, v, admission.Update, gvr.GroupResource().WithVersion("v1beta2"), scaleGVK, "scale", scale(r), scale(oldReplicas), old, u); ok != w {
					t.Errorf("%s %s: scale to %d by %s (bounds [%d, %d]): admitted %t, want %t (%s)", o.file, md.GetName(), r, u, lo, hi, ok, w, msg)
				}
			}
			other := old.DeepCopy()
			other.SetName(md.GetName() + "-other")
			if ok, _ := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, other, autoscaler); !ok {
				t.Errorf("%s %s: replicas %d refused by the parameter of another MachineDeployment", o.file, md.GetName(), r)
			}
		}
		for _, key := range []string{minSizeKey, maxSizeKey} {
			obj := old.DeepCopy()
			ann := obj.GetAnnotations()
			ann[key] = "1000"
			obj.SetAnnotations(ann)
			for _, u := range []string{autoscaler, "mallory", crossplaneUser} {
				if ok, msg := admitted(t, v, admission.Update, gvr, gvk, "", obj, old, old, u); ok != (u == crossplaneUser) {
					t.Errorf("%s %s: %s changed by %s: admitted %t (%s)", o.file, md.GetName(), key, u, ok, msg)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no composed MachineDeployment with both autoscaler annotations in the golden renders")
	}
}

// TestCSIDataVolumePolicy evaluates deploy/csi-datavolume-policy.yaml: a
// DataVolume a tenantkube CSI controller (ServiceAccount
// <N>-kcsi-controller of the DataVolume's namespace) creates must name a
// StorageClass, the way kubevirt/csi-driver writes it (spec.storage); the
// driver admits a volume of no class (allowDefault) and would place it on
// the management cluster's default class. Nobody else is matched.
func TestCSIDataVolumePolicy(t *testing.T) {
	_, _, v := loadPolicy(t, filepath.Join(repoRoot(t), "deploy", "csi-datavolume-policy.yaml"))
	gvk := schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"}
	gvr := schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datavolumes"}
	dv := func(storage string) *unstructured.Unstructured {
		return obj(t, "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: pvc-1f2e, namespace: tenant-demo}\nspec: {source: {blank: {}}, "+storage+"}")
	}
	csi := "system:serviceaccount:tenant-demo:demo-kcsi-controller"
	for _, c := range []struct {
		name, storage, user string
		want                bool
	}{
		{"class named", "storage: {storageClassName: replicated, resources: {requests: {storage: 1Gi}}}", csi, true},
		{"no class", "storage: {resources: {requests: {storage: 1Gi}}}", csi, false},
		{"empty class", "storage: {storageClassName: '', resources: {requests: {storage: 1Gi}}}", csi, false},
		{"pvc with a class", "pvc: {storageClassName: replicated}", csi, true},
		{"pvc without", "pvc: {accessModes: [ReadWriteOnce]}", csi, false},
		{"another namespace's controller", "storage: {resources: {requests: {storage: 1Gi}}}", "system:serviceaccount:tenant-other:demo-kcsi-controller", true},
		{"KubeVirt's worker disks", "storage: {resources: {requests: {storage: 1Gi}}}", "system:serviceaccount:kubevirt:kubevirt-controller", true},
	} {
		ok, msg := admitted(t, v, admission.Create, gvr, gvk, "", dv(c.storage), nil, nil, c.user)
		if ok != c.want {
			t.Errorf("%s: admitted %t, want %t (%s)", c.name, ok, c.want, msg)
		}
		if !ok && !strings.Contains(msg, "DataVolume pvc-1f2e: the KubeVirt CSI controller must name a StorageClass") {
			t.Errorf("%s: denial %q does not name the DataVolume", c.name, msg)
		}
	}
}
