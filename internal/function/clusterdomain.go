package function

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultClusterDomain is the default of the platform setting
// clusterDomain, the management cluster's DNS domain (its kubelets'
// --cluster-domain): Kubernetes' default.
const DefaultClusterDomain = "cluster.local"

// MaxClusterDomainLength is the longest clusterDomain for which every name
// composed under it, up to *.<service>.<NS>.svc.<clusterDomain> (a Service
// name and a namespace of 63 characters each), stays within a DNS name's
// 253 characters.
const MaxClusterDomainLength = validation.DNS1123SubdomainMaxLength - len("*.") - validation.DNS1123LabelMaxLength - 1 - validation.DNS1123LabelMaxLength - len(".svc.")

// ValidateClusterDomain checks the clusterDomain setting at path: a DNS
// subdomain of at most MaxClusterDomainLength characters, without a
// trailing dot (names are composed by appending it).
func ValidateClusterDomain(path *field.Path, domain string) *field.Error {
	if len(domain) > MaxClusterDomainLength {
		return field.TooLong(path, domain, MaxClusterDomainLength)
	}
	if msgs := validation.IsDNS1123Subdomain(domain); len(msgs) > 0 {
		return field.Invalid(path, domain, "must be a DNS subdomain (the management cluster's DNS domain, such as cluster.local): "+strings.Join(msgs, "; "))
	}
	return nil
}
