package preview

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Hibernation is the cluster's sleep in a preview: its state after the
// change, what the change starts or ends now, and what the schedules'
// next transition does (docs/tenant-guide.md, Hibernation).
type Hibernation struct {
	// State is status.hibernation.state of the render; "" when the
	// cluster does not use hibernation.
	State string
	// Now are the sleep changes applying the XR makes (hibernationChanges).
	Now []string
	// Next is the schedules' next transition (zero: none) and AtNext the
	// changes it makes to the render's objects.
	Next   time.Time
	AtNext []string
}

// RenderedHibernation reads status.hibernation of the XR a render printed
// first: the state and the next transition (zero when absent).
func RenderedHibernation(stream []byte) (state string, next time.Time, _ error) {
	objs, err := ReadYAML(bytes.NewReader(stream))
	if err != nil {
		return "", time.Time{}, err
	}
	if len(objs) == 0 {
		return "", time.Time{}, errors.New("the render printed no XR")
	}
	state, _, _ = unstructured.NestedString(objs[0].Object, "status", "hibernation", "state")
	at, _, _ := unstructured.NestedString(objs[0].Object, "status", "hibernation", "nextTransition")
	if at != "" {
		if next, err = time.Parse(time.RFC3339, at); err != nil {
			return "", time.Time{}, fmt.Errorf("status.hibernation.nextTransition: %w", err)
		}
	}
	return state, next, nil
}

// Applied is observed once desired is applied: desired's objects, each
// with the status of its observed object.
func Applied(observed, desired Objects) Objects {
	next := Objects{}
	for k, u := range desired {
		c := u.DeepCopy()
		if o, ok := observed[k]; ok {
			if st, ok := o.Object["status"]; ok {
				c.Object["status"] = runtime.DeepCopyJSONValue(st)
			}
		}
		next[k] = c
	}
	return next
}

// HibernationChanges are the changes from before to after that a sleep
// or a wake makes, one line each, sorted: a MachineDeployment's, the
// KamajiControlPlane's or a Deployment's spec.replicas (one the function
// leaves to its owner keeps its value, except 0, which the MachineDeployment
// webhook raises to the minimum), and how many HelmReleases are suspended
// or resumed.
func HibernationChanges(before, after Objects) []string {
	var out []string
	var suspended, resumed int
	for _, k := range after.Keys() {
		b, ok := before[k]
		if !ok {
			continue
		}
		a := after[k]
		switch k.Kind {
		case kindMachineDeployment, kindControlPlane, "Deployment":
			switch from, to := replicas(b), replicas(a); {
			case from == to:
			case to == "unset" && from == "0":
				out = append(out, fmt.Sprintf("%s replicas 0 -> its minimum (released to cluster-autoscaler)", k))
			case to != "unset":
				out = append(out, fmt.Sprintf("%s replicas %s -> %s", k, from, to))
			}
		case kindHelmRelease:
			from, _, _ := unstructured.NestedBool(b.Object, "spec", "suspend")
			to, _, _ := unstructured.NestedBool(a.Object, "spec", "suspend")
			switch {
			case !from && to:
				suspended++
			case from && !to:
				resumed++
			}
		}
	}
	sort.Strings(out)
	if suspended > 0 {
		out = append(out, fmt.Sprintf("%d add-on releases suspended", suspended))
	}
	if resumed > 0 {
		out = append(out, fmt.Sprintf("%d add-on releases resumed", resumed))
	}
	return out
}

// replicas is u's spec.replicas, or "unset".
func replicas(u *unstructured.Unstructured) string {
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		return fmt.Sprint(n)
	}
	if n, ok, _ := unstructured.NestedFloat64(u.Object, "spec", "replicas"); ok {
		return fmt.Sprint(int64(n))
	}
	return "unset"
}

// String is the preview's hibernation lines; none when the cluster does
// not use hibernation.
func (h *Hibernation) String() string {
	if h == nil || h.State == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hibernation: %s\n", h.State)
	for _, c := range h.Now {
		fmt.Fprintf(&b, "hibernation: now: %s\n", c)
	}
	if h.Next.IsZero() {
		b.WriteString("hibernation: no scheduled transition\n")
		return b.String()
	}
	at := h.Next.UTC().Format(time.RFC3339)
	if len(h.AtNext) == 0 {
		fmt.Fprintf(&b, "hibernation: at %s: no change\n", at)
	}
	for _, c := range h.AtNext {
		fmt.Fprintf(&b, "hibernation: at %s: %s\n", at, c)
	}
	return b.String()
}
