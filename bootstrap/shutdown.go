package bootstrap

import (
	"fmt"
	"time"
)

// Graceful node shutdown defaults for --graceful-shutdown: the values nodeadm (the EKS
// AL2023 agent) uses. 150s lets ordinary pods finish a typical 30-120s
// terminationGracePeriodSeconds and leaves 30s for critical pods (DNS, CNI, log
// shippers) to go last; it fits inside the 2 minutes of a Spot interruption notice
// only when a node termination handler has drained the node first (see
// docs/graceful-shutdown.md).
const (
	DefaultShutdownGracePeriod             = 150 * time.Second
	DefaultShutdownGracePeriodCriticalPods = 30 * time.Second
	// maxShutdownGracePeriod bounds the delay a node may hold its shutdown.
	maxShutdownGracePeriod = time.Hour
)

// shutdown works out the graceful-shutdown settings from the flags and returns the
// problems found. bootstrap.sh had no such settings: with none of the flags it stays
// off. --graceful-shutdown turns it on with the defaults; a period given explicitly
// turns it on with that period.
func (c *Config) shutdown(o Options) []string {
	set := o.ShutdownFlagsGiven
	c.ShutdownGiven = set["graceful-shutdown"] || set["shutdown-grace-period"] || set["shutdown-grace-period-critical-pods"]
	on := o.GracefulShutdown || (set["shutdown-grace-period"] && o.ShutdownGracePeriod != 0)
	if set["graceful-shutdown"] && !o.GracefulShutdown && (set["shutdown-grace-period"] || set["shutdown-grace-period-critical-pods"]) {
		return []string{"--graceful-shutdown=false with --shutdown-grace-period(-critical-pods): turn it on or leave the periods out"}
	}
	if !on {
		if set["shutdown-grace-period-critical-pods"] {
			return []string{"--shutdown-grace-period-critical-pods needs --shutdown-grace-period or --graceful-shutdown"}
		}
		return nil
	}
	total, critical := DefaultShutdownGracePeriod, DefaultShutdownGracePeriodCriticalPods
	if set["shutdown-grace-period"] {
		total = o.ShutdownGracePeriod
		if !set["shutdown-grace-period-critical-pods"] && !o.GracefulShutdown {
			critical = 0
		}
	}
	if set["shutdown-grace-period-critical-pods"] {
		critical = o.ShutdownGracePeriodCriticalPods
	}
	var problems []string
	switch {
	case total < time.Second || total > maxShutdownGracePeriod || total%time.Second != 0:
		problems = append(problems, fmt.Sprintf("--shutdown-grace-period %v: want whole seconds from 1s to 1h (logind's InhibitDelayMaxSec is in seconds)", total))
	case critical < 0 || critical%time.Second != 0:
		problems = append(problems, fmt.Sprintf("--shutdown-grace-period-critical-pods %v: want whole seconds, at least 0s", critical))
	case critical > total:
		problems = append(problems, fmt.Sprintf("--shutdown-grace-period-critical-pods %v is longer than --shutdown-grace-period %v: the critical pods' share must fit in the grace period", critical, total))
	}
	if len(problems) == 0 {
		c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods = total, critical
	}
	return problems
}
