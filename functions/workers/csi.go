package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
	"github.com/tenantkube/tenantkube/internal/storageclass"
)

// csiComponent is the component name of the KubeVirt CSI controller:
// Deployment N-kcsi-controller.
const csiComponent = function.CSIControllerComponent

// CSI socket shared by the driver and its sidecars.
const (
	csiSocketDir  = "/csi"
	csiSocketPath = csiSocketDir + "/csi.sock"
)

// buildCSIController returns the KubeVirt CSI driver's controller for the
// tenant cluster: the driver in controller mode, creating
// DataVolumes and VolumeSnapshots in NS labelled with the cluster (labels
// tenantkube.io/cluster and cluster.x-k8s.io/cluster-name, the seed
// chart's) and hot-plugging them into the tenant's VMs through its
// ServiceAccount, plus the external provisioner, attacher, resizer,
// snapshotter and liveness-probe sidecars and the snapshot controller, which
// talk to the tenant cluster through its kubeconfig (only the driver holds a
// management-cluster token). Its permissions in NS (VolumeSnapshots
// included) are the ClusterRole tenantkube:kcsi-controller
// (deploy/crossplane-rbac.yaml); outside NS it may only get PersistentVolumes
// (csiPersistentVolumesClusterRole). The driver creates volumes only of the
// platform's remote StorageClasses (storageclass.Enforcement), whatever
// class a StorageClass in the tenant cluster names. It runs at the input's
// priority class.
func buildCSIController(id function.Identity, in *v1alpha1.WorkersInput, waitImage string) controller {
	sock := corev1.VolumeMount{Name: "socket-dir", MountPath: csiSocketDir}
	rate := csiRateLimitArgs(in.Controllers)
	sidecar := func(name, image string, extra ...string) corev1.Container {
		return corev1.Container{
			Name:         name,
			Image:        image,
			Args:         append(append([]string{"--csi-address=" + csiSocketPath, "--kubeconfig=" + tenantKubeconfigPath, "--v=2"}, extra...), rate...),
			VolumeMounts: []corev1.VolumeMount{sock, kubeconfigMount()},
		}
	}
	driver := corev1.Container{
		Name:  csiDriverContainer,
		Image: in.Images.CSIDriver,
		Args: []string{
			"--endpoint=unix://" + csiSocketPath,
			"--infra-cluster-namespace=" + id.Namespace,
			"--infra-cluster-labels=" + csiInfraLabels(id),
			"--tenant-cluster-kubeconfig=" + tenantKubeconfigPath,
			"--run-node-service=false",
			"--run-controller-service=true",
			"--v=2",
		},
		Env: []corev1.EnvVar{
			{Name: "KUBE_NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: storageclass.EnforcementEnv, Value: storageclass.Enforcement(in.RemoteStorageClasses)},
		},
		VolumeMounts: []corev1.VolumeMount{sock, kubeconfigMount()},
	}
	liveness := corev1.Container{
		Name:         "csi-liveness-probe",
		Image:        in.Images.CSILivenessProbe,
		Args:         []string{"--csi-address=" + csiSocketPath, "--probe-timeout=3s"},
		VolumeMounts: []corev1.VolumeMount{sock},
	}
	snapshotController := corev1.Container{
		Name:         "snapshot-controller",
		Image:        in.Images.SnapshotController,
		Args:         append([]string{"--kubeconfig=" + tenantKubeconfigPath, "--worker-threads=10", "--v=2"}, rate...),
		VolumeMounts: []corev1.VolumeMount{kubeconfigMount()},
	}
	if in.Controllers.CSIDriverKubeAPIFlags {
		driver.Args = append(driver.Args, rate...)
	}
	containers := []corev1.Container{
		driver,
		sidecar("csi-provisioner", in.Images.CSIProvisioner, "--timeout=3m", "--retry-interval-max=1m", "--default-fstype=ext4"),
		sidecar("csi-attacher", in.Images.CSIAttacher, "--timeout=3m", "--retry-interval-max=1m"),
		sidecar("csi-resizer", in.Images.CSIResizer, "--timeout=3m", "--handle-volume-inuse-error=false"),
		sidecar("csi-snapshotter", in.Images.CSISnapshotter, "--timeout=1m", "--worker-threads=10"),
		snapshotController,
		liveness,
	}
	vol := corev1.Volume{Name: "socket-dir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	return newController(id, in, waitImage, controllerSpec{
		component:  csiComponent,
		containers: containers, volumes: []corev1.Volume{vol},
		managementAPI: []string{csiDriverContainer}, priorityClass: in.Controllers.CSIPriorityClassName,
		clusterRole: csiPersistentVolumesClusterRole,
	})
}

// csiDriverContainer is the CSI controller's driver container, the only
// one that talks to the management API.
const csiDriverContainer = "csi-driver"

// csiInfraLabels is the driver's --infra-cluster-labels: the labels of
// every DataVolume and VolumeSnapshot it creates in NS, "k=v,k=v":
// tenantkube.io/cluster=N (the workers function composes what carries it
// for deletion with the cluster) and cluster.x-k8s.io/cluster-name=N (the
// seed chart's).
func csiInfraLabels(id function.Identity) string {
	return function.LabelCluster + "=" + id.Name + "," + function.LabelCAPICluster + "=" + id.Name
}

// csiRateLimitArgs are the Kubernetes API client rate limits of the CSI
// controller's containers: --kube-api-qps and --kube-api-burst, the flags
// of the kubernetes-csi sidecars and snapshot controller (default 5 and
// 10, client-go's) and of Cozystack's driver build.
func csiRateLimitArgs(c v1alpha1.Controllers) []string {
	return []string{fmt.Sprintf("--kube-api-qps=%d", c.CSIKubeAPIQPS), fmt.Sprintf("--kube-api-burst=%d", c.CSIKubeAPIBurst)}
}
