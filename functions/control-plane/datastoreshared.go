package main

import (
	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// setDataStoreShared sets DataStoreShared on a cluster whose control plane
// keeps its state in the platform's shared DataStore name ("" for none:
// a dedicated etcd, the condition is not set). etcd has no quota per key
// prefix: its one backend quota is every cluster's, and once a cluster
// fills it etcd raises NOSPACE and refuses writes of all of them
// (https://etcd.io/docs/v3.6/op-guide/maintenance/#space-quota).
func setDataStoreShared(p *function.Plan, name string) {
	if name == "" {
		return
	}
	p.SetCondition(tkv1alpha1.ConditionDataStoreShared, true, tkv1alpha1.ReasonSharedDataStore,
		"the control plane keeps its state in the shared Kamaji DataStore "+name+", with clusters of other tenants: "+
			"it has no quota per cluster, and one cluster filling it makes every cluster on it read-only (etcd: the NOSPACE alarm); "+
			"a shared DataStore is for tenants who trust each other")
}
