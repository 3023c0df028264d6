package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/fntest"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// everythingPodSpec is a Talos cluster with an OIDC configuration and two
// volumes of the tenant's, mounted: every volume, container and mount
// tenantkube puts on the control-plane pod.
const everythingPodSpec = `{nodeGroups: {md0: {os: Talos}},
  oidc: {mode: CustomConfig, customConfig: {config: "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://id.example.com\n    audiences: [a]\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n"}},
  controlPlane: {apiServer: {
    extraVolumes: [{name: audit, configMap: {name: audit}}, {name: webhook, secret: {secretName: webhook}}],
    extraVolumeMounts: [{name: audit, mountPath: /srv/audit}, {name: webhook, mountPath: /srv/webhook}]}}}`

// TestReservedNamesCoverComposed: every volume and container tenantkube
// adds to the control-plane pod (read from the KamajiControlPlane the
// function composes with all of them, the tenant's volumes aside) is one
// a tenant's extraVolumes may not take (ReservedVolumeNames) or one
// reserved for containers, and the composed pod passes checkPod.
func TestReservedNamesCoverComposed(t *testing.T) {
	rsp := fntest.Call{Spec: everythingPodSpec, Input: `{talosCsrSignerImage: ` + signerImage + `}`, Required: talosObserved(true, true)}.Run(t, fn)
	fntest.NoFatal(t, rsp)
	var kcp kamajiv1alpha2.KamajiControlPlane
	raw, err := json.Marshal(fntest.DesiredObject(t, rsp, nameKamajiControlPlane))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &kcp); err != nil {
		t.Fatal(err)
	}
	var volumes, containers []string
	for _, v := range kcp.Spec.Deployment.ExtraVolumes {
		if v.Name != "audit" && v.Name != "webhook" {
			volumes = append(volumes, v.Name)
		}
	}
	for _, c := range kcp.Spec.Deployment.ExtraContainers {
		containers = append(containers, c.Name)
	}
	if len(volumes) == 0 || len(containers) == 0 {
		t.Fatalf("the control plane carries tenantkube's volumes %v and containers %v: want some of each", volumes, containers)
	}
	for _, v := range volumes {
		if !slices.Contains(tkv1alpha1.ReservedVolumeNames, v) {
			t.Errorf("tenantkube adds volume %q, which a tenant's extraVolumes may take (not in ReservedVolumeNames)", v)
		}
	}
	for _, c := range containers {
		if !slices.Contains(tkv1alpha1.ReservedContainerNames, c) {
			t.Errorf("tenantkube adds container %q, which is not in ReservedContainerNames", c)
		}
	}
	if errs := checkPod(&kcp); len(errs) > 0 {
		t.Errorf("the composed KamajiControlPlane fails checkPod: %v", errs.ToAggregate())
	}
}

// TestTenantVolumeTakesNoReservedName: a tenant's extra volume named as
// one tenantkube or Kamaji adds is a Fatal naming the entry and the name,
// each at once, and nothing is composed.
func TestTenantVolumeTakesNoReservedName(t *testing.T) {
	spec := `{nodeGroups: {md0: {os: Talos}}, controlPlane: {apiServer: {extraVolumes: [`
	var want []string
	for i, name := range []string{tkv1alpha1.TalosCAVolume, tkv1alpha1.TalosTLSVolume, tkv1alpha1.AuthenticationConfigVolume, "kine-uds"} {
		if i > 0 {
			spec += ", "
		}
		spec += `{name: ` + name + `, secret: {secretName: s}}`
		want = append(want, field.Invalid(field.NewPath("spec", "controlPlane", "apiServer", "extraVolumes").Index(i).Child("name"), name, "is a volume of the control plane itself").Error())
	}
	spec += `]}}}`
	rsp := fntest.Call{Spec: spec, Input: `{talosCsrSignerImage: ` + signerImage + `}`, Required: talosObserved(true, true)}.Run(t, fn)
	msg := fntest.FatalMessage(rsp)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("Fatal %q does not hold %q", msg, w)
		}
	}
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("%d resources composed beside the Fatal", n)
	}
}

// TestCheckPod: a KamajiControlPlane whose pod would repeat a volume or
// container name (its own, or Kamaji's) or mount a volume it lacks is
// refused, every problem named with its path and value.
func TestCheckPod(t *testing.T) {
	vol := func(n string) corev1.Volume { return corev1.Volume{Name: n} }
	mount := func(n string) corev1.VolumeMount { return corev1.VolumeMount{Name: n, MountPath: "/" + n} }
	spec := field.NewPath("kamajiControlPlane", "spec")
	vp, cp := spec.Child("deployment", "extraVolumes"), spec.Child("deployment", "extraContainers")
	cases := map[string]struct {
		kcp  kamajiv1alpha2.KamajiControlPlaneSpec
		want field.ErrorList
	}{
		"Empty": {},
		"Valid": {kcp: kamajiv1alpha2.KamajiControlPlaneSpec{
			APIServer: &kamajiv1alpha2.ControlPlaneComponent{ExtraVolumeMounts: []corev1.VolumeMount{mount("a")}},
			Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{vol("a"), vol("b")},
				ExtraContainers: []corev1.Container{{Name: "x", VolumeMounts: []corev1.VolumeMount{mount("b")}}}},
		}},
		"RepeatedVolume": {
			kcp:  kamajiv1alpha2.KamajiControlPlaneSpec{Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{vol("a"), vol("talos-ca"), vol("talos-ca")}}},
			want: field.ErrorList{field.Duplicate(vp.Index(2).Child("name"), "talos-ca")},
		},
		"KamajiVolume": {
			kcp:  kamajiv1alpha2.KamajiControlPlaneSpec{Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{vol("etc-kubernetes-pki")}}},
			want: field.ErrorList{field.Duplicate(vp.Index(0).Child("name"), "etc-kubernetes-pki")},
		},
		"RepeatedContainer": {
			kcp: kamajiv1alpha2.KamajiControlPlaneSpec{Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraContainers: []corev1.Container{
				{Name: "talos-csr-signer"}, {Name: "talos-csr-signer"}, {Name: "kube-apiserver"}}}},
			want: field.ErrorList{field.Duplicate(cp.Index(1).Child("name"), "talos-csr-signer"), field.Duplicate(cp.Index(2).Child("name"), "kube-apiserver")},
		},
		"MountWithoutVolume": {
			kcp: kamajiv1alpha2.KamajiControlPlaneSpec{
				APIServer:         &kamajiv1alpha2.ControlPlaneComponent{ExtraVolumeMounts: []corev1.VolumeMount{mount("a"), mount("gone")}},
				ControllerManager: &kamajiv1alpha2.ControlPlaneComponent{ExtraVolumeMounts: []corev1.VolumeMount{mount("etc-kubernetes-pki")}},
				Deployment: &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{vol("a")},
					ExtraContainers: []corev1.Container{{Name: "x", VolumeMounts: []corev1.VolumeMount{mount("talos-ca")}}}},
			},
			want: field.ErrorList{
				field.NotFound(cp.Index(0).Child("volumeMounts").Index(0).Child("name"), "talos-ca"),
				field.NotFound(spec.Child("apiServer", "extraVolumeMounts").Index(1).Child("name"), "gone"),
				field.NotFound(spec.Child("controllerManager", "extraVolumeMounts").Index(0).Child("name"), "etc-kubernetes-pki"),
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, checkPod(&kamajiv1alpha2.KamajiControlPlane{Spec: c.kcp})); d != "" {
				t.Errorf("checkPod: -want +got:\n%s", d)
			}
		})
	}
}

// TestCheckPodKamajiNames: every volume and container Kamaji adds to the
// control-plane pod is refused as an extra volume or extra container's
// name. The names, one by one, from Kamaji at the commit the control-plane
// provider v0.20.0 pins (github.com/clastix/kamaji e51909fae3f5,
// internal/builders/controlplane/).
func TestCheckPodKamajiNames(t *testing.T) {
	vp := field.NewPath("kamajiControlPlane", "spec", "deployment", "extraVolumes").Index(0).Child("name")
	cp := field.NewPath("kamajiControlPlane", "spec", "deployment", "extraContainers").Index(0).Child("name")
	for _, c := range []struct {
		name, source string
		container    bool
	}{
		{"etc-kubernetes-pki", "deployment.go:31 kubernetesPKIVolumeName", false},
		{"etc-ca-certificates", "deployment.go:32 caCertificatesVolumeName", false},
		{"usr-share-ca-certificates", "deployment.go:33 usrShareCACertificatesVolumeName", false},
		{"usr-local-share-ca-certificates", "deployment.go:34 usrLocalShareCaCertificateVolumeName", false},
		{"scheduler-kubeconfig", "deployment.go:35 schedulerKubeconfigVolumeName", false},
		{"controller-manager-kubeconfig", "deployment.go:36 controllerManagerKubeconfigVolumeName", false},
		{"kine-uds", "deployment.go:37 kineUDSVolume", false},
		{"kine-config", "deployment.go:40 dataStoreCertsVolumeName", false},
		{"kine-certs", "deployment.go:41 kineVolumeCertName", false},
		{"egress-selector-configuration", "konnectivity_server.go:28 egressSelectorConfigurationVolume", false},
		{"konnectivity-uds", "konnectivity_server.go:29 konnectivityUDSVolume", false},
		{"konnectivity-server-kubeconfig", "konnectivity_server.go:30 konnectivityServerKubeconfigVolume", false},
		{"kube-apiserver", "deployment.go:47 apiServerContainerName", true},
		{"kube-controller-manager", "deployment.go:48 controlPlaneContainerName", true},
		{"kube-scheduler", "deployment.go:49 schedulerContainerName", true},
		{"kine", "deployment.go:50 kineContainerName", true},
		{"chmod", "deployment.go:51 kineInitContainerName (an init container: names are unique across both lists)", true},
		{"konnectivity-server", "konnectivity_server.go:25 konnectivityServerName", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &kamajiv1alpha2.DeploymentSpec{ExtraVolumes: []corev1.Volume{{Name: c.name}}}
			want := field.ErrorList{field.Duplicate(vp, c.name)}
			if c.container {
				d = &kamajiv1alpha2.DeploymentSpec{ExtraContainers: []corev1.Container{{Name: c.name}}}
				want = field.ErrorList{field.Duplicate(cp, c.name)}
			}
			if diff := cmp.Diff(want, checkPod(&kamajiv1alpha2.KamajiControlPlane{Spec: kamajiv1alpha2.KamajiControlPlaneSpec{Deployment: d}})); diff != "" {
				t.Errorf("Kamaji's %s (%s) taken by the tenant: -want +got:\n%s", c.name, c.source, diff)
			}
		})
	}
}
