// Package storageclass maps the StorageClasses inside a tenant cluster to
// the management cluster's. The platform lists the management classes a
// tenant may use (the remoteStorageClasses setting: classes whose volumes
// a worker VM on any node can attach); inside every tenant cluster the
// KubeVirt CSI release offers each under its own name, the cluster's
// spec.storageClass (one of them) as the default class, and kubevirt, an
// alias of the cluster's class. The CSI controller, which runs in the
// management cluster, refuses a volume of any other management class, so a
// StorageClass the tenant writes itself cannot reach one either.
package storageclass

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Alias is the tenant StorageClass that maps to the cluster's class beside
// the class's own name, so that volumes claimed through it keep a class.
const Alias = "kubevirt"

// DefaultRemote is the default of the remoteStorageClasses setting.
func DefaultRemote() []string { return []string{"replicated"} }

// MaxRemote bounds the remoteStorageClasses setting.
const MaxRemote = 32

// ValidateRemote checks the remoteStorageClasses setting at path: 1 to
// MaxRemote distinct StorageClass names (DNS subdomains).
func ValidateRemote(path *field.Path, remote []string) error {
	switch {
	case len(remote) == 0:
		return field.Required(path, "must list at least one StorageClass of the management cluster")
	case len(remote) > MaxRemote:
		return field.TooMany(path, len(remote), MaxRemote)
	}
	for i, name := range remote {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return field.Invalid(path.Index(i), name, msgs[0])
		}
		if slices.Index(remote, name) < i {
			return field.Duplicate(path.Index(i), name)
		}
	}
	return nil
}

// Check refuses a management class at path that is not one of the
// platform's remote classes: the cluster's spec.storageClass, and a node
// group's storageClass, the class of its worker VMs' disks (a live
// migration moves a VM to any node, which must attach its disk).
func Check(path *field.Path, class string, remote []string) *field.Error {
	if slices.Contains(remote, class) {
		return nil
	}
	return field.NotSupported(path, class, remote)
}

// Tenant returns the tenant StorageClasses of a cluster whose class is
// cluster (one of remote): name → {infraStorageClass, default}, the values
// key storageClasses of Cozystack's kubevirt-csi-node chart. Every remote
// class maps to itself, cluster is the one default, and Alias maps to
// cluster unless Alias is itself a remote class.
func Tenant(cluster string, remote []string) map[string]any {
	out := make(map[string]any, len(remote)+1)
	for _, name := range remote {
		out[name] = class(name, name == cluster)
	}
	if _, ok := out[Alias]; !ok {
		out[Alias] = class(cluster, false)
	}
	return out
}

func class(infra string, isDefault bool) map[string]any {
	return map[string]any{"infraStorageClass": infra, "default": isDefault}
}

// EnforcementEnv is the environment variable of the KubeVirt CSI driver
// (kubevirt/csi-driver, cmd/kubevirt-csi-driver) that holds its
// infrastructure StorageClass enforcement, YAML.
const EnforcementEnv = "INFRA_STORAGE_CLASS_ENFORCEMENT"

// enforcement is the driver's util.StorageClassEnforcement
// (kubevirt/csi-driver pkg/util): allowAll false refuses a volume whose
// infraStorageClassName is not in allowList; allowDefault true accepts one
// naming no class (the management cluster's default class), which is also
// what lets a snapshot take the default VolumeSnapshotClass of its volume's
// class without a storageSnapshotMapping.
type enforcement struct {
	AllowAll     bool     `json:"allowAll"`
	AllowDefault bool     `json:"allowDefault"`
	AllowList    []string `json:"allowList"`
}

// Enforcement returns the value of EnforcementEnv that allows exactly the
// remote classes (and the management cluster's default class).
func Enforcement(remote []string) string {
	out, err := yaml.Marshal(enforcement{AllowDefault: true, AllowList: remote})
	if err != nil {
		panic(fmt.Sprintf("storageclass: %v", err)) // a struct of bools and strings always encodes
	}
	return string(out)
}
