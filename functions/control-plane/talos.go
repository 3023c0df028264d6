package main

import (
	"fmt"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	cpinput "github.com/tenantkube/tenantkube/functions/control-plane/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/talos"
	certmanagerv1 "github.com/tenantkube/tenantkube/internal/upstream/certmanager/v1"
	kamajiv1alpha2 "github.com/tenantkube/tenantkube/internal/upstream/kamaji/v1alpha2"
)

// Composed-resource names and required-resource keys of the Talos PKI.
const (
	nameTalosSelfSignedIssuer = "talos-selfsigned-issuer"
	nameTalosCA               = "talos-ca"
	nameTalosCAIssuer         = "talos-ca-issuer"
	nameTalosTLS              = "talos-tls"

	// requiredTalosCA and requiredTalosTLS are the Secrets cert-manager
	// writes for the Talos CA and the signer's serving certificate;
	// requiredAPIServerService is Kamaji's Service N in front of the
	// control-plane pods, whose cluster IP the serving certificate names.
	requiredTalosCA          = "talos-ca-secret"
	requiredTalosTLS         = "talos-tls-secret"
	requiredAPIServerService = "talos-apiserver-service"

	// Mount paths of the Talos CA and the serving certificate in it.
	talosCAMountPath  = "/etc/talos-ca"
	talosTLSMountPath = "/etc/talos-tls"
)

// talosNodeGroups returns the node groups of spec that boot Talos (os, or
// the platform's defaultWorkerOS), sorted.
func talosNodeGroups(spec *tkv1alpha1.KubernetesClusterSpec, in *cpinput.ControlPlaneInput) []string {
	var out []string
	for _, g := range sortedKeys(spec.NodeGroups) {
		os := spec.NodeGroups[g].OS
		if os == "" {
			os = in.DefaultWorkerOS
		}
		if os == tkv1alpha1.WorkerOSTalos {
			out = append(out, g)
		}
	}
	return out
}

// composeTalos adds to p, for a cluster with Talos node groups, the Talos
// PKI through cert-manager and what the control plane needs to serve it,
// each once what it depends on is observed:
//   - always: a self-signed Issuer N-talos-selfsigned, the Talos machine
//     CA Certificate N-talos-ca (Secret N-talos-ca) and its CA Issuer
//     N-talos-ca-issuer;
//   - once Kamaji's Service N has a cluster IP: the signer's serving
//     Certificate N-talos-tls for N, N.NS, N.NS.svc,
//     N.NS.svc.<clusterDomain> and that IP (Talos workers dial the
//     endpoint, N.NS.svc.<clusterDomain>, and its addresses);
//   - once both Secrets are observed: on kcp, the talos-csr-signer
//     container (port 50001, the Talos CA and serving certificate mounted,
//     the machine token derived from the CA key: talos.DeriveTokens), its
//     volumes talos-ca and talos-tls-cert, the Service port trustd 50001
//     and the certSAN N.NS.svc (the API server's certificate covers
//     N.NS.svc.<clusterDomain>, the workers' endpoint, on every cluster:
//     buildKamajiControlPlane).
func composeTalos(p *function.Plan, r *function.Request, id function.Identity, in *cpinput.ControlPlaneInput, kcp *kamajiv1alpha2.KamajiControlPlane) *field.Error {
	labels := id.Labels()
	secret := func(name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret", Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: proto.String(id.Namespace)}
	}
	p.Require(requiredTalosCA, secret(talos.CASecretName(id)))
	p.Require(requiredTalosTLS, secret(talos.TLSSecretName(id)))
	p.Require(requiredAPIServerService, &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Service",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: id.Name}, Namespace: proto.String(id.Namespace)})

	issuerRef := func(name string) certmanagerv1.IssuerReference {
		return certmanagerv1.IssuerReference{Name: name, Kind: certmanagerv1.IssuerKind, Group: certmanagerv1.GroupVersion.Group}
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: id.Namespace, Labels: labels}
	}
	cert := func(name string, spec certmanagerv1.CertificateSpec) *certmanagerv1.Certificate {
		spec.SecretName = name
		spec.SecretTemplate = &certmanagerv1.CertificateSecretTemplate{Labels: labels}
		spec.PrivateKey = &certmanagerv1.CertificatePrivateKey{Algorithm: certmanagerv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: certmanagerv1.RotationPolicyAlways}
		return &certmanagerv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: certmanagerv1.GroupVersion.String(), Kind: certmanagerv1.CertificateKind},
			ObjectMeta: meta(name), Spec: spec,
		}
	}
	issuer := func(name string, spec certmanagerv1.IssuerSpec) *certmanagerv1.Issuer {
		return &certmanagerv1.Issuer{TypeMeta: metav1.TypeMeta{APIVersion: certmanagerv1.GroupVersion.String(), Kind: certmanagerv1.IssuerKind}, ObjectMeta: meta(name), Spec: spec}
	}
	selfSigned, caIssuer := id.Prefixed("talos-selfsigned"), id.Prefixed("talos-ca-issuer")
	p.Add(nameTalosSelfSignedIssuer, issuer(selfSigned, certmanagerv1.IssuerSpec{SelfSigned: &certmanagerv1.SelfSignedIssuer{}}), readyOnReady)
	p.Add(nameTalosCA, cert(talos.CASecretName(id), certmanagerv1.CertificateSpec{
		CommonName: "talos", IsCA: true, Duration: &metav1.Duration{Duration: 10 * 365 * 24 * time.Hour}, IssuerRef: issuerRef(selfSigned),
		Usages: []certmanagerv1.KeyUsage{certmanagerv1.UsageCertSign, certmanagerv1.UsageCRLSign, certmanagerv1.UsageDigitalSignature},
	}), readyOnReady)
	p.Add(nameTalosCAIssuer, issuer(caIssuer, certmanagerv1.IssuerSpec{CA: &certmanagerv1.CAIssuer{SecretName: talos.CASecretName(id)}}), readyOnReady)

	services, _, err := function.Required[corev1.Service](r, requiredAPIServerService)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", requiredAPIServerService), err)
	}
	if len(services) == 1 && services[0].Spec.ClusterIP != "" && services[0].Spec.ClusterIP != corev1.ClusterIPNone {
		host := id.APIServerServiceHost()
		p.Add(nameTalosTLS, cert(talos.TLSSecretName(id), certmanagerv1.CertificateSpec{
			CommonName: host, DNSNames: []string{id.Name, id.Name + "." + id.Namespace, host, id.APIServerServiceFQDN(in.ClusterDomain)},
			IPAddresses: []string{services[0].Spec.ClusterIP}, IssuerRef: issuerRef(caIssuer),
			Usages: []certmanagerv1.KeyUsage{certmanagerv1.UsageDigitalSignature, certmanagerv1.UsageKeyEncipherment, certmanagerv1.UsageServerAuth},
		}), readyOnReady)
	} else if r.ObservedExists(nameTalosTLS) {
		keepObserved(p, r, nameTalosTLS)
	}

	ca, err := oneSecret(r, requiredTalosCA)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", requiredTalosCA), err)
	}
	tls, err := oneSecret(r, requiredTalosTLS)
	if err != nil {
		return field.InternalError(field.NewPath("requiredResources", requiredTalosTLS), err)
	}
	if ca == nil || tls == nil || len(ca.Data[corev1.TLSPrivateKeyKey]) == 0 {
		return nil
	}
	addTalosSigner(kcp, id, in.TalosCSRSignerImage, talos.DeriveTokens(ca.Data[corev1.TLSPrivateKeyKey]).Machine)
	return nil
}

// oneSecret is the one Secret under key, or nil.
func oneSecret(r *function.Request, key string) (*corev1.Secret, error) {
	items, _, err := function.Required[corev1.Secret](r, key)
	if err != nil || len(items) != 1 {
		return nil, err
	}
	return items[0], nil
}

// addTalosSigner adds the talos-csr-signer container, its volumes, the
// trustd Service port and the workers' endpoint as certSAN to kcp.
func addTalosSigner(kcp *kamajiv1alpha2.KamajiControlPlane, id function.Identity, image, token string) {
	if kcp.Spec.Deployment == nil {
		kcp.Spec.Deployment = &kamajiv1alpha2.DeploymentSpec{}
	}
	d := kcp.Spec.Deployment
	d.ExtraVolumes = append(d.ExtraVolumes,
		corev1.Volume{Name: tkv1alpha1.TalosCAVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: talos.CASecretName(id)}}},
		corev1.Volume{Name: tkv1alpha1.TalosTLSVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: talos.TLSSecretName(id)}}},
	)
	d.ExtraContainers = append(d.ExtraContainers, corev1.Container{
		Name:  tkv1alpha1.TalosSignerContainer,
		Image: image,
		// Flags of talos-csr-signer (github.com/clastix/talos-csr-signer).
		Args: []string{
			fmt.Sprintf("--port=%d", talos.TrustdPort),
			"--ca-cert-path=" + talosCAMountPath + "/" + corev1.TLSCertKey,
			"--ca-key-path=" + talosCAMountPath + "/" + corev1.TLSPrivateKeyKey,
			"--tls-cert-path=" + talosTLSMountPath + "/" + corev1.TLSCertKey,
			"--tls-key-path=" + talosTLSMountPath + "/" + corev1.TLSPrivateKeyKey,
			"--talos-token=" + token,
		},
		Ports: []corev1.ContainerPort{{Name: "trustd", ContainerPort: talos.TrustdPort, Protocol: corev1.ProtocolTCP}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: tkv1alpha1.TalosCAVolume, MountPath: talosCAMountPath, ReadOnly: true},
			{Name: tkv1alpha1.TalosTLSVolume, MountPath: talosTLSMountPath, ReadOnly: true},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: ptrTo(true), AllowPrivilegeEscalation: ptrTo(false), ReadOnlyRootFilesystem: ptrTo(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	})
	if kcp.Spec.Network == nil {
		kcp.Spec.Network = &kamajiv1alpha2.NetworkSpec{}
	}
	n := kcp.Spec.Network
	n.AdditionalServicePorts = append(n.AdditionalServicePorts, kamajiv1alpha2.AdditionalServicePort{
		Name: "trustd", Port: talos.TrustdPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(talos.TrustdPort),
	})
	n.CertSANs = append(n.CertSANs, id.APIServerServiceHost())
}

func ptrTo[T any](v T) *T { return &v }
