package preview

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
)

// Objects the preview reads beyond a node group's.
const (
	kindControlPlane = "KamajiControlPlane"
	kindHelmRelease  = "HelmRelease"
	// labelNodeGroup names the node group of its objects.
	labelNodeGroup = "tenantkube.io/node-group"
	// addonResourcePrefix starts the composed-resource name of an add-on's
	// HelmRelease; the rest is the add-on's.
	addonResourcePrefix = "addon-"
)

// Report is what applying a changed XR does to the cluster.
type Report struct {
	// ControlPlane is the KamajiControlPlane's spec.version before and
	// after ("" where there is none).
	ControlPlane Upgrade
	// NodeGroups in name order.
	NodeGroups []NodeGroup
	// Addons whose HelmRelease values change, in name order.
	Addons []Addon
	// Created, Updated and Deleted composed resources, by kind then name.
	Created, Updated, Deleted []Key
	// Hibernation is the cluster's sleep, nil when not previewed.
	Hibernation *Hibernation
	// Maintenance is what waits for the cluster's maintenance window (nil
	// for nothing): the first render's status.maintenance.
	Maintenance *v1alpha1.MaintenanceStatus
}

// Upgrade is a version change, From to To.
type Upgrade struct{ From, To string }

// NodeGroup is what happens to one node group's machines.
type NodeGroup struct {
	Name string
	// New: the group has no observed MachineDeployment. Removed: it has no
	// desired one.
	New, Removed bool
	// Roll: the change replaces the group's machines at once, for Causes.
	Roll *Roll
	// AfterControlPlane: the group's machines are replaced (again) once the
	// control plane runs the new version (the workers function holds a
	// group's version until then).
	AfterControlPlane *Roll
}

// Roll lists why machines are replaced: fields of the claim, platform
// settings, or a template path no field explains.
type Roll struct{ Causes []string }

// Addon names the top-level keys of an add-on's Helm values that change.
type Addon struct {
	Name string
	Keys []string
}

// Compare reports the change from the observed composed resources to the
// desired ones of the first render (first) and, when the control plane
// upgrades, of the render once it has (final; nil without one).
func Compare(observed, first, final Objects) (Report, error) {
	if final == nil {
		final = first
	}
	var r Report
	r.ControlPlane = Upgrade{From: controlPlaneVersion(observed), To: controlPlaneVersion(final)}

	obsMD, err := machineDeployments(observed)
	if err != nil {
		return r, err
	}
	firstMD, err := machineDeployments(first)
	if err != nil {
		return r, err
	}
	finalMD, err := machineDeployments(final)
	if err != nil {
		return r, err
	}
	groups := map[string]bool{}
	for g := range obsMD {
		groups[g] = true
	}
	for g := range finalMD {
		groups[g] = true
	}
	for _, g := range sortedSet(groups) {
		ng := NodeGroup{Name: g}
		o, f, n := obsMD[g], firstMD[g], finalMD[g]
		switch {
		case o == nil:
			ng.New = true
		case n == nil:
			ng.Removed = true
		default:
			if f != nil && Rolls(&o.Spec.Template, &f.Spec.Template) {
				ng.Roll = &Roll{Causes: rollCauses(observed, o, first, f)}
			}
			from, fromObjs := o, observed
			if f != nil {
				from, fromObjs = f, first
			}
			if Rolls(&from.Spec.Template, &n.Spec.Template) {
				ng.AfterControlPlane = &Roll{Causes: rollCauses(fromObjs, from, final, n)}
			}
		}
		r.NodeGroups = append(r.NodeGroups, ng)
	}

	for _, k := range final.Keys() {
		o, ok := observed[k]
		if !ok {
			r.Created = append(r.Created, k)
			continue
		}
		if k.Kind == kindHelmRelease {
			if keys := valueKeys(o, final[k]); len(keys) > 0 {
				r.Addons = append(r.Addons, Addon{Name: addonName(final[k]), Keys: keys})
				r.Updated = append(r.Updated, k)
				continue
			}
		}
		if updated(o, final[k]) {
			r.Updated = append(r.Updated, k)
		}
	}
	for _, k := range observed.Keys() {
		if _, ok := final[k]; !ok {
			r.Deleted = append(r.Deleted, k)
		}
	}
	sort.Slice(r.Addons, func(i, j int) bool { return r.Addons[i].Name < r.Addons[j].Name })
	return r, nil
}

// AfterControlPlaneUpgrade returns the observed state once the first
// render's desired objects are applied and the control plane runs their
// version: first's objects, each with the status of its observed object,
// and the KamajiControlPlane's status.version set to its spec.version. It
// returns false when the control plane's version does not change.
func AfterControlPlaneUpgrade(observed, first Objects) (Objects, bool) {
	from, to := controlPlaneVersion(observed), controlPlaneVersion(first)
	if from == "" || to == "" || from == to {
		return nil, false
	}
	next := Objects{}
	for k, u := range first {
		c := u.DeepCopy()
		if o, ok := observed[k]; ok {
			if st, ok := o.Object["status"]; ok {
				c.Object["status"] = runtime.DeepCopyJSONValue(st)
			}
		}
		if k.Kind == kindControlPlane {
			_ = unstructured.SetNestedField(c.Object, to, "status", "version")
		}
		next[k] = c
	}
	return next, true
}

// controlPlaneVersion is the spec.version of the KamajiControlPlane of
// objs, or "".
func controlPlaneVersion(objs Objects) string {
	for _, k := range objs.Keys() {
		if k.Kind == kindControlPlane {
			v, _, _ := unstructured.NestedString(objs[k].Object, "spec", "version")
			return v
		}
	}
	return ""
}

// machineDeployments returns the MachineDeployments of objs by node group.
func machineDeployments(objs Objects) (map[string]*clusterv1.MachineDeployment, error) {
	out := map[string]*clusterv1.MachineDeployment{}
	for _, k := range objs.Keys() {
		if k.Kind != kindMachineDeployment {
			continue
		}
		u := objs[k]
		g := u.GetLabels()[labelNodeGroup]
		if g == "" {
			continue
		}
		md, err := machineDeployment(u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[g] = md
	}
	return out, nil
}

// valueKeys returns the top-level keys of spec.values that differ between
// two HelmReleases (added, removed or changed).
func valueKeys(old, new *unstructured.Unstructured) []string {
	o, _, _ := unstructured.NestedMap(old.Object, "spec", "values")
	n, _, _ := unstructured.NestedMap(new.Object, "spec", "values")
	var keys []string
	for k, v := range n {
		if ov, ok := o[k]; !ok || !reflect.DeepEqual(ov, v) {
			keys = append(keys, k)
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// addonName is the add-on of a HelmRelease: its composed-resource name
// without addonResourcePrefix, else its name.
func addonName(u *unstructured.Unstructured) string {
	if n, ok := strings.CutPrefix(u.GetAnnotations()[AnnotationResourceName], addonResourcePrefix); ok && n != "" {
		return n
	}
	return u.GetName()
}

// updated reports whether applying desired changes the observed object:
// a field desired sets that observed lacks or holds otherwise, outside
// status and the metadata Crossplane and the API server own (only labels
// and annotations are compared). Fields only observed has are an API
// server's defaults or another manager's, and are not counted.
func updated(observed, desired *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		m := map[string]any{}
		for k, v := range u.Object {
			if k != "status" && k != "metadata" {
				m[k] = v
			}
		}
		m["metadata"] = map[string]any{"labels": toAny(u.GetLabels()), "annotations": toAny(u.GetAnnotations())}
		return m
	}
	for _, c := range diff(strip(observed), strip(desired)) {
		if !c.Removed {
			return true
		}
	}
	return false
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String is the report as stable plain text, one line per item: the
// control plane first, then each node group, the add-ons, and the created,
// updated and deleted objects.
func (r Report) String() string {
	var b strings.Builder
	cp := r.ControlPlane
	switch {
	case cp.From == "" && cp.To == "":
		b.WriteString("control plane: none\n")
	case cp.From == "":
		fmt.Fprintf(&b, "control plane: new (%s)\n", cp.To)
	case cp.To == "":
		b.WriteString("control plane: deleted\n")
	case cp.From != cp.To:
		fmt.Fprintf(&b, "control plane: upgrades %s -> %s\n", cp.From, cp.To)
	default:
		b.WriteString("control plane: no upgrade\n")
	}
	for _, g := range r.NodeGroups {
		b.WriteString(g.Name + ": " + g.summary() + "\n")
	}
	b.WriteString(r.Hibernation.String())
	if len(r.Addons) == 0 {
		b.WriteString("add-ons: no values change\n")
	}
	for _, a := range r.Addons {
		fmt.Fprintf(&b, "add-ons: %s values change (%s)\n", a.Name, strings.Join(a.Keys, ", "))
	}
	b.WriteString(maintenanceLines(r.Maintenance))
	for _, l := range []struct {
		name string
		keys []Key
	}{{"created", r.Created}, {"updated", r.Updated}, {"deleted", r.Deleted}} {
		if len(l.keys) == 0 {
			b.WriteString(l.name + ": none\n")
		}
		for _, k := range l.keys {
			b.WriteString(l.name + ": " + k.String() + "\n")
		}
	}
	return b.String()
}

func (g NodeGroup) summary() string {
	const after = " after the control plane upgrade"
	switch {
	case g.New:
		return "new node group"
	case g.Removed:
		return "removed, its machines are deleted"
	case g.Roll != nil && g.AfterControlPlane != nil:
		return "rolls (" + strings.Join(g.Roll.Causes, ", ") + "), then again (" + strings.Join(g.AfterControlPlane.Causes, ", ") + ")" + after
	case g.Roll != nil:
		return "rolls (" + strings.Join(g.Roll.Causes, ", ") + ")"
	case g.AfterControlPlane != nil:
		return "rolls (" + strings.Join(g.AfterControlPlane.Causes, ", ") + ")" + after
	}
	return "no roll"
}
