package function_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenantkube/tenantkube/internal/function"
)

func TestAPIServerServiceFQDN(t *testing.T) {
	id := function.Identity{Name: "demo", Namespace: "tenant-demo"}
	for domain, want := range map[string]string{
		function.DefaultClusterDomain: "demo.tenant-demo.svc.cluster.local",
		"corp.example":                "demo.tenant-demo.svc.corp.example",
	} {
		if got := id.APIServerServiceFQDN(domain); got != want {
			t.Errorf("APIServerServiceFQDN(%q) = %s, want %s", domain, got, want)
		}
	}
	if got := id.APIServerServiceHost(); got != "demo.tenant-demo.svc" {
		t.Errorf("APIServerServiceHost() = %s, want the short demo.tenant-demo.svc", got)
	}
}

func TestValidateClusterDomain(t *testing.T) {
	if function.MaxClusterDomainLength != 119 {
		t.Errorf("MaxClusterDomainLength = %d, want 119 (the inputs' MaxLength markers)", function.MaxClusterDomainLength)
	}
	path := field.NewPath("input", "clusterDomain")
	for domain, ok := range map[string]bool{
		"cluster.local": true, "corp.example": true, "local": true, strings.Repeat("a", 59) + "." + strings.Repeat("b", 59): true,
		"": false, "Corp.Example": false, "corp.example.": false, ".corp.example": false, "corp_example": false,
		strings.Repeat("a", 60) + "." + strings.Repeat("b", 59): false,
	} {
		err := function.ValidateClusterDomain(path, domain)
		if (err == nil) != ok {
			t.Errorf("ValidateClusterDomain(%q) = %v, want ok %v", domain, err, ok)
		}
		if err != nil && err.Field != "input.clusterDomain" {
			t.Errorf("ValidateClusterDomain(%q) names %s", domain, err.Field)
		}
	}
}
