package platform

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function"
)

// Two stand-in inputs: the Reader knows the keys of both, merges only a
// function's own, and names an unknown key with every input type.
type firstInput struct {
	Domain string `json:"domain,omitempty"`
	Shared int    `json:"shared,omitempty"`
}

type secondInput struct {
	Images struct {
		Driver string `json:"driver,omitempty"`
	} `json:"images,omitempty"`
	Shared int `json:"shared,omitempty"`
}

func settingsRequest(t *testing.T, data map[string]any) *function.Request {
	t.Helper()
	obj, err := structpb.NewStruct(map[string]any{"apiVersion": APIVersion, "kind": Kind, "metadata": map[string]any{"name": Name}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return function.NewRequest(&fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{RequirementKey: {Items: []*fnv1.Resource{{Resource: obj}}}}})
}

func TestReaderKeys(t *testing.T) {
	rd := NewReader(&firstInput{}, &secondInput{})
	in := &firstInput{Domain: "old.test"}
	s, err := rd.Read(settingsRequest(t, map[string]any{"domain": "new.test", "shared": 3, "images": map[string]any{"driver": "x"}}), &fnv1.RunFunctionResponse{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Found || in.Domain != "new.test" || in.Shared != 3 {
		t.Errorf("after the merge: found %v, %+v; want new.test and 3 (images is the other input's)", s.Found, in)
	}
	for data, want := range map[string]string{
		// domian is one swap from domain, drivr one insertion from driver.
		"domian": `EnvironmentConfig(tenantkube).data.domian: Forbidden: unknown setting: no field of a tenantkube function input (firstInput, secondInput) has this name; did you mean domain?; the settings are domain, images, shared`,
		"images": `EnvironmentConfig(tenantkube).data.images.drivr: Forbidden: unknown setting: no field of a tenantkube function input (firstInput, secondInput) has this name; did you mean driver?`,
		// Nothing within two edits of "zzz": no suggestion.
		"zzz": `EnvironmentConfig(tenantkube).data.zzz: Forbidden: unknown setting: no field of a tenantkube function input (firstInput, secondInput) has this name; the settings are domain, images, shared`,
	} {
		v := map[string]any{data: "x"}
		if data == "images" {
			v = map[string]any{"images": map[string]any{"drivr": "x"}}
		}
		_, err := rd.Read(settingsRequest(t, v), &fnv1.RunFunctionResponse{}, &secondInput{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", data, err, want)
		}
	}
}
