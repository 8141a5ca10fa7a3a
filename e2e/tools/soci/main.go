// Command soci-snapshotter-grpc is a SOCI snapshotter daemon for eksboot's e2e
// tests, wired from the snapshotter's library packages because the proxy does not
// serve upstream's cmd module: it reads the configuration eksboot writes
// (/etc/soci-snapshotter-grpc/config.toml) with the library's own parser, checks
// that the root supports the overlay snapshotter, and serves containerd's snapshots
// API and the CRI image service (the CRI keychain, which takes the kubelet's
// registry credentials to containerd's image service) on one unix socket. It has
// upstream's flags --address, --config, --root and --log-level, and tells systemd
// when it is ready (Type=notify), as upstream's daemon does.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/awslabs/soci-snapshotter/config"
	sfs "github.com/awslabs/soci-snapshotter/fs"
	"github.com/awslabs/soci-snapshotter/metadata"
	"github.com/awslabs/soci-snapshotter/service"
	"github.com/awslabs/soci-snapshotter/service/keychain/cri/v1"
	"github.com/awslabs/soci-snapshotter/service/keychain/dockerconfig"
	"github.com/awslabs/soci-snapshotter/service/resolver"
	"github.com/awslabs/soci-snapshotter/ztoc"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	"github.com/containerd/containerd/v2/contrib/snapshotservice"
	"github.com/containerd/containerd/v2/pkg/dialer"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/log"
	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtime "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	address := flag.String("address", "/run/soci-snapshotter-grpc/soci-snapshotter-grpc.sock", "unix socket of the snapshots API and the CRI image service")
	configPath := flag.String("config", config.DefaultConfigPath, "the snapshotter's configuration file")
	root := flag.String("root", config.DefaultSociSnapshotterRootPath, "the snapshotter's state directory")
	level := flag.String("log-level", "info", "log level")
	flag.Parse()
	if err := run(*address, *configPath, *root, *level); err != nil {
		fmt.Fprintf(os.Stderr, "soci-snapshotter-grpc: %v\n", err)
		os.Exit(1)
	}
}

func run(address, configPath, root, level string) error {
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return err
	}
	logrus.SetLevel(lvl)
	ctx, cancel := context.WithCancel(log.WithLogger(context.Background(), log.L))
	defer cancel()

	cfg, err := config.NewConfigFromToml(configPath)
	if err != nil {
		return fmt.Errorf("config %s: %w", configPath, err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	if !cfg.SkipCheckSnapshotterSupported {
		if err := service.Supported(root); err != nil {
			return fmt.Errorf("root %s does not support the overlay snapshotter: %w", root, err)
		}
	}
	// containerd sends its namespace as incoming metadata; the snapshotter's calls
	// back to containerd (its content store) need it as outgoing metadata too.
	withNS := func(ctx context.Context) context.Context {
		if ns, ok := namespaces.Namespace(ctx); ok {
			return namespaces.WithNamespace(ctx, ns)
		}
		return ctx
	}
	rpc := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(withNS(ctx), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, nsStream{ss, withNS(ss.Context())})
		}),
	)

	creds := []resolver.Credential{dockerconfig.NewDockerConfigKeychain(ctx)}
	if cfg.CRIKeychainConfig.EnableKeychain {
		backend := cfg.CRIKeychainConfig.ImageServicePath
		keychain, images := cri.NewCRIKeychain(ctx, func() (runtime.ImageServiceClient, error) {
			conn, err := grpc.NewClient(dialer.DialAddress(backend),
				grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer.ContextDialer))
			if err != nil {
				return nil, err
			}
			return runtime.NewImageServiceClient(conn), nil
		})
		runtime.RegisterImageServiceServer(rpc, images)
		creds = append(creds, keychain)
	}
	db, err := bolt.Open(filepath.Join(root, "metadata.db"), 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType, Timeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("metadata store: %w", err)
	}
	defer db.Close()
	store := func(sr *io.SectionReader, toc ztoc.TOC, opts ...metadata.Option) (metadata.Reader, error) {
		return metadata.NewReader(db, sr, toc, opts...)
	}
	sn, err := service.NewSociSnapshotterService(ctx, root, &cfg.ServiceConfig,
		service.WithCredsFuncs(creds...), service.WithFilesystemOptions(sfs.WithMetadataStore(store)))
	if err != nil {
		return fmt.Errorf("snapshotter: %w", err)
	}
	defer sn.Close()
	snapshotsapi.RegisterSnapshotsServer(rpc, snapshotservice.FromSnapshotter(sn))

	if err := os.MkdirAll(filepath.Dir(address), 0o700); err != nil {
		return err
	}
	if err := os.Remove(address); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l, err := net.Listen("unix", address)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- rpc.Serve(l) }()
	if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
		log.G(ctx).WithError(err).Warn("sd_notify")
	}
	log.G(ctx).WithField("address", address).Info("soci-snapshotter-grpc started")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, unix.SIGINT, unix.SIGTERM)
	select {
	case s := <-sig:
		log.G(ctx).Infof("got %v", s)
		rpc.GracefulStop()
		return nil
	case err := <-served:
		return err
	}
}

// nsStream is a server stream with the namespace's context.
type nsStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s nsStream) Context() context.Context { return s.ctx }
