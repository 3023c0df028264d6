package main

import (
	"testing"

	input "github.com/tenantkube/tenantkube/functions/addons/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

func renderFor(t *testing.T, specYAML string) ([]Object, error) {
	t.Helper()
	r := xr(t, specYAML)
	spec, err := function.DecodeSpec(r.GetResource().AsMap()["spec"])
	if err != nil {
		t.Fatal(err)
	}
	in := &input.AddonsInput{}
	in.Default()
	return Render(function.Identity{Name: "demo", Namespace: "tenant-demo"}, spec, in, false)
}
