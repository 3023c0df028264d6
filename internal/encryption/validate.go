package encryption

import (
	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	"sigs.k8s.io/yaml"
)

// codecs decodes an EncryptionConfiguration as kube-apiserver does: the
// internal and v1 types, strict (k8s.io/apiserver v0.36.4
// pkg/server/options/encryptionconfig/config.go:142-145).
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(apiserver.AddToScheme(s))
	utilruntime.Must(apiserverv1.AddToScheme(s))
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// Validate is what kube-apiserver refuses of the configuration config
// when it loads it (loadConfig, config.go:519-535: decode with defaults,
// then validation.ValidateEncryptionConfiguration). reload true: the
// stricter of its two modes (KMS names unique across v1 and v2,
// pkg/apis/apiserver/validation/validation_encryption.go:427-447).
func Validate(config []byte) field.ErrorList {
	obj, gvk, err := codecs.UniversalDecoder().Decode(config, nil, nil)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("resources"), "<undecodable>", err.Error())}
	}
	cfg, ok := obj.(*apiserver.EncryptionConfiguration)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), gvk.String(), "not an EncryptionConfiguration")}
	}
	return validation.ValidateEncryptionConfiguration(cfg, true)
}

// Refusal is one thing kube-apiserver refuses of a list of resources:
// Index is the entry's (-1: the list as a whole).
type Refusal struct {
	Index  int
	Detail string
}

// CheckResources is what kube-apiserver refuses of resources, listed in
// a configuration as a cluster's lists them (Config, one key).
func CheckResources(resources []string) []Refusal {
	ks := KeySet{State: Stable(1), Keys: []Key{{Generation: 1, Secret: bytes.Repeat([]byte{1}, KeyBytes)}}, Resources: resources}
	cfg, err := yaml.Marshal(ks.Config())
	if err != nil {
		return []Refusal{{Index: -1, Detail: err.Error()}}
	}
	list := field.NewPath("resources").Index(0).Child("resources")
	var out []Refusal
	for _, e := range Validate(cfg) {
		r := Refusal{Index: -1, Detail: e.Detail}
		for i := range resources {
			if e.Field == list.Index(i).String() {
				r.Index = i
			}
		}
		if r.Index < 0 && e.Field != list.String() {
			r.Detail = e.Field + ": " + e.Detail
		}
		out = append(out, r)
	}
	return out
}

// CheckKMS is what kube-apiserver refuses of the provider of plugin k, in
// a configuration as a cluster's lists it (one generation), as details.
func CheckKMS(k KMS) []string {
	ks := KeySet{State: Stable(1), Keys: []Key{{Generation: 1, KMS: &k}}, Resources: []string{"secrets"}}
	cfg, err := yaml.Marshal(ks.Config())
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range Validate(cfg) {
		out = append(out, e.Field+": "+e.Detail)
	}
	return out
}
