package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
	"github.com/tenantkube/tenantkube/internal/versions"
)

// annotationTenantInputs on a MachineDeployment is the hash of the
// tenant's inputs its group was composed from (tenantInputs): a change of
// the machine template or version under the same hash is the platform's.
const annotationTenantInputs = "tenantkube.io/tenant-inputs"

// Reasons of a node group's pending change (status.maintenance).
const (
	pendingPlatformRoll = "the platform changed the group's machine template or version"
	pendingOwnRoll      = "the node group's spec changed and spec.maintenance.confineOwnChanges is set"
)

// tenantInputs is the hash (16 hex digits of SHA-256) of what the tenant
// writes that shapes group g's machines: the group, spec.version,
// spec.storageClass and, for a Talos group, spec.talos.
func tenantInputs(spec *v1alpha1.KubernetesClusterSpec, g string, talos bool) string {
	in := struct {
		Group        v1alpha1.NodeGroup `json:"group"`
		Version      string             `json:"version"`
		StorageClass string             `json:"storageClass"`
		Talos        *v1alpha1.Talos    `json:"talos,omitempty"`
	}{Group: spec.NodeGroups[g], Version: spec.Version, StorageClass: spec.StorageClass}
	if talos {
		in.Talos = &spec.Talos
	}
	raw, _ := json.Marshal(in) // plain data: never fails
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// groupMaintenance is what decides whether group g's roll waits.
type groupMaintenance struct {
	decision maintenance.Decision
	// inputs is tenantInputs now; observed* are the observed
	// MachineDeployment's annotation, machine template and version.
	inputs, observedInputs       string
	observedRef, observedVersion string
	exists                       bool
	// refComposed: the observed machine template is an observed composed
	// resource of this group (this function composed it).
	refComposed bool
	r           *function.Request
}

// observeGroupMaintenance reads g's observed MachineDeployment and
// machine template.
func observeGroupMaintenance(r *function.Request, id function.Identity, g string, d maintenance.Decision, inputs string) groupMaintenance {
	m := groupMaintenance{decision: d, inputs: inputs, r: r}
	md, ok := observedMachineDeployment(r, g)
	if !ok {
		return m
	}
	m.exists, m.observedRef, m.observedVersion = true, md.InfrastructureRef, md.Version
	m.observedInputs = r.ObservedString(machineDeploymentResourceName(g), "metadata", "annotations", annotationTenantInputs)
	if hash, ok := strings.CutPrefix(md.InfrastructureRef, id.Prefixed(g)+"-"); ok && isTemplateName(id, g, md.InfrastructureRef) {
		m.refComposed = r.ObservedString(machineTemplateResourceName(g, hash), "metadata", "name") == md.InfrastructureRef
	}
	return m
}

// hold returns the machine template and version g's MachineDeployment
// refers to: ref and version, or, while the change to them waits for the
// window, the observed ones, with the pending change. A new minor is the
// tenant's own change (spec.version); so is any change when the recorded
// tenant inputs differ from inputs; otherwise (the same inputs, or none
// recorded) it is the platform's. Only what the platform produces is
// kept, and template and version only together (a template holds the
// container disk of its minor): a machine template this function composed
// for g and a version the table deploys or deployed; otherwise the group
// rolls.
func (m groupMaintenance) hold(g, ref, version string) (string, string, *v1alpha1.PendingChange) {
	if !m.exists || m.observedRef == ref && m.observedVersion == version {
		return ref, version, nil
	}
	own := m.observedInputs != "" && m.observedInputs != m.inputs || !sameMinor(minorOf(m.observedVersion), version)
	if m.decision.Allows(own) {
		return ref, version, nil
	}
	if m.observedRef != ref && !m.refComposed {
		return ref, version, nil
	}
	if _, ok := versions.Produced(m.observedVersion); m.observedVersion != version && !ok {
		return ref, version, nil
	}
	reason := pendingPlatformRoll
	if own {
		reason = pendingOwnRoll
	}
	return m.observedRef, m.observedVersion, &v1alpha1.PendingChange{
		What: "nodeGroup/" + g, From: m.observedRef + " " + m.observedVersion, To: ref + " " + version, Reason: reason,
	}
}

// recordedInputs is the annotationTenantInputs to write: the observed one
// while the tenant's own change waits (so it stays the tenant's), else
// inputs.
func (m groupMaintenance) recordedInputs(held *v1alpha1.PendingChange) string {
	if held != nil && held.Reason == pendingOwnRoll {
		return m.observedInputs
	}
	return m.inputs
}

// sameMinor reports whether patch version v is of minor.
func sameMinor(minor, v string) bool {
	m, err := minorString(v)
	return err == nil && m == minor
}

// minorOf is v1.N of a version v1.N.P, "" for any other text.
func minorOf(v string) string {
	m, _ := minorString(v)
	return m
}

// rollGate carries the cluster's maintenance decision through the node
// groups and collects the changes that wait.
type rollGate struct {
	decision maintenance.Decision
	held     []v1alpha1.PendingChange
	// group is the node group being composed; recorded its
	// annotationTenantInputs.
	group    groupMaintenance
	recorded string
}

// newRollGate is the cluster's decision at now, with the platform's part
// as the control-plane step decided it (window, rollNow, the spread and a
// roll finishing after its window: maintenance.Admission), when it did.
func newRollGate(r *function.Request, policy maintenance.Policy, now time.Time) (*rollGate, error) {
	d, err := maintenance.Current(r, policy, now)
	if err != nil {
		return nil, err
	}
	return &rollGate{decision: d}, nil
}

// with makes gm the group being composed.
func (g *rollGate) with(gm groupMaintenance) *rollGate {
	g.group, g.recorded = gm, gm.inputs
	return g
}

// hold sets gp's version and returns the machine template its
// MachineDeployment refers to (groupMaintenance.hold), and whether a
// change waits.
func (g *rollGate) hold(gp *nodeGroupPlan, ref string) (string, bool) {
	ref, version, pending := g.group.hold(gp.Name, ref, gp.Version)
	gp.Version = version
	g.recorded = g.group.recordedInputs(pending)
	if pending == nil {
		return ref, false
	}
	g.held = append(g.held, *pending)
	return ref, true
}

// bootstrapObserved reports whether the group's bootstrap template called
// name is observed: while a change waits it is kept as observed.
func (m groupMaintenance) bootstrapObserved(name string) bool {
	return m.r != nil && m.r.ObservedExists(name)
}
