package kubeletconf

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// The types below stand in, in zz_generated_types.go, for the upstream types that
// encode themselves. Each reads and writes the JSON the upstream type reads and
// writes; leaf_test.go decodes the same inputs into both and compares.

// Duration is metav1.Duration: a JSON string that time.ParseDuration reads ("90s",
// "1m30s"), written as time.Duration.String().
type Duration struct {
	time.Duration
}

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a duration string; anything else is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Time is metav1.Time: an RFC 3339 string with second precision, written in UTC;
// the zero time is written as null and null reads as the zero time.
type Time struct {
	time.Time
}

// MarshalJSON writes t as RFC 3339 in UTC, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON reads null or an RFC 3339 string.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = v.Local()
	return nil
}

// TimeOrMetaDuration is component-base's logs TimeOrMetaDuration (the kubelet's
// logging.flushFrequency): a duration string, or a number of nanoseconds for
// backwards compatibility. It is written back in the form it was read.
type TimeOrMetaDuration struct {
	// Duration is the value.
	Duration Duration
	// SerializeAsString writes Duration as a string rather than nanoseconds.
	SerializeAsString bool `json:"-"`
}

// MarshalJSON writes t as a duration string or as nanoseconds.
func (t TimeOrMetaDuration) MarshalJSON() ([]byte, error) {
	if t.SerializeAsString {
		return t.Duration.MarshalJSON()
	}
	return json.Marshal(t.Duration.Duration)
}

// UnmarshalJSON reads a duration string or a whole number of nanoseconds.
func (t *TimeOrMetaDuration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		t.SerializeAsString = true
		return json.Unmarshal(b, &t.Duration)
	}
	t.SerializeAsString = false
	if err := json.Unmarshal(b, &t.Duration.Duration); err != nil {
		return fmt.Errorf("invalid duration %q: %w", b, err)
	}
	return nil
}

// Quantity is resource.Quantity (a memory limit, a buffer size): "1Gi", "500m",
// "1e3", read from a JSON string or number. Unlike resource.Quantity, which writes
// its canonical form ("1024Mi" becomes "1Gi"), it is written as it was read; the two
// forms are the same quantity to the kubelet. The zero Quantity is unset.
type Quantity struct {
	s string
}

// parseQuantity returns s as a Quantity, or an error when resource.ParseQuantity
// would reject it. It accepts what that parser accepts, quirks included (".5", "1.",
// "+", "Gi" and "e3" are all quantities to it): a sign, digits, an optional '.' and
// digits, then a suffix (n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E and a signed
// exponent). FuzzQuantity holds the two to the same answers.
func parseQuantity(s string) (Quantity, error) {
	if !isQuantity(s) {
		return Quantity{}, fmt.Errorf("quantity %q: want a number with an optional suffix (Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or an exponent)", s)
	}
	return Quantity{s: s}, nil
}

// isQuantity reports whether resource.ParseQuantity accepts s.
func isQuantity(s string) bool {
	if s == "" {
		return false
	}
	pos := 0
	if s[0] == '+' || s[0] == '-' {
		pos++
	}
	digits := func() int {
		start := pos
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		return pos - start
	}
	numberDigits := digits()
	if pos < len(s) && s[pos] == '.' {
		pos++
		numberDigits += digits()
	}
	if pos == len(s) {
		return true
	}
	suffixStart := pos
	for pos < len(s) && strings.IndexByte("eEinumkKMGTP", s[pos]) >= 0 {
		pos++
	}
	if pos < len(s) && (s[pos] == '+' || s[pos] == '-') {
		pos++
	}
	digits()
	if pos != len(s) {
		return false
	}
	// Without a digit the upstream parser has nothing to scale where its int64 fast
	// path gives up: for the largest binary suffixes and for exponents (kept as an
	// int32) below 10^-9.
	switch suffix := s[suffixStart:]; suffix {
	case "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti":
		return true
	case "Pi", "Ei":
		return numberDigits > 0
	default:
		if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
			return false
		}
		exp, err := strconv.ParseInt(suffix[1:], 10, 64)
		if err != nil {
			return false
		}
		return numberDigits > 0 || int32(exp) >= -9
	}
}

// String returns the quantity as it was read; "" when unset.
func (q Quantity) String() string { return q.s }

// MarshalJSON writes q as a string ("0" when unset, as resource.Quantity does).
func (q Quantity) MarshalJSON() ([]byte, error) {
	if q.s == "" {
		return []byte(`"0"`), nil
	}
	return json.Marshal(q.s)
}

// UnmarshalJSON reads null (unset), a string or a number, as resource.Quantity
// does: surrounding quotes are removed without unescaping, then spaces are trimmed.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*q = Quantity{}
		return nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	v, err := parseQuantity(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// QuantityValue returns the value of the quantity s, a size, rounded up to an
// integer as resource.Quantity's Value does ("1Gi" is 1073741824, "1.1k" 1100,
// "500m" 1), false when s is not a quantity or is negative (a size never is, and
// upstream rounds negative fractions by its own rules). The arithmetic is exact
// (math/big); values beyond int64 saturate, and an exponent suffix beyond ±40 is
// taken as ±40, which saturates or rounds to 1 as well. FuzzQuantity holds it to upstream's
// Value.
func QuantityValue(s string) (int64, bool) {
	if !isQuantity(s) {
		return 0, false
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	var digits strings.Builder
	scale, dot := 0, false // the number is digits × 10^scale
	for ; i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.'); i++ {
		if s[i] == '.' {
			dot = true
			continue
		}
		digits.WriteByte(s[i])
		if dot {
			scale--
		}
	}
	ds := digits.String()
	for dot && scale < 0 && strings.HasSuffix(ds, "0") { // 1.000… is 1
		ds, scale = ds[:len(ds)-1], scale+1
	}
	mantissa, ok := new(big.Int).SetString(cmp.Or(ds, "0"), 10)
	if !ok {
		return 0, false
	}
	exp, bin, ok := suffixScale(s[i:])
	if !ok {
		return 0, false
	}
	scale += exp
	v := new(big.Rat).SetInt(mantissa)
	ten := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil)
	if scale >= 0 {
		v.Mul(v, new(big.Rat).SetInt(ten))
	} else {
		v.Quo(v, new(big.Rat).SetInt(ten))
	}
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(bin))))
	// Round up away from zero: the ceiling of the magnitude.
	q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		q.SetInt64(math.MaxInt64)
	}
	if s[0] == '-' && q.Sign() != 0 {
		return 0, false
	}
	return q.Int64(), true
}

// decimalSuffixes are the SI suffixes and their powers of ten.
var decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

// suffixScale returns what a quantity's suffix multiplies by: 10^exp and 2^bin;
// an exponent suffix beyond ±40 is taken as ±40.
func suffixScale(suffix string) (exp, bin int, ok bool) {
	switch suffix {
	case "":
		return 0, 0, true
	case "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		return 0, 10 * (1 + strings.IndexByte("KMGTPE", suffix[0])), true
	}
	if e, ok := decimalSuffixes[suffix]; ok {
		return e, 0, true
	}
	e, err := strconv.ParseInt(suffix[1:], 10, 64) // e/E and a signed exponent
	if err != nil {
		return 0, 0, false
	}
	return int(max(-40, min(40, e))), 0, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
