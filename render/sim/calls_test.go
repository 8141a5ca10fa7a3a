package sim

import (
	"context"
	"strings"

	"github.com/eksboot/eksboot/userdata"
)

// FindBootstrapCall, the entry of this package's tests, evaluates the scripts of parts on a node with nothing but the
// standard directories (no shim, no IMDS answers) and returns the first bootstrap.sh
// call (nil when there is none): the words as bash passes them. A call whose words
// depend on something known only at boot is an *UnresolvedError.
func FindBootstrapCall(parts []userdata.Part) (*Call, error) {
	ev, err := Evaluate(context.Background(), parts, Options{})
	if err != nil {
		return nil, err
	}
	if len(ev.Calls) == 0 {
		return nil, nil
	}
	c := ev.Calls[0]
	if len(c.Unknown) > 0 {
		return nil, &UnresolvedError{Where: c.Where, Reason: strings.Join(c.Unknown, "; ")}
	}
	return &c, nil
}
