package main

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// planTenantBackups adds to p the Tenant's backups of the namespace's etcd
// at the platform's interval (composeBackups), named "<UTC
// YYYYMMDDhhmmss>-<incarnation>". Each carries, for every TenantCluster
// served whose PKI Secrets have arrived, its cluster CA, service-account
// key pair and front-proxy CA (restoredPKI: the Tenant's etcd CAs are not
// restored) and where its control plane keeps its data in the etcd. One is
// taken once the lists have arrived and at least one cluster's PKI has:
// until then the observed backups are kept.
func planTenantBackups(p *function.Plan, r *function.Request, site etcdSite, clusters []servedCluster, arrived bool, in *cpinput.ControlPlaneInput, now time.Time) *field.Error {
	b := &in.Etcd.Backup
	interval, ferr := backupInterval("", b)
	if ferr != nil {
		return ferr
	}
	ns := site.Namespace
	p.Require(function.RequirementNamespace, function.NamespaceSelector(function.Identity{Namespace: ns}))
	return composeBackups(p, r, b, backupSchedule{
		Slot: function.Identity{Namespace: ns, Name: site.Names.Cluster}, Etcd: site.Names.Cluster,
		Labels: site.Labels, Interval: interval,
		Require: func(p *function.Plan) {
			for _, c := range clusters {
				requirePKI(p, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", restoredPKI)
			}
		},
		Carried: func(r *function.Request) (*backupContent, error) {
			if !arrived {
				return nil, nil
			}
			pki := map[string]map[string]map[string][]byte{}
			accounts := map[string]map[string]string{}
			for _, c := range clusters {
				data, err := readPKI(r, function.Identity{Namespace: ns, Name: c.Name}, c.Name+".", restoredPKI)
				if err != nil {
					return nil, err
				}
				if data == nil {
					continue
				}
				pki[c.Name] = data
				accounts[c.Name] = map[string]string{bundleSchema: c.Schema, bundleUsername: c.Username}
			}
			if len(pki) == 0 {
				return nil, nil
			}
			return &backupContent{PKI: pki, Fields: map[string]any{bundleClusters: accounts}}, nil
		},
	}, now)
}
