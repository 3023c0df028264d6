package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenantkube/tenantkube/internal/fntest"
	"github.com/tenantkube/tenantkube/internal/schema"
)

// TestEmittedObjectsValidate renders the node-group shapes and
// validates every emitted custom resource against the upstream CRDs in
// ../shared/crds (Kubernetes built-in kinds have no CRD and are checked by
// their typed Go structs at build time).
func TestEmittedObjectsValidate(t *testing.T) {
	v, err := schema.LoadShared()
	if err != nil {
		t.Fatalf("cannot load the shared CRDs: %v", err)
	}
	specs := map[string]string{
		"default":   ``,
		"instance":  `nodeGroups: {md0: {instanceType: u1.large, kubelet: {systemReservedMemory: 256Mi, kubeReservedMemory: 256Mi, evictionHardMemory: 500Mi, evictionSoftMemory: 1Gi}}}`,
		"resources": `nodeGroups: {big: {resources: {cpu: 4, memory: 16Gi}, minReplicas: 1, maxReplicas: 3, roles: [worker]}}`,
		"gpu":       `nodeGroups: {gpu: {instanceType: gn1.xlarge, storageClass: fast, roles: [ingress-nginx], gpus: [{name: nvidia.com/AD102GL_L40S}]}}`,
		"mirror":    `nodeGroups: {md0: {instanceType: u1.large, minReplicas: 0, maxReplicas: 0}}`,
		"talos": `nodeGroups: {md0: {os: Talos, instanceType: u1.large}, gpu: {os: Talos, instanceType: gn1.xlarge, gpus: [{name: nvidia.com/AD102GL_L40S}]}}
talos: {registryMirrors: {docker.io: {endpoints: ["https://mirror.example.com"], skipFallback: true}}}`,
		"mixed": `nodeGroups: {ubuntu: {os: Ubuntu}, talos: {os: Talos}}`,
	}
	in := mustStruct(t, `apiVersion: fn.tenantkube.io/v1alpha1
kind: WorkersInput
registryMirror: {secretName: registry-mirrors}
remoteStorageClasses: [replicated, fast]`)
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, spec, withInstancetypes(t, "u1.medium", "u1.large", "gn1.xlarge"), withMachineSets(t), withTalosPKI(t), fntest.WithInput(in)))
			mustNoFatal(t, rsp)
			checked := 0
			for _, rn := range desiredNames(rsp) {
				obj := &unstructured.Unstructured{Object: desired(t, rsp, rn)}
				if !strings.Contains(obj.GetAPIVersion(), ".") || strings.HasSuffix(obj.GroupVersionKind().Group, "k8s.io") && !strings.Contains(obj.GroupVersionKind().Group, "x-k8s.io") {
					continue // core and apps/rbac kinds: no CRD
				}
				checked++
				if err := v.Validate(obj); err != nil {
					t.Errorf("%s (%s) does not validate: %v", rn, obj.GetKind(), err)
				}
			}
			if checked < 4 {
				t.Errorf("validated only %d custom resources, want at least the 4 per node group", checked)
			}
		})
	}
}
