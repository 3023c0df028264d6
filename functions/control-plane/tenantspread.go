package main

import (
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	settingsv1alpha1 "github.com/tenantkube/tenantkube/apis/settings/v1alpha1"
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/maintenance"
)

// The spread of namespaced clusters (docs/architecture.md, The spread of
// namespaced clusters). A TenantCluster N asks for a slot by labelling
// its KamajiControlPlane labelRollRequest "true" (untrusted: it decides
// only whether N asks); its Tenant decides with maintenance.Admit and
// keeps N's record (labelRoll, annotationRollSince, annotationRollReason)
// on the CSI controller's ClusterRoleBinding of N, which it composes and
// no tenant can write; N rolls the platform's changes only while that
// binding says Rolling.
//
// The request reaches the TenantControlPlane's labels
// (cluster-api-control-plane-provider-kamaji v0.20.0
// controllers/kamajicontrolplane_controller_tcp.go:59), never its pods'
// (kamaji e51909fa internal/builders/controlplane/deployment.go:83,1050):
// asking rolls nothing.
const (
	labelRollRequest     = "tenantkube.io/roll-request"
	annotationRollReason = "tenantkube.io/roll-reason"
	// requiredRollGrant: the ClusterRoleBinding of a TenantCluster's
	// record, by name.
	requiredRollGrant = "roll-grant"
)

// tenantRolls decides the record of each TenantCluster of the Tenant ns
// (decideTenantRoll) and labels its binding in p, which holds the
// clusters' bindings. The clusters of ns hold at most one place in the
// spread (a tenant sets the request at will): while one of them rolls
// or waits with a record, the others wait without one; rollNow rolls
// one at once regardless. So one run asks maintenance.Admit at most once,
// over every record but those of ns's TenantClusters (its claims' count).
func tenantRolls(p *function.Plan, r *function.Request, ns string, clusters []servedCluster, m *settingsv1alpha1.Maintenance, now time.Time) {
	deadline, _ := time.ParseDuration(string(m.RollDeadline)) // validated with the settings
	asked, taken := false, false
	var waiting rollRecord // the namespace's Waiting record, if any
	holder := placeHolder(r, clusters)
	for _, c := range clusters {
		self := ns + "/" + c.Name
		admit := func() (bool, string) {
			requireRollRecords(p)
			records, arrived := readRollRecords(r)
			if !arrived {
				return false, tkv1alpha1.ReasonWaitingForRollSlot
			}
			return maintenance.Admit(self, othersThan(ns, clusters, records), int(*m.MaxConcurrentRolls), now, deadline)
		}
		name := nameTenantCSIBindingPrefix + c.Name
		held := taken || (holder != "" && holder != c.Name)
		rec, reason := decideTenantRoll(observedRollRecordOf(r, name), c.Request, m.RollsNow(ns, c.Name), held, admit, now)
		asked = asked || c.Request
		taken = taken || rec.State != ""
		if rec.State == rollWaiting {
			waiting = rec
		}
		labelRollRecord(p, name, rec, reason)
	}
	if asked {
		p.RunAgainWithin(rollRecheck)
	}
	if waiting.State != "" {
		p.RunAgainWithin(recheckAfter(waiting, now))
	}
}

// placeHolder is the cluster that holds the namespace's place as the
// observed records say: one still asking whose roll is in progress, else
// the first by name still asking that waits; "" for none.
func placeHolder(r *function.Request, clusters []servedCluster) string {
	holder := ""
	for _, c := range clusters {
		if !c.Request {
			continue
		}
		switch rec := observedRollRecordOf(r, nameTenantCSIBindingPrefix+c.Name); {
		case rec.rolling():
			return c.Name
		case rec.State == rollWaiting && holder == "":
			holder = c.Name
		}
	}
	return holder
}

// decideTenantRoll is a TenantCluster's record: none without its request;
// its own roll in progress goes on; rollNow starts at once; none while
// another cluster of its namespace holds its place (held); else admit
// decides (Rolling from now, or Waiting with admit's reason).
func decideTenantRoll(own rollRecord, request, rollNow, held bool, admit func() (bool, string), now time.Time) (rollRecord, string) {
	switch {
	case !request:
		return rollRecord{}, ""
	case own.rolling():
		return own, ""
	case rollNow:
		return rollRecord{State: rollRolling, Since: now}, ""
	case held:
		return rollRecord{}, ""
	}
	return admitSettled(own, now, admit)
}

// rolling: a roll in progress, since an instant that parsed.
func (r rollRecord) rolling() bool { return r.State == rollRolling && !r.Since.IsZero() }

// othersThan is records without those of clusters.
func othersThan(ns string, clusters []servedCluster, records []maintenance.Roll) []maintenance.Roll {
	own := map[string]bool{}
	for _, c := range clusters {
		own[ns+"/"+c.Name] = true
	}
	var out []maintenance.Roll
	for _, r := range records {
		if !own[r.Cluster] {
			out = append(out, r)
		}
	}
	return out
}

// labelRollRecord writes rec (and a waiting record's reason) on the
// composed ClusterRoleBinding name.
func labelRollRecord(p *function.Plan, name string, rec rollRecord, reason string) {
	if rec.State == "" {
		return
	}
	for _, c := range p.Composed {
		b, ok := c.Object.(*rbacv1.ClusterRoleBinding)
		if c.Name != name || !ok {
			continue
		}
		if b.Annotations == nil {
			b.Annotations = map[string]string{}
		}
		b.Labels[labelRoll] = rec.State
		for k, v := range rec.annotations() {
			b.Annotations[k] = v
		}
		if rec.State == rollWaiting {
			b.Annotations[annotationRollReason] = reason
		}
	}
}

// observedRollRecordOf is the record on the observed composed resource
// name (recordFrom).
func observedRollRecordOf(r *function.Request, name string) rollRecord {
	annotation := func(key string) string { return r.ObservedString(name, "metadata", "annotations", key) }
	return recordFrom(r.ObservedString(name, "metadata", "labels", labelRoll), annotation(annotationRollSince), annotation(annotationWaitingSince))
}

// recordFrom is the record of an object labelled state: a Rolling one
// since rollSince, a Waiting one since waitingSince (RFC 3339); an
// instant that does not parse leaves Since zero, so a Rolling record
// without one is no roll in progress (rolling).
func recordFrom(state, rollSince, waitingSince string) rollRecord {
	raw := rollSince
	if state == rollWaiting {
		raw = waitingSince
	}
	since, err := time.Parse(time.RFC3339, raw)
	if err != nil || (state != rollRolling && state != rollWaiting) {
		return rollRecord{State: state}
	}
	return rollRecord{State: state, Since: since}
}

// namespacedRoll: a TenantCluster asks its Tenant for a slot while its
// platform changes wait in an open window, or while it holds one and its
// roll has not finished (s.rollRequest). The platform's changes apply
// while its Tenant's record says Rolling, also after the window closes,
// or with rollNow; in an open window they otherwise wait
// (WaitingForRollSlot, or the record's RollsStopped), also those no
// earlier run has seen yet (platformChangesWaiting).
func (s *scope) namespacedRoll(waiting bool, policy maintenance.Policy) {
	asked := s.r.ObservedString(nameKamajiControlPlane, "metadata", "labels", labelRollRequest) == "true"
	grant, reason := rollRecord{}, tkv1alpha1.ReasonWaitingForRollSlot
	if asked || (waiting && s.maint.Platform) {
		grant, reason = s.rollGrant()
	}
	holds := grant.State == rollRolling
	s.rollRequest = (waiting && s.maint.Platform) || (holds && (waiting || !s.rollFinished() || s.justStarted(grant)))
	switch {
	case holds:
		s.maint.Platform, s.maint.Reason = true, ""
	case s.maint.Platform && !policy.RollNow && (waiting || policy.ConfinePlatform):
		s.maint.Platform, s.maint.Reason = false, reason
	}
}

// rollGrant is the TenantCluster's record as its Tenant keeps it, and the
// reason a record that is not Rolling gives (WaitingForRollSlot unless it
// says RollsStopped). The binding counts only labelled for this cluster.
func (s *scope) rollGrant() (rollRecord, string) {
	s.requireRollGrant = true
	reason := tkv1alpha1.ReasonWaitingForRollSlot
	bs, _, err := function.Required[metav1.PartialObjectMetadata](s.r, requiredRollGrant)
	if err != nil || len(bs) != 1 {
		return rollRecord{}, reason
	}
	b, id := bs[0], s.t.ID
	if b.Name != rollRecordName("ClusterRoleBinding", id) || b.Labels[function.LabelCluster] != id.Name ||
		b.Labels[function.LabelNamespace] != id.Namespace || b.Labels[function.LabelComponent] != function.CSIControllerComponent {
		return rollRecord{}, reason
	}
	if b.Annotations[annotationRollReason] == tkv1alpha1.ReasonRollsStopped {
		reason = tkv1alpha1.ReasonRollsStopped
	}
	rec := recordFrom(b.Labels[labelRoll], b.Annotations[annotationRollSince], "")
	if !rec.rolling() {
		return rollRecord{}, reason
	}
	return rec, ""
}

// composeRollRequest asks for the TenantCluster's record and labels its
// KamajiControlPlane with its request.
func (s *scope) composeRollRequest(p *function.Plan) {
	if s.requireRollGrant {
		p.Require(requiredRollGrant, &fnv1.ResourceSelector{
			ApiVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding",
			Match: &fnv1.ResourceSelector_MatchName{MatchName: rollRecordName("ClusterRoleBinding", s.t.ID)},
		})
	}
	if !s.rollRequest {
		return
	}
	for _, c := range p.Composed {
		if c.Name != nameKamajiControlPlane {
			continue
		}
		if o, ok := c.Object.(metav1.Object); ok {
			l := o.GetLabels()
			l[labelRollRequest] = "true"
			o.SetLabels(l)
		}
	}
}
