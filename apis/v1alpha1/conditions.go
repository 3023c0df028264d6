package v1alpha1

// Condition types the functions set on the XR and its claim, and their
// reasons (docs/architecture.md; the reasons are part of the API: alerts and
// scripts match on them).
const (
	// ConditionControlPlaneReady reports the tenant control plane
	// (function control-plane).
	ConditionControlPlaneReady = "ControlPlaneReady"
	// ConditionWorkersReady reports the node groups (function workers).
	ConditionWorkersReady = "WorkersReady"
	// ConditionAddonsReady reports the add-on HelmReleases (function addons).
	ConditionAddonsReady = "AddonsReady"
)

// Reasons of ControlPlaneReady.
const (
	// ReasonControlPlaneAvailable: the KamajiControlPlane reports ready.
	ReasonControlPlaneAvailable = "Available"
	// ReasonWaitingForControlPlane: the KamajiControlPlane is not ready yet.
	ReasonWaitingForControlPlane = "WaitingForControlPlane"
	// ReasonWaitingForEtcd: the dedicated etcd cluster is not ready yet.
	ReasonWaitingForEtcd = "WaitingForEtcd"
	// ReasonWaitingForDataStore: the Kamaji DataStore is not ready yet.
	ReasonWaitingForDataStore = "WaitingForDataStore"
	// ReasonWaitingForTenantDataStore: a namespaced cluster (TenantCluster)
	// waits for its tenant's DataStore, which it does not compose (a
	// namespaced XR composes nothing cluster-scoped); no control plane is
	// composed until it exists. Also a reason of WorkersReady and
	// AddonsReady then: without a KamajiControlPlane the workers and
	// addons steps compose nothing new and keep what they composed.
	ReasonWaitingForTenantDataStore = "WaitingForTenantDataStore"
)

// Reasons of WorkersReady, and of the workers function's warnings.
const (
	// ReasonNodeGroupsReady: every node group has at least its minimum
	// of ready nodes.
	ReasonNodeGroupsReady = "NodeGroupsReady"
	// ReasonWaitingForNodes: some node group is below its minimum of
	// ready nodes.
	ReasonWaitingForNodes = "WaitingForNodes"
	// ReasonInstanceTypePending: an instance type has not been fetched
	// yet; the node group's observed objects are kept unchanged.
	ReasonInstanceTypePending = "InstanceTypePending"
	// ReasonWaitingForTalosPKI: a Talos node group waits for the Talos CA
	// Secret N-talos-ca (cert-manager) and Kamaji's CA Secret N-ca, from
	// which its machine configuration is computed.
	ReasonWaitingForTalosPKI = "WaitingForTalosPKI"
	// ReasonInstanceTypeNotFound: a node group names an instance type
	// that does not exist (Fatal).
	ReasonInstanceTypeNotFound = "InstanceTypeNotFound"
	// ReasonInvalidSpec: the spec breaks a rule (Fatal).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonGPUOperatorDisabled (warning): a node group attaches GPUs
	// while the GPU operator add-on is off.
	ReasonGPUOperatorDisabled = "GPUOperatorDisabled"
	// ReasonRemediationNeverAllowed (warning): a node group's
	// maxUnhealthy percentage rounds down to no machine even at its
	// maxReplicas, so its MachineHealthCheck never remediates.
	ReasonRemediationNeverAllowed = "RemediationNeverAllowed"
)

// ConditionCapacityFits reports the capacity pre-flight of the node
// groups against the ResourceQuotas of the claim's namespace (function
// workers, docs/tenant-guide.md, Capacity). It is set only when a quota of
// the namespace applies to the node groups' VMs.
const ConditionCapacityFits = "CapacityFits"

// Reasons of CapacityFits, and of its warnings and Fatal results.
const (
	// ReasonQuotaFits: every node group fits the quotas at maxReplicas.
	ReasonQuotaFits = "QuotaFits"
	// ReasonNoResourceQuota: no quota of the namespace applies any more
	// (set only to replace a CapacityFits condition an earlier quota left).
	ReasonNoResourceQuota = "NoResourceQuota"
	// ReasonMaximumExceedsQuota (warning): the node groups at maxReplicas
	// need more than a quota leaves the cluster; the autoscaler stops at
	// that limit.
	ReasonMaximumExceedsQuota = "MaximumExceedsQuota"
	// ReasonMinimumExceedsQuota: the node groups at minReplicas need more
	// than a quota leaves the cluster: Fatal while no MachineDeployment of
	// the cluster exists (it is not created), a warning afterwards
	// (nothing running is touched).
	ReasonMinimumExceedsQuota = "MinimumExceedsQuota"
)

// Reasons of AddonsReady.
const (
	// ReasonAllAddonsReady: every release of an enabled add-on is Ready.
	ReasonAllAddonsReady = "AllAddonsReady"
	// ReasonHelmReleaseFailed: a release reports Ready=False; the message
	// names each failed release first ("<release>: <message>"), then
	// those still pending.
	ReasonHelmReleaseFailed = "HelmReleaseFailed"
	// ReasonWaitingForHelmRelease: no release failed but some are not
	// Ready yet.
	ReasonWaitingForHelmRelease = "WaitingForHelmRelease"
)

// ReasonKubeconfigRefused (warning, control-plane, claim API): the
// kubeconfig Secret N-admin-kubeconfig in NS is missing a key or holds
// something other than the certificate authority, client certificate and
// key Kamaji writes; the controllers keep the kubeconfig last rebuilt
// from it.
const ReasonKubeconfigRefused = "KubeconfigRefused"

// ReasonTooManyObjectsToCleanUp (warning, every function): more leftover
// objects carry the cluster's label than one response may compose for
// deletion.
const ReasonTooManyObjectsToCleanUp = "TooManyObjectsToCleanUp"

// ConditionDataStoreReady reports a Tenant's etcd and DataStore (function
// control-plane); its reasons are ReasonDataStoreAvailable,
// ReasonWaitingForEtcd and ReasonWaitingForDataStore.
const ConditionDataStoreReady = "DataStoreReady"

// ReasonDataStoreAvailable: the Tenant's EtcdCluster and DataStore report
// ready.
const ReasonDataStoreAvailable = "Available"

// ConditionBackupCurrent reports the scheduled etcd backups (function
// control-plane), set only where the platform configures backups: False
// when the last successful backup is older than twice the interval (or,
// before the first, the cluster is), which a platform alerts on.
const ConditionBackupCurrent = "BackupCurrent"

// Reasons of BackupCurrent.
const (
	// ReasonBackupSucceeded: the last successful backup is at most twice
	// the interval old.
	ReasonBackupSucceeded = "BackupSucceeded"
	// ReasonAwaitingFirstBackup: no backup has succeeded yet and the
	// cluster is younger than twice the interval.
	ReasonAwaitingFirstBackup = "AwaitingFirstBackup"
	// ReasonBackupOverdue: the last successful backup (or, with none, the
	// cluster) is older than twice the interval.
	ReasonBackupOverdue = "BackupOverdue"
	// ReasonNothingToBackUp: no cluster keeps its state in the etcd (a
	// Tenant serving no TenantCluster).
	ReasonNothingToBackUp = "NothingToBackUp"
	// ReasonPKISecretTooLarge: a cluster's backup is not taken, a PKI
	// Secret it would carry being larger than a PKI Secret may be.
	ReasonPKISecretTooLarge = "PKISecretTooLarge"
	// ReasonBackupCredentialsNotScoped: no backup is taken, the
	// namespace's S3 credentials Secret (etcd.backup.s3.credentialsSecretName)
	// being missing, or not marked by the platform as scoped to the
	// namespace (LabelBackupCredentialsFor), or without the keys the
	// operator reads. Backups taken before are kept.
	ReasonBackupCredentialsNotScoped = "BackupCredentialsNotScoped"
	// ReasonTooManyDeletedClusterBackups: a cluster with no backup yet
	// takes none, its namespace holding at least
	// etcd.backup.maxDeletedClusterBackups backups of deleted clusters.
	ReasonTooManyDeletedClusterBackups = "TooManyDeletedClusterBackups"
)

// LabelBackupCredentialsFor marks the S3 credentials Secret of namespace
// NS (etcd.backup.s3.credentialsSecretName, in NS) as the platform's
// statement that it is scoped to NS: its value is NS, and the credentials
// write and read only <keyPrefix>/<NS>/ of the bucket. Tenants can read
// the Secret; a Secret without the label, or labelled for another
// namespace, takes no backup (ReasonBackupCredentialsNotScoped).
const LabelBackupCredentialsFor = "tenantkube.io/backup-credentials-for"

// ConditionDataStoreShared is True on a cluster whose control plane
// keeps its state in the platform's shared Kamaji DataStore
// (dataStoreName) rather than in a dedicated etcd: other tenants' clusters
// share that etcd and its space quota, so one filling it makes every
// cluster on it read-only. It is set only on such clusters.
const ConditionDataStoreShared = "DataStoreShared"

// ReasonSharedDataStore is the reason of ConditionDataStoreShared.
const ReasonSharedDataStore = "SharedDataStore"

// ReasonRestoringPKI is a reason of ControlPlaneReady: the cluster
// restores a backup and its PKI Secrets are not observed yet, so no
// control plane is composed (Kamaji would otherwise issue a new CA).
const ReasonRestoringPKI = "RestoringPKI"

// ConditionHibernated reports the cluster's sleep (function
// control-plane, docs/tenant-guide.md, Hibernation): True once no Machine
// is left and the control plane is at zero replicas; set on every cluster.
const ConditionHibernated = "Hibernated"

// ConditionWaking is True while a cluster wakes: the control plane comes
// back, then the node groups to their minimum, then the add-ons (function
// control-plane).
const ConditionWaking = "Waking"

// Reasons of Hibernated and Waking.
const (
	// ReasonAwake: the cluster runs as its spec says (both False).
	ReasonAwake = "Awake"
	// ReasonScalingDownWorkers (Hibernated False): asleep by spec; the
	// node groups scale to zero and the control plane stays up until no
	// Machine is left.
	ReasonScalingDownWorkers = "ScalingDownWorkers"
	// ReasonControlPlaneAsleep (Hibernated True): no Machine is left and
	// the control plane is at zero replicas; etcd and volumes are kept.
	ReasonControlPlaneAsleep = "ControlPlaneAsleep"
	// ReasonWaitingForControlPlaneWake (Waking True): the control plane
	// is back at its replicas and not ready yet; the node groups stay at
	// zero.
	ReasonWaitingForControlPlaneWake = "WaitingForControlPlane"
	// ReasonWaitingForWorkersWake (Waking True): the control plane is
	// ready; the node groups scale to their minimum, add-ons stay
	// suspended until they have.
	ReasonWaitingForWorkersWake = "WaitingForWorkers"
	// ReasonSleeping (Waking False): asleep by spec.
	ReasonSleeping = "Sleeping"
	// ReasonWakeExceedsQuota (warning of the workers function): the node
	// groups at minReplicas need more than a quota leaves the cluster, so
	// waking would not bring them back.
	ReasonWakeExceedsQuota = "WakeExceedsQuota"
)

// ConditionSecretsEncrypted reports the encryption at rest of the
// cluster's Secrets (function control-plane, docs/tenant-guide.md,
// Secrets encrypted at rest), set where the platform encrypts them.
const ConditionSecretsEncrypted = "SecretsEncrypted"

// Reasons of SecretsEncrypted.
const (
	// ReasonEncrypted (True): every API server writes with the cluster's
	// key; no rotation is under way.
	ReasonEncrypted = "Encrypted"
	// ReasonRotatingKey (False while the cluster writes in clear, else
	// True): a rotation is under way; status.encryption.phase says which
	// phase.
	ReasonRotatingKey = "RotatingKey"
	// ReasonRewritingResources (True, or False while the cluster writes in
	// clear): the settings' resources changed; a Job writes the objects of
	// the resources added or removed again (status.encryption.rewrite).
	ReasonRewritingResources = "RewritingResources"
	// ReasonWaitingForRootKey (False): the platform's root key Secret has
	// not arrived; nothing is changed until it does.
	ReasonWaitingForRootKey = "WaitingForRootKey"
)

// ConditionMaintenancePending reports the platform's changes that wait
// for the cluster's maintenance window (functions control-plane and
// workers; status.maintenance lists them).
const ConditionMaintenancePending = "MaintenancePending"

// Reasons of MaintenancePending.
const (
	// ReasonWaitingForWindow: changes wait for the window
	// (status.maintenance.nextWindowStart).
	ReasonWaitingForWindow = "WaitingForWindow"
	// ReasonWaitingForRollSlot: the window is open but the platform's
	// limit of clusters rolling at once (maintenance.maxConcurrentRolls)
	// is reached.
	ReasonWaitingForRollSlot = "WaitingForRollSlot"
	// ReasonRollsStopped: a roll failed (a node group not up to date
	// within the platform's deadline); the platform's changes wait until
	// the platform acts (maintenance.rollNow).
	ReasonRollsStopped = "RollsStopped"
	// ReasonWaitingForWake: the cluster is not Awake (status.hibernation);
	// the platform's changes start no roll until it is.
	ReasonWaitingForWake = "WaitingForWake"
	// ReasonNothingPending: nothing waits (set False).
	ReasonNothingPending = "NothingPending"
)
