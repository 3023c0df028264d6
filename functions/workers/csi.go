package main

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tenantkube/tenantkube/functions/workers/input/v1alpha1"
	"github.com/tenantkube/tenantkube/internal/function"
)

// CSIComponent is the component name of the KubeVirt CSI controller:
// Deployment N-kcsi-controller.
const CSIComponent = "kcsi-controller"

// CSI socket shared by the driver and its sidecars.
const (
	csiSocketDir  = "/csi"
	csiSocketPath = csiSocketDir + "/csi.sock"
)

// BuildCSIController returns the KubeVirt CSI driver's controller for the
// tenant cluster (SPEC §5.2): the driver in controller mode, creating
// DataVolumes in NS labelled with the cluster and hot-plugging them into
// the tenant's VMs through its infrastructure ServiceAccount, plus the
// external provisioner, attacher, resizer and liveness-probe sidecars,
// which talk to the tenant cluster through its kubeconfig.
func BuildCSIController(id function.Identity, in *v1alpha1.WorkersInput, waitImage string) Controller {
	sock := corev1.VolumeMount{Name: "socket-dir", MountPath: csiSocketDir}
	sidecar := func(name, image string, extra ...string) corev1.Container {
		return corev1.Container{
			Name:         name,
			Image:        image,
			Args:         append([]string{"--csi-address=" + csiSocketPath, "--kubeconfig=" + TenantKubeconfigPath, "--v=2"}, extra...),
			VolumeMounts: []corev1.VolumeMount{sock, kubeconfigMount()},
		}
	}
	driver := corev1.Container{
		Name:  "csi-driver",
		Image: in.Images.CSIDriver,
		Args: []string{
			"--endpoint=unix://" + csiSocketPath,
			"--infra-cluster-namespace=" + id.Namespace,
			"--infra-cluster-labels=" + function.LabelCluster + "=" + id.Name,
			"--tenant-cluster-kubeconfig=" + TenantKubeconfigPath,
			"--run-node-service=false",
			"--run-controller-service=true",
			"--v=2",
		},
		Env:          []corev1.EnvVar{{Name: "KUBE_NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		VolumeMounts: []corev1.VolumeMount{sock, kubeconfigMount()},
	}
	liveness := corev1.Container{
		Name:         "csi-liveness-probe",
		Image:        in.Images.CSILivenessProbe,
		Args:         []string{"--csi-address=" + csiSocketPath, "--probe-timeout=3s"},
		VolumeMounts: []corev1.VolumeMount{sock},
	}
	containers := []corev1.Container{
		driver,
		sidecar("csi-provisioner", in.Images.CSIProvisioner, "--timeout=3m", "--default-fstype=ext4"),
		sidecar("csi-attacher", in.Images.CSIAttacher, "--timeout=3m"),
		sidecar("csi-resizer", in.Images.CSIResizer, "--timeout=3m", "--handle-volume-inuse-error=false"),
		liveness,
	}
	vol := corev1.Volume{Name: "socket-dir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	return newController(id, CSIComponent, waitImage, containers, []corev1.Volume{vol})
}
