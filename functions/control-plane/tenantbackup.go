package main

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// planTenantBackups adds to p the Tenant's backups of the namespace's etcd
// at the platform's interval (composeBackups), named "<UTC
// YYYYMMDDhhmmss>-<incarnation>". Each names, for every TenantCluster
// served whose PKI Secrets have arrived, the PKI object holding its cluster
// CA, service-account key pair and front-proxy CA (restoredPKI: the
// Tenant's etcd CAs are not restored) and where its control plane keeps
// its data in the etcd. One is taken once the lists have arrived and at
// least one cluster's PKI has: until then the observed backups are kept.
// With no cluster served there is nothing to back up; the first backup is
// due from the oldest served cluster's creation.
func planTenantBackups(p *function.Plan, r *function.Request, site etcdSite, clusters []servedCluster, arrived bool, in *cpinput.ControlPlaneInput, now time.Time) *field.Error {
	b := &in.Etcd.Backup
	interval, ferr := backupInterval("", b)
	if ferr != nil {
		return ferr
	}
	ns := site.Namespace
	p.Require(function.RequirementNamespace, function.NamespaceSelector(function.Identity{Namespace: ns}))
	s := backupSchedule{
		Slot: function.Identity{Namespace: ns, Name: site.Names.Cluster}, Etcd: site.Names.Cluster,
		Labels: site.Labels, Interval: interval, Tenant: true,
		Idle: arrived && len(clusters) == 0,
		Require: func(p *function.Plan) {
			for _, c := range clusters {
				requirePKI(p, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", restoredPKI)
			}
		},
		Carried: func(r *function.Request) ([]clusterIdentity, []string, error) {
			if !arrived {
				return nil, nil, nil
			}
			var ids []clusterIdentity
			var refused []string
			for _, c := range clusters {
				pki, why, err := readPKI(r, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", restoredPKI)
				if err != nil {
					return nil, nil, err
				}
				refused = append(refused, why...)
				if pki != nil {
					ids = append(ids, clusterIdentity{Cluster: c.Name, PKI: pki, Schema: c.Schema, Username: c.Username})
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
	return composeBackups(p, r, b, s, now)
}
