package v1alpha1

// MaxHibernationSchedules bounds spec.hibernation.schedules (the XRD's
// maxItems): each schedule costs a few cron evaluations per reconcile.
const MaxHibernationSchedules = 8

// Bounds of a schedule's start and end, and of its timeZone (the XRD's
// maxLength).
const (
	MaxCronLength     = 100
	MaxTimeZoneLength = 64
)

// Hibernation puts the cluster to sleep: every node group at zero
// machines, then the control plane at zero replicas and the add-on
// releases suspended; etcd and every volume are kept, and waking brings
// back the same cluster (docs/tenant-guide.md, Hibernation).
type Hibernation struct {
	// Sleep now, whatever the schedules say.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Sleep between each start and the end that follows it; the cluster
	// sleeps while any schedule says so. At most 8.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Schedules []HibernationSchedule `json:"schedules,omitempty"`
}

// HibernationSchedule is one sleep schedule: two 5-field cron expressions
// (minute hour day-of-month month day-of-week) read in timeZone. A start
// and an end at the same instant cancel: the cluster stays awake.
type HibernationSchedule struct {
	// When the cluster goes to sleep, such as "0 20 * * 1-5".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Start string `json:"start"`
	// When the cluster wakes, such as "0 7 * * 1-5".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	End string `json:"end"`
	// IANA time zone of start and end, such as Europe/Berlin; daylight
	// saving time follows the zone.
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// HibernationState is where a cluster is between awake and asleep.
// +kubebuilder:validation:Enum=Awake;Hibernating;Hibernated;Waking
type HibernationState string

// Hibernation states, in the order a sleep goes through them.
const (
	// HibernationAwake: running as its spec says.
	HibernationAwake HibernationState = "Awake"
	// HibernationHibernating: asleep by spec; node groups scale to zero
	// while the control plane stays up to drain and remove their nodes.
	HibernationHibernating HibernationState = "Hibernating"
	// HibernationHibernated: no Machine is left and the control plane is
	// at zero replicas.
	HibernationHibernated HibernationState = "Hibernated"
	// HibernationWaking: awake by spec; the control plane comes back,
	// then the node groups to their minimum, then the add-ons.
	HibernationWaking HibernationState = "Waking"
)

// HibernationStatus is the cluster's sleep and its next transition.
type HibernationStatus struct {
	// State of the cluster.
	State HibernationState `json:"state"`
	// NextTransition is when the schedules next change between asleep
	// and awake (RFC 3339, UTC); absent when they never do (no schedule,
	// or enabled).
	// +optional
	NextTransition string `json:"nextTransition,omitempty"`
}
