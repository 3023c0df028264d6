package v1alpha1

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkv1alpha1 "github.com/tenantkube/tenantkube/apis/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// Validate checks defaulted settings and returns every problem found, each
// a *field.Error naming the field under "input" (e.g.
// "input.cpuAllocationRatio"); within one object (etcd.backup, a chart
// source, controllers, monitoring, healthCheckFloors) only its first. The
// OIDC issuer is checked by the control-plane function, which builds the
// tenant API servers' authentication configuration from it.
func (s *Settings) Validate() field.ErrorList {
	p := field.NewPath("input")
	var errs field.ErrorList
	add := func(err error) { errs = appendError(errs, p, err) }
	for _, c := range []struct{ name, cidr string }{{"podCIDR", s.PodCIDR}, {"serviceCIDR", s.ServiceCIDR}} {
		if _, _, err := net.ParseCIDR(c.cidr); err != nil {
			add(field.Invalid(p.Child(c.name), c.cidr, "must be a CIDR such as 10.95.0.0/16"))
		} else if c.name == "serviceCIDR" {
			if _, err := TenthAddress(c.cidr); err != nil {
				add(field.Invalid(p.Child(c.name), c.cidr, err.Error()))
			}
		}
	}
	if s.CPUAllocationRatio < 1 {
		add(field.Invalid(p.Child("cpuAllocationRatio"), s.CPUAllocationRatio, "must be at least 1"))
	}
	if !slices.Contains(tkv1alpha1.WorkerOSes, s.DefaultWorkerOS) {
		add(field.NotSupported(p.Child("defaultWorkerOS"), s.DefaultWorkerOS, tkv1alpha1.WorkerOSes))
	}
	if img := s.TalosCSRSignerImage; len(img) > tkv1alpha1.MaxImageLength || strings.ContainsAny(img, " \t\n") {
		add(field.Invalid(p.Child("talosCsrSignerImage"), img, "must be an image reference"))
	}
	switch s.DeletionOrder {
	case DeletionOrderUsages, DeletionOrderNone:
	default:
		add(field.NotSupported(p.Child("deletionOrder"), s.DeletionOrder, []string{string(DeletionOrderUsages), string(DeletionOrderNone)}))
	}
	add(s.Etcd.validate(p.Child("etcd")))
	if err := function.ValidateClusterDomain(p.Child("clusterDomain"), s.ClusterDomain); err != nil {
		add(err)
	}
	if err := s.HostSettings().Validate(p); err != nil {
		add(err)
	}
	if s.DataStoreName != "" {
		// A DNS label: dotted names are the dedicated DataStores'.
		if msgs := validation.IsDNS1123Label(s.DataStoreName); len(msgs) > 0 {
			add(field.Invalid(p.Child("dataStoreName"), s.DataStoreName, msgs[0]))
		}
	}
	errs = append(errs, s.validateWorkers(p)...)
	errs = append(errs, s.validateAddons(p)...)
	errs = append(errs, s.Encryption.validate(p.Child("encryption"))...)
	errs = append(errs, s.validateMaintenance(p)...)
	return errs
}

// etcdVersionPattern is spec.version's pattern in the
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster CRD.
var etcdVersionPattern = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// validate checks etcd at p: a known operator, a version, the backups and
// at least one member. It returns the first problem.
func (e *Etcd) validate(p *field.Path) error {
	switch e.Operator {
	case EtcdOperatorAenix, EtcdOperatorCozystack:
	default:
		return field.NotSupported(p.Child("operator"), e.Operator, []string{string(EtcdOperatorAenix), string(EtcdOperatorCozystack)})
	}
	if !etcdVersionPattern.MatchString(e.Version) {
		return field.Invalid(p.Child("version"), e.Version, "must be an etcd version MAJOR.MINOR.PATCH without \"v\", such as 3.6.11")
	}
	if err := e.validateBackup(p.Child("backup")); err != nil {
		return err
	}
	if e.Replicas < 1 {
		return field.Invalid(p.Child("replicas"), e.Replicas, "must be at least 1")
	}
	return nil
}

// validateBackup checks etcd.backup at p: one destination, backups only
// on the operator that takes them, the key objects named, the bounds in
// order.
func (e *Etcd) validateBackup(p *field.Path) error {
	b := &e.Backup
	if !b.Enabled() {
		return nil
	}
	switch {
	case b.S3 != nil && b.PVC != nil:
		return field.Invalid(p.Child("pvc"), b.PVC.ClaimName, "set either s3 or pvc, not both")
	case e.Operator != EtcdOperatorCozystack:
		return field.Invalid(p, "s3/pvc", fmt.Sprintf("backups need etcd.operator %s (EtcdSnapshot); the operator is %s", EtcdOperatorCozystack, e.Operator))
	case b.S3 != nil && (b.S3.Endpoint == "" || b.S3.Bucket == "" || b.S3.CredentialsSecretName == ""):
		return field.Required(p.Child("s3"), "endpoint, bucket and credentialsSecretName")
	case b.PVC != nil && b.PVC.ClaimName == "":
		return field.Required(p.Child("pvc", "claimName"), "the PersistentVolumeClaim of each tenant namespace")
	case b.PKINamespace == "" || b.RecipientConfigMap == "":
		return field.Required(p.Child("recipientConfigMap"), "backups encrypt the PKI they carry to the age public key of ConfigMap pkiNamespace/recipientConfigMap")
	case b.Retention < 1 || b.Retention > MaxBackupRetention:
		return field.Invalid(p.Child("retention"), b.Retention, fmt.Sprintf("must be from 1 to %d", MaxBackupRetention))
	case b.MaxDeletedClusterBackups < 1 || b.MaxDeletedClusterBackups > MaxMaxDeletedClusterBackups:
		return field.Invalid(p.Child("maxDeletedClusterBackups"), b.MaxDeletedClusterBackups, fmt.Sprintf("must be from 1 to %d", MaxMaxDeletedClusterBackups))
	}
	if msgs := validation.IsDNS1123Label(b.PKINamespace); len(msgs) > 0 {
		return field.Invalid(p.Child("pkiNamespace"), b.PKINamespace, msgs[0])
	}
	if _, err := b.MinInterval.Parse(p.Child("minInterval"), tkv1alpha1.MinBackupInterval, tkv1alpha1.MaxBackupInterval); err != nil {
		return err
	}
	if _, err := b.Interval.Parse(p.Child("interval"), b.MinInterval, tkv1alpha1.MaxBackupInterval); err != nil {
		return err
	}
	return nil
}

// validateWorkers checks the worker settings under p.
func (s *Settings) validateWorkers(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(err error) { errs = appendError(errs, p, err) }
	if m := s.MinPodCPURequest; m.Cmp(resource.MustParse("1m")) < 0 || m.Cmp(resource.MustParse("256")) > 0 {
		add(field.Invalid(p.Child("minPodCpuRequest"), m.String(), "must be at least 1m and at most 256 (cores)"))
	}
	if s.MaxNodeGroups < 1 {
		add(field.Invalid(p.Child("maxNodeGroups"), s.MaxNodeGroups, "must be at least 1"))
	}
	keys := make([]string, 0, len(s.ContainerDiskImages))
	for k := range s.ContainerDiskImages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s.ContainerDiskImages[k] == "" {
			add(field.Required(p.Child("containerDiskImages").Key(k), "must name an image"))
		}
	}
	if s.MaxCleanupObjects < 1 {
		add(field.Invalid(p.Child("maxCleanupObjects"), s.MaxCleanupObjects, "must be at least 1"))
	}
	for i, k := range s.CleanupKinds {
		if k.APIVersion == "" {
			add(field.Required(p.Child("cleanupKinds").Index(i).Child("apiVersion"), "must name the kind's group/version"))
		}
		if k.Kind == "" {
			add(field.Required(p.Child("cleanupKinds").Index(i).Child("kind"), "must name a kind"))
		}
	}
	if s.MaxReplicas < 1 || s.MaxReplicas > 5000 {
		add(field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be between 1 and 5000"))
	}
	fp := p.Child("healthCheckFloors")
	for _, f := range []struct {
		name string
		v    string
		lo   tkv1alpha1.Duration
	}{
		{"nodeStartupTimeout", s.HealthCheckFloors.NodeStartupTimeout, tkv1alpha1.MinNodeStartupTimeout},
		{"readyUnknownTimeout", s.HealthCheckFloors.ReadyUnknownTimeout, tkv1alpha1.MinTimeout},
		{"readyFalseTimeout", s.HealthCheckFloors.ReadyFalseTimeout, tkv1alpha1.MinTimeout},
		{"maxNodeProvisionTime", s.HealthCheckFloors.MaxNodeProvisionTime, tkv1alpha1.MinTimeout},
	} {
		if _, err := tkv1alpha1.Duration(f.v).Parse(fp.Child(f.name), f.lo, tkv1alpha1.MaxTimeout); err != nil {
			add(err)
		}
	}
	for i, r := range s.AllowedImageRegistries {
		if r == "" || strings.HasPrefix(r, "/") || strings.HasSuffix(r, "/") || strings.Contains(r, "://") {
			add(field.Invalid(p.Child("allowedImageRegistries").Index(i), r, "must be a registry host, optionally followed by /<repository prefix>"))
		}
	}
	if err := storageclass.ValidateRemote(p.Child("remoteStorageClasses"), s.RemoteStorageClasses); err != nil {
		add(err)
	}
	if err := s.Controllers.validate(p.Child("controllers")); err != nil {
		add(err)
	}
	if err := validateCloudControllerImage(p, s.Images.CloudControllerManager, s.Controllers.LoadBalancerMode); err != nil {
		add(err)
	}
	if s.RegistryMirror != nil && s.RegistryMirror.SecretName == "" {
		add(field.Required(p.Child("registryMirror", "secretName"), "must name a Secret"))
	}
	tp := p.Child("talos")
	if u, err := url.Parse(s.Talos.ImageFactoryURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.ContainsAny(s.Talos.ImageFactoryURL, " \t\n") {
		add(field.Invalid(tp.Child("imageFactoryURL"), s.Talos.ImageFactoryURL, "must be an http:// or https:// URL without user, query or fragment"))
	}
	if repo := strings.TrimRight(s.Talos.InstallerRepository, "/"); !installerRepositoryPattern.MatchString(repo) {
		add(field.Invalid(tp.Child("installerRepository"), s.Talos.InstallerRepository, "must be an image repository such as factory.talos.dev/installer"))
	}
	return errs
}

// validateAddons checks the add-on settings under p: the ingress class, a
// releaseRetryInterval within [10s, 1h], the values bound, the monitoring
// destinations, each chart source (a known kind, a managed url of the
// kind's scheme, a referenced source's name, a HelmRepository's chart, a
// known values layout, a Wrapped layout's wrapper key) and two managed
// HelmRepository sources sharing a repository name with different urls.
func (s *Settings) validateAddons(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(err error) { errs = appendError(errs, p, err) }
	if s.IngressClassName == "" {
		errs = append(errs, field.Required(p.Child("ingressClassName"), ""))
	}
	if s.MaxValuesOverrideBytes < 1 {
		errs = append(errs, field.Invalid(p.Child("maxValuesOverrideBytes"), s.MaxValuesOverrideBytes, "must be at least 1"))
	}
	if r := s.ReleaseRetryInterval; r != nil && (r.Duration < MinReleaseRetryInterval || r.Duration > MaxReleaseRetryInterval) {
		errs = append(errs, field.Invalid(p.Child("releaseRetryInterval"), r.Duration.String(),
			fmt.Sprintf("must be between %s and %s", MinReleaseRetryInterval, MaxReleaseRetryInterval)))
	}
	if err := s.Monitoring.validate(p.Child("monitoring")); err != nil {
		add(err)
	}
	repoURLs := map[string]string{}
	for _, release := range Releases() {
		src, key := s.Charts.Source(release)
		cp := p.Child("charts", key)
		if err := src.validate(cp); err != nil {
			add(err)
			continue
		}
		if verrs := src.validateVersions(cp); len(verrs) > 0 {
			errs = append(errs, verrs...)
			continue
		}
		if src.Kind == KindHelmRepository && src.URL != "" {
			if prev, ok := repoURLs[src.Repository]; ok && prev != src.URL {
				errs = append(errs, field.Invalid(cp.Child("url"), src.URL,
					fmt.Sprintf("repository %q is already used with url %q; one managed HelmRepository per repository name", src.Repository, prev)))
				continue
			}
			repoURLs[src.Repository] = src.URL
		}
	}
	return errs
}

// appendError appends err, a *field.Error (or any error, as an internal
// error at p), to errs; a nil err appends nothing.
func appendError(errs field.ErrorList, p *field.Path, err error) field.ErrorList {
	var fe *field.Error
	switch {
	case err == nil:
		return errs
	case errors.As(err, &fe):
		if fe == nil {
			return errs
		}
		return append(errs, fe)
	}
	return append(errs, field.InternalError(p, err))
}
