// Package kubelettest runs a real kubelet on the files eksboot wrote, for tests: the
// program that reads them is the judge. It is a test kit: any package's tests may
// import it, no program links it.
//
// Run takes a kubelet binary and a root that eksboot wrote (bootstrap or init with
// --root, or render's tree laid out) and runs that kubelet with exactly the command
// line kubelet.service under the root gives it (UnitCommand: the unit and its
// drop-ins as systemd loads them, ExecStart= with $KUBELET_ARGS $KUBELET_EXTRA_ARGS
// expanded as systemd does, held to a real systemd by TestUnitCommandAgreesWithSystemd),
// with the unit's environment only, plus the test-only edits it names in
// Result.Edits: --fail-cgroupv1=false on a cgroup v1 host (a kubelet from 1.35 refuses
// one by default), and whatever Force adds. The answer is "accepted", with the
// kubelet's line that proves it, or "refused", with the kubelet's own refusal line (a
// panic, the error it exits with). Refusal is the oracle for eksboot's refusals: the
// same run with one input forced in.
//
// # Past the runtime connection
//
// A kubelet checks some of its input only after it has connected to its container
// runtime, so a kubelet without one stops before those checks. In cmd/kubelet/app
// (server.go) and pkg/kubelet of every minor this package is run against (read in
// k8s.io/kubernetes v1.34.4, v1.35.4, v1.37.2 and v1.38.0-beta.0; the order is the
// same in each), NewKubeletCommand parses the flags (unknown flags, bad values) and
// the config file, sets the feature gates (an unrecognized gate panics) and validates
// the configuration and the flags (--node-labels, failCgroupV1); then run() connects
// to the runtime (PreInitRuntimeService; Version, and RuntimeConfig for the cgroup
// driver), and only after that parses the hard eviction thresholds
// (eviction.ParseThresholdConfig: an unknown signal), kubeReserved and systemReserved,
// and builds the container manager (cm.NewContainerManager: the CPU, memory and
// topology manager policies); NewMainKubelet then refuses a built-in cloud provider
// and parses every eviction threshold. So the kubelet runs against fakecri
// (e2e/tools/fakecri), a CRI server on the kubelet's runtime socket that answers
// Version, RuntimeConfig (the cgroup driver that the containerd config eksboot wrote
// sets), the image file system and the list calls as an empty containerd would.
//
// # Where it stops, and why that is before any cgroup
//
// After NewMainKubelet, Kubelet.Run makes its folders, starts its servers and asks the
// runtime's Status every 5 s (updateRuntimeUp); only a Status with RuntimeReady true
// calls initializeRuntimeDependentModules, the one caller of ContainerManager.Start,
// which makes the node's cgroups (QoS, node allocatable), applies the kernel tunables
// and moves processes into the runtime's cgroup. fakecri is never ready, so none of
// that runs; Kubelet.Run goes on to syncLoop, whose first line, "Starting kubelet main
// sync loop" (Accepted), every one of those minors logs once it passed all the checks
// above. Run takes that line, with a Status call in fakecri's log, as acceptance and
// kills the kubelet there. The checks ContainerManager.Start makes (the kernel
// settings protectKernelDefaults wants, the reserved cgroups' existence) are about the
// host, not the files, and are not reached.
//
// # The host is not touched
//
// The kubelet runs in a network namespace of its own (only loopback: the API server's
// name does not resolve and its credential plugin is never reached) and a private mount
// namespace where the root file system is an overlay of the host's whose upper layer is
// a tmpfs: every file it writes (/var/lib/kubelet, /var/log/pods, its certificates)
// lands there, and eksboot's files are copied over it at their node paths. /run and
// /tmp are fresh tmpfs; /proc/sys and all of /sys (the cgroup hierarchies included)
// are read-only, so a sysctl or a cgroup the kubelet tried to write would fail rather
// than change the host. It is chrooted there; the fake runtime runs beside it. A run is
// bounded (the context's deadline, else DefaultTimeout), the whole process group is
// killed at its end, and the namespaces and their mounts go with it. Every run's logs
// (the kubelet's, fakecri's) are kept when the test fails.
package kubelettest
