// Command fakecri is a container runtime for one test: a CRI server (k8s.io/cri-api's
// RuntimeService and ImageService, v1) on a unix socket that answers a kubelet's first
// calls as an empty, healthy containerd would, except that its runtime never becomes
// ready. kubeletconf/kubelettest runs it in the kubelet's namespaces, so that the
// kubelet connects to a runtime and goes on to the checks it makes only after that
// (eviction signals, the CPU manager policy, quantities, the cloud provider), and then
// stops short of its runtime-dependent start (the container manager and its cgroups),
// which waits for a ready runtime.
//
// Every call is logged on standard output, one line each: "cri: <method> <code>", the
// gRPC code of the answer (OK, or Unimplemented for what a fresh node's runtime would
// not be asked). It creates nothing but its socket, and runs no container: creating a
// sandbox or pulling an image is refused.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	listen := flag.String("listen", "/run/containerd/containerd.sock", "the unix socket to serve on (made with its folder)")
	driver := flag.String("cgroup-driver", "systemd", "the cgroup driver RuntimeConfig answers: systemd or cgroupfs")
	ready := flag.Bool("ready", false, "answer Status with RuntimeReady true (the kubelet then starts its container manager and makes cgroups)")
	flag.Parse()
	d, ok := map[string]runtimeapi.CgroupDriver{"systemd": runtimeapi.CgroupDriver_SYSTEMD, "cgroupfs": runtimeapi.CgroupDriver_CGROUPFS}[*driver]
	if !ok {
		fmt.Fprintf(os.Stderr, "fakecri: -cgroup-driver %q: want systemd or cgroupfs\n", *driver)
		os.Exit(2)
	}
	if err := serve(*listen, &runtime{driver: d, ready: *ready}); err != nil {
		fmt.Fprintf(os.Stderr, "fakecri: %v\n", err)
		os.Exit(1)
	}
}

func serve(path string, rt *runtime) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(logUnary), grpc.StreamInterceptor(logStream))
	runtimeapi.RegisterRuntimeServiceServer(s, rt)
	runtimeapi.RegisterImageServiceServer(s, images{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		s.Stop()
	}()
	fmt.Printf("fakecri: serving on %s\n", path)
	return s.Serve(l)
}

var out sync.Mutex

// logCall prints the call and the code of its answer.
func logCall(method string, err error) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf("cri: %s %s\n", method, status.Code(err))
}

func logUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	logCall(info.FullMethod, err)
	return resp, err
}

func logStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	logCall(info.FullMethod+" (stream opened)", nil)
	err := handler(srv, ss)
	logCall(info.FullMethod, err)
	return err
}

// runtime is the RuntimeService: no sandbox, no container, never ready.
type runtime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	driver runtimeapi.CgroupDriver
	ready  bool
}

func (*runtime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fakecri", RuntimeVersion: "0.0.0", RuntimeApiVersion: "v1"}, nil
}

func (r *runtime) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	cond := &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: true}
	if !r.ready {
		cond = &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: false, Reason: "FakeCRINeverReady",
			Message: "kubelettest's fake runtime: never ready, so that the kubelet stops before its container manager starts"}
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		cond, {Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

func (r *runtime) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: r.driver}}, nil
}

func (*runtime) UpdateRuntimeConfig(context.Context, *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

func (*runtime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{}, nil
}

func (*runtime) ListContainers(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{}, nil
}

func (*runtime) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{}, nil
}

func (*runtime) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return &runtimeapi.ListPodSandboxStatsResponse{}, nil
}

func (*runtime) ListMetricDescriptors(context.Context, *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}

func (*runtime) ListPodSandboxMetrics(context.Context, *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

func (*runtime) StreamPodSandboxes(*runtimeapi.StreamPodSandboxesRequest, grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	return nil
}

func (*runtime) StreamContainers(*runtimeapi.StreamContainersRequest, grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	return nil
}

func (*runtime) StreamContainerStats(*runtimeapi.StreamContainerStatsRequest, grpc.ServerStreamingServer[runtimeapi.StreamContainerStatsResponse]) error {
	return nil
}

func (*runtime) StreamPodSandboxStats(*runtimeapi.StreamPodSandboxStatsRequest, grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxStatsResponse]) error {
	return nil
}

// GetContainerEvents is the evented PLEG's stream: open, and no event, until the
// kubelet goes.
func (*runtime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, s grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	<-s.Context().Done()
	return nil
}

func (*runtime) RunPodSandbox(context.Context, *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	return nil, status.Error(codes.FailedPrecondition, "fakecri runs no pod")
}

// images is the ImageService: no image, and an image file system of its own.
type images struct {
	runtimeapi.UnimplementedImageServiceServer
}

func (images) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{}, nil
}

func (images) StreamImages(*runtimeapi.StreamImagesRequest, grpc.ServerStreamingServer[runtimeapi.StreamImagesResponse]) error {
	return nil
}

func (images) ImageStatus(context.Context, *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return &runtimeapi.ImageStatusResponse{}, nil
}

func (images) PullImage(context.Context, *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	return nil, status.Error(codes.FailedPrecondition, "fakecri pulls no image")
}

// ImageFsInfo answers containerd's image file system (its overlayfs snapshotter's
// folder), empty.
func (images) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	fs := []*runtimeapi.FilesystemUsage{{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"},
		UsedBytes:  &runtimeapi.UInt64Value{},
		InodesUsed: &runtimeapi.UInt64Value{},
	}}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: fs, ContainerFilesystems: fs}, nil
}
