// Package maxpods works out the kubelet maxPods value for an EC2 instance type.
//
// The instance facts of every type eksboot knows (ENIs on the default network card,
// IPv4 addresses per ENI, vCPUs, hypervisor, bare metal) and the eni-max-pods.txt
// numbers are compiled into a generated, statically initialised hash table
// (zz_generated_table.go, made by `go generate` from assets/eni-limits.csv and
// assets/eni-max-pods.txt): Lookup and Info cost one hash and one string comparison,
// allocate nothing and need no work at start-up. Compute applies the formulas of
// max-pods-calculator.sh (classic, prefix delegation, custom networking, security
// groups for pods, MAX_ENI, IPv6, the 110/250 caps), and Resolve chains the table, an
// on-node eni-max-pods.txt, EC2 and the default so that a boot never fails for want
// of a number.
//
// Everything here is pure: no network, no disk. Reading the node's file and calling
// EC2 are the callers' business (Resolve takes their results).
package maxpods

//go:generate go run ./internal/gen -csv ../assets/eni-limits.csv -txt ../assets/eni-max-pods.txt -out zz_generated_table.go

import "github.com/eksboot/eksboot/maxpods/internal/phash"

// Default is the value used when neither the table, the node's eni-max-pods.txt nor
// EC2 knows the type (the kubelet's own default).
const Default = 110

// entry is one instance type of the generated table, in its hash slot: 16 bytes, so
// the whole table (slots, seeds and the names) stays within a few dozen kilobytes.
type entry struct {
	memMiB  uint32 // memory in MiB; 0 when not known
	off     uint16 // the name is names[off : off+n]
	maxPods uint16 // eni-max-pods.txt's number (the classic formula, no cap); 0: empty slot
	vcpus   uint16 // default vCPUs; 0 when not known
	n       uint8  // length of the name
	enis    uint8  // ENIs on the default network card
	ipv4    uint8  // IPv4 addresses per ENI
	flags   uint8  // fFacts, fNitro, fXen, fMetal
}

// Flags of an entry.
const (
	fFacts = 1 << iota // enis, ipv4 (and vcpus when not 0) are known
	fNitro             // hypervisor nitro
	fXen               // hypervisor xen
	fMetal             // bare metal
)

// name returns the entry's instance type.
func (e *entry) name() string { return names[e.off : int(e.off)+int(e.n)] }

// find returns the table entry of name, or nil: one hash, one slot, one comparison.
func find(name string) *entry {
	h := phash.Hash(name)
	e := &slots[phash.Slot(h, uint32(seeds[phash.Bucket(h, bucketBits)]), slotBits)&(1<<slotBits-1)]
	if e.maxPods == 0 || int(e.n) != len(name) || e.name() != name {
		return nil
	}
	return e
}

// Lookup returns the max pods that eni-max-pods.txt gives instanceType (the classic
// secondary-IP formula, no cap: bootstrap.sh's value), by exact match: no trimming,
// no case folding, no prefix match. (bootstrap.sh's awk lookup is an unanchored regex
// prefix match, a known quirk this fixes.) The second result is false when the table
// has no row for instanceType.
func Lookup(instanceType string) (int, bool) {
	e := find(instanceType)
	if e == nil {
		return 0, false
	}
	return int(e.maxPods), true
}

// Info returns the instance facts of instanceType from the table (exact match). The
// second result is false when the table does not know the type's facts. VCPUs and
// MemoryMiB are 0 for the few types whose data lacks them.
func Info(instanceType string) (TypeInfo, bool) {
	e := find(instanceType)
	if e == nil || e.flags&fFacts == 0 {
		return TypeInfo{}, false
	}
	t := TypeInfo{VCPUs: int(e.vcpus), MemoryMiB: int64(e.memMiB), ENIs: int(e.enis), IPv4PerENI: int(e.ipv4), BareMetal: e.flags&fMetal != 0}
	switch {
	case e.flags&fNitro != 0:
		t.Hypervisor = "nitro"
	case e.flags&fXen != 0:
		t.Hypervisor = "xen"
	}
	return t, true
}
