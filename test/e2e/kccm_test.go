//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// kccmRefusal is in every denial of deploy/kccm-service-policy.yaml.
const kccmRefusal = "refused to a KubeVirt cloud controller"

// kccmServicePolicy: the platform applies deploy/kccm-service-policy.yaml;
// then, as the demo claim's composed KCCM ServiceAccount (of its
// management namespace, impersonated by the administrator: no tenant
// reaches it), a dry-run create in demoNS of the Service KCCM v0.6.0
// builds for a tenant LoadBalancer Service is admitted, with
// externalTrafficPolicy Local too, and refused, naming the field, with
// the tenant's externalIPs, loadBalancerIP or a load-balancer or
// external-dns annotation copied onto it; the administrator's same
// Service is not matched. The policy is removed at the end.
func (e *env) kccmServicePolicy(t *testing.T) {
	ctx, cancel := ctxT(3 * time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(e.cfg)
	e.must(t, err, "clientset")

	mgmt := fntest.ManagementNamespace(demoNS, demo)
	objs, err := e.composed(ctx, demo)
	e.must(t, err, "composed objects of "+demo)
	sa := ""
	for i := range objs {
		if o := &objs[i]; o.GetKind() == "ServiceAccount" && o.GetNamespace() == mgmt && strings.HasSuffix(o.GetName(), "-kccm") {
			sa = o.GetName()
		}
	}
	if sa == "" {
		fatalf(t, "no KCCM ServiceAccount (<N>-kccm) composed in %s", mgmt)
	}
	user := "system:serviceaccount:" + mgmt + ":" + sa

	// KCCM writes its Services in demoNS by its RoleBinding of
	// tenantkube:kccm there; without it the policy is never reached.
	r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + mgmt, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: demoNS, Verb: "create", Resource: "services"},
	}}, metav1.CreateOptions{})
	e.must(t, err, "SubjectAccessReview")
	if !r.Status.Allowed {
		fatalf(t, "%s may not create Services in %s (%s): the composed RoleBinding of tenantkube:kccm is missing, so KCCM could not work and the policy is not reached", user, demoNS, r.Status.Reason)
	}

	policy, err := decodeFile(e.path("deploy", "kccm-service-policy.yaml"))
	e.must(t, err, "read deploy/kccm-service-policy.yaml")
	for _, o := range policy {
		e.must(t, apply(ctx, e.c, o), "apply "+describe(o))
	}
	var names []string
	t.Cleanup(func() {
		ctx, cancel := ctxT(30 * time.Second)
		defer cancel()
		for _, o := range policy {
			if err := e.c.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
				errorf(t, "delete %s: %v", describe(o), err)
			}
		}
		// Every create is a dry run; anything the API server kept anyway goes.
		for _, n := range names {
			if err := cs.CoreV1().Services(demoNS).Delete(ctx, n, metav1.DeleteOptions{}); err == nil {
				errorf(t, "Service %s/%s existed after dry runs only", demoNS, n)
			} else if !kerrors.IsNotFound(err) {
				errorf(t, "delete Service %s/%s: %v", demoNS, n, err)
			}
		}
	})

	imp := rest.CopyConfig(e.cfg)
	imp.Impersonate = rest.ImpersonationConfig{UserName: user}
	kccm, err := kubernetes.NewForConfig(imp)
	e.must(t, err, "clientset impersonating "+user)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	// service is the Service KCCM v0.6.0 creates for a tenant Service web
	// of namespace shop in the default loadBalancerMode, Selectorless, so
	// without a selector (cloud-provider-kubevirt v0.6.0
	// pkg/provider/loadbalancer.go:196-226; the name is "a" and the
	// tenant Service's UID without dashes, 32 bytes at most), with change
	// applied as if the tenant had written it.
	service := func(change func(*corev1.Service)) *corev1.Service {
		name := fmt.Sprintf("a%031x", len(names)+1)
		names = append(names, name)
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demoNS, Labels: map[string]string{
				"cluster.x-k8s.io/tenant-service-name": "web", "cluster.x-k8s.io/tenant-service-namespace": "shop",
				"cluster.x-k8s.io/cluster-name": demo, labelCluster: demo,
			}},
			Spec: corev1.ServiceSpec{
				Type:                  corev1.ServiceTypeLoadBalancer,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
				Ports:                 []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(31080)}},
			},
		}
		if change != nil {
			change(s)
		}
		return s
	}
	externalIPs := func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"10.96.0.1"} }
	annotation := func(k, v string) func(*corev1.Service) {
		return func(s *corev1.Service) { s.Annotations = map[string]string{k: v} }
	}

	// The API server loads a new policy within seconds.
	waitFor(t, time.Minute, "the KCCM Service policy to refuse externalIPs", func(ctx context.Context) (bool, string, error) {
		_, err := kccm.CoreV1().Services(demoNS).Create(ctx, service(externalIPs), dryRun)
		return err != nil && strings.Contains(err.Error(), kccmRefusal), fmt.Sprintf("%v", err), nil
	})
	for _, c := range []struct {
		name    string
		change  func(*corev1.Service)
		refusal string
	}{
		{"plain", nil, ""},
		{"externalTrafficPolicy Local", func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, ""},
		{"Helm's release name", annotation("meta.helm.sh/release-name", "ingress-nginx"), ""},
		{"externalIPs", externalIPs, "spec.externalIPs 10.96.0.1"},
		{"loadBalancerIP", func(s *corev1.Service) { s.Spec.LoadBalancerIP = "203.0.113.10" }, "spec.loadBalancerIP 203.0.113.10"},
		{"MetalLB shared address", annotation("metallb.universe.tf/allow-shared-ip", "platform-ingress"), "annotations metallb.universe.tf/allow-shared-ip"},
		{"external-dns name", annotation("external-dns.alpha.kubernetes.io/hostname", "api.k8s.example.net"), "annotations external-dns.alpha.kubernetes.io/hostname"},
	} {
		_, err := kccm.CoreV1().Services(demoNS).Create(ctx, service(c.change), dryRun)
		switch {
		case c.refusal == "" && err != nil:
			errorf(t, "%s creates the %s Service (dry run): %v", user, c.name, err)
		case c.refusal != "" && (err == nil || !strings.Contains(err.Error(), c.refusal) || !strings.Contains(err.Error(), kccmRefusal)):
			errorf(t, "%s creates the Service with %s (dry run): %v; want refused naming %q", user, c.name, err, c.refusal)
		}
	}
	// Bound to KCCM's identity: the administrator's same Service passes.
	_, err = cs.CoreV1().Services(demoNS).Create(ctx, service(func(s *corev1.Service) {
		externalIPs(s)
		annotation("metallb.universe.tf/allow-shared-ip", "platform-ingress")(s)
	}), dryRun)
	if err != nil {
		errorf(t, "the administrator's Service with externalIPs and a MetalLB annotation (dry run): %v; the policy matches KCCM only", err)
	}
}
