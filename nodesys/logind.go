package nodesys

import (
	"fmt"
	"io"
	"time"

	"github.com/coreos/go-systemd/v22/unit"
)

// LogindDropIn is the node path of the systemd-logind drop-in eksboot writes for
// graceful node shutdown. It sorts before the kubelet's own 99-kubelet.conf.
const LogindDropIn = "/etc/systemd/logind.conf.d/40-eksboot-shutdown.conf"

// LogindConfig renders the logind drop-in that lets the kubelet hold the node's
// shutdown for up to delay: InhibitDelayMaxSec, in whole seconds rounded up. logind's
// default of 5 s would cut the kubelet's shutdown grace period short.
func LogindConfig(delay time.Duration) ([]byte, error) {
	if delay <= 0 {
		return nil, fmt.Errorf("InhibitDelayMaxSec: must be positive, got %v", delay)
	}
	secs := int64((delay + time.Second - 1) / time.Second)
	r := unit.Serialize([]*unit.UnitOption{
		unit.NewUnitOption("Login", "InhibitDelayMaxSec", fmt.Sprint(secs)),
	})
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("render logind drop-in: %w", err)
	}
	return append([]byte("# Written by eksboot: the kubelet may delay shutdown this long to stop pods gracefully.\n"), b...), nil
}
