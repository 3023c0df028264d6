package main

import (
	"slices"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/functions/control-plane/internal/backup"
	"github.com/tenantkube/tenantkube/internal/function"
)

// planTenantBackups adds to p the Tenant's backups of the namespace's etcd
// at the platform's interval (backup.Compose), named "<UTC
// YYYYMMDDhhmmss>-<incarnation>". Each names, for every TenantCluster
// served whose PKI Secrets have arrived, the PKI object holding its cluster
// CA, service-account key pair and front-proxy CA (backup.ControlPlanePKI: the
// Tenant's etcd CAs are not restored) and, where it has one, its
// encryption Secret (backup.TenantClusterPKI) and where its control plane keeps
// its data in the etcd. One is taken once the lists have arrived and at
// least one cluster's PKI has: until then the observed backups are kept.
// With no cluster served there is nothing to back up; the first backup is
// due from the creation of the oldest served cluster's KamajiControlPlane
// (servedCluster.Created).
func planTenantBackups(p *function.Plan, r *function.Request, site etcdSite, clusters []servedCluster, arrived bool, in *cpinput.ControlPlaneInput, now time.Time) *field.Error {
	b := &in.Etcd.Backup
	interval, ferr := backup.Interval("", b)
	if ferr != nil {
		return ferr
	}
	ns := site.Namespace
	p.Require(function.RequirementNamespace, function.NamespaceSelector(function.Identity{Namespace: ns}))
	s := backup.Schedule{
		Slot: function.Identity{Namespace: ns, Name: site.Names.Cluster}, Etcd: site.Names.Cluster,
		Labels: site.Labels, Interval: interval, IntervalText: backup.IntervalText("", b), Tenant: true,
		Idle: arrived && len(clusters) == 0,
		Require: func(p *function.Plan) {
			for _, c := range clusters {
				backup.RequirePKI(p, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", backup.TenantClusterPKI)
			}
		},
		Carried: func(r *function.Request) ([]backup.ClusterIdentity, []string, error) {
			if !arrived {
				return nil, nil, nil
			}
			var ids []backup.ClusterIdentity
			var refused []string
			for _, c := range clusters {
				pki, why, err := backup.ReadPKI(r, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", backup.TenantClusterPKI)
				if err != nil {
					return nil, nil, err
				}
				refused = append(refused, why...)
				if pki != nil {
					ids = append(ids, backup.ClusterIdentity{Cluster: c.Name, PKI: pki, Schema: c.Schema, Username: c.Username})
				}
			}
			return ids, refused, nil
		},
	}
	for _, c := range clusters {
		if s.Since.IsZero() || c.Created.Before(s.Since) {
			s.Since = c.Created
		}
	}
	return backup.Compose(p, r, b, s, now)
}

// backupReasons are the reasons of BackupCurrent.
var backupReasons = []string{tkv1alpha1.ReasonBackupSucceeded, tkv1alpha1.ReasonAwaitingFirstBackup, tkv1alpha1.ReasonBackupOverdue, tkv1alpha1.ReasonNothingToBackUp, tkv1alpha1.ReasonPKISecretTooLarge, tkv1alpha1.ReasonBackupCredentialsNotScoped, tkv1alpha1.ReasonTooManyDeletedClusterBackups}

// requiredTenantXR is the required-resources key of a TenantCluster's
// Tenant, named after the namespace.
const requiredTenantXR = "tenant"

// tenantBackupState is what mirrorTenantBackups reads of a Tenant.
type tenantBackupState struct {
	Status struct {
		Backup     *tkv1alpha1.BackupStatus `json:"backup"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// mirrorTenantBackups sets on a TenantCluster of namespace ns the backups
// of the namespace's etcd as its Tenant reports them: status.backup and
// the BackupCurrent condition (tenants read no Tenant; a TenantCluster's
// restore names the Tenant's backup). Nothing until the Tenant reports
// backups.
func mirrorTenantBackups(p *function.Plan, r *function.Request, ns string) error {
	p.Require(requiredTenantXR, &fnv1.ResourceSelector{
		ApiVersion: tkv1alpha1.GroupVersion.String(), Kind: tkv1alpha1.TenantKind,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: ns},
	})
	tenants, _, err := function.Required[tenantBackupState](r, requiredTenantXR)
	if err != nil || len(tenants) != 1 || tenants[0].Status.Backup == nil {
		return err
	}
	b := tenants[0].Status.Backup
	status := map[string]any{"interval": b.Interval, "retained": b.Retained}
	if l := b.LastSuccessful; l != nil {
		status["lastSuccessful"] = map[string]any{"name": l.Name, "time": l.Time, "age": l.Age}
	}
	p.Status["backup"] = status
	for _, c := range tenants[0].Status.Conditions {
		if c.Type == tkv1alpha1.ConditionBackupCurrent && slices.Contains(backupReasons, c.Reason) {
			p.SetCondition(tkv1alpha1.ConditionBackupCurrent, c.Status == "True", c.Reason, "the namespace's etcd (Tenant "+ns+"): "+c.Message)
		}
	}
	return nil
}
