package main

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// The node-group cap re-checks the XRD's maxProperties (50) and is an input
// setting, so benchmarks can measure beyond it.
func TestNodeGroupCap(t *testing.T) {
	groups := map[string]any{}
	for i := range 51 {
		groups[fmt.Sprintf("g%d", i)] = map[string]any{"resources": map[string]any{"cpu": "2", "memory": "4Gi"}}
	}
	xr, err := fntest.Struct(fntest.XR(map[string]any{"nodeGroups": groups}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		input map[string]any
		fatal bool
	}{{nil, true}, {map[string]any{"maxNodeGroups": 51}, false}} {
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}
		if c.input != nil {
			if req.Input, err = fntest.Struct(c.input); err != nil {
				t.Fatal(err)
			}
		}
		rsp, err := fntest.Run((&Function{now: fixedClock}).RunFunction, req)
		if err != nil {
			t.Fatal(err)
		}
		msg := fntest.FatalMessage(rsp)
		switch {
		case c.fatal && !strings.Contains(msg, "spec.nodeGroups: Too many: 51: must have at most 50 items"):
			t.Errorf("input %v: Fatal %q", c.input, msg)
		case !c.fatal && msg != "":
			t.Errorf("input %v: unexpected Fatal %q", c.input, msg)
		}
	}
}
