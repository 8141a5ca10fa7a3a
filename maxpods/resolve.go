package maxpods

import (
	"context"
	"fmt"
	"strings"
)

// Sources of an Answer (besides "<path>:<line>" for a row of the node's file).
const (
	SourceTable   = "table"
	SourceEC2     = "ec2:DescribeInstanceTypes"
	SourceDefault = "default"
)

// Request is what Resolve needs: the instance type, the options, and what the caller
// could read from the node and EC2.
type Request struct {
	InstanceType string
	Options      Options
	// Rows are the rows of the node's eni-max-pods.txt (from ParseRows) and RowsPath
	// its path, for messages. They count only for types the table lacks.
	Rows     []Row
	RowsPath string
	// Describe returns the facts ec2:DescribeInstanceTypes gives a type; nil skips EC2.
	Describe func(ctx context.Context, instanceType string) (TypeInfo, error)
	// NodeCPUs stands in for the vCPU count when the facts lack it (0: no stand-in).
	NodeCPUs int
}

// Answer is the max pods Resolve found and how.
type Answer struct {
	MaxPods int
	// Source is SourceTable, "<RowsPath>:<line>", SourceEC2 or SourceDefault.
	Source string
	// Facts are the instance facts the number was computed from; nil when a row's
	// number or Default was used as is.
	Facts *TypeInfo
	// Result is the computation; nil when a number was used as is.
	Result *Result
	// Warnings are what the operator should know: rows ignored, options that could
	// not be applied, sources that failed before the one used.
	Warnings []string
	// Fallback is set when nothing knew the type and Default was used.
	Fallback bool
}

// plain reports whether o asks for eni-max-pods.txt's own number: the classic
// formula with no option and no cap.
func (o Options) plain() bool {
	return o.Uncapped && !o.PrefixDelegation && !o.CustomNetworking && !o.SecurityGroupsForPods && o.MaxENI == 0 && !o.IPv6
}

// Resolve finds the max pods of req.InstanceType and never fails: the embedded table
// (facts computed with req.Options; with plain uncapped options, eni-max-pods.txt's
// number); for a type the table lacks, the node's row for it; then the facts EC2
// gives; then Default. Each source that did not help is named in the warnings of the
// answer. A node row for a type the table knows is ignored with a warning when it
// disagrees.
func Resolve(ctx context.Context, req Request) Answer {
	name, o := req.InstanceType, req.Options
	var warnings, tried []string
	for _, r := range req.Rows {
		if n, ok := Lookup(r.InstanceType); ok && n != r.MaxPods && r.InstanceType == name {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s %d is ignored: the table has %s (%d), and rows count only for types it lacks",
				req.RowsPath, r.Line, name, r.MaxPods, name, n))
		}
	}
	answer := func(a Answer) Answer {
		a.Warnings = append(warnings, a.Warnings...)
		return a
	}

	if t, ok := Info(name); ok {
		a, err := fromFacts(t, SourceTable, req)
		if err == nil {
			if n, ok := Lookup(name); ok && o.plain() {
				a.MaxPods = n
			}
			return answer(a)
		}
		tried = append(tried, fmt.Sprintf("the table's facts did not do (%v)", err))
	} else if n, ok := Lookup(name); ok && o.plain() {
		return answer(Answer{MaxPods: n, Source: SourceTable})
	} else {
		tried = append(tried, "is not in the max-pods table")
	}

	for _, r := range req.Rows {
		if r.InstanceType != name {
			continue
		}
		a := Answer{MaxPods: r.MaxPods, Source: fmt.Sprintf("%s:%d", req.RowsPath, r.Line)}
		if !o.plain() {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s: %s's max pods %d is used as is: the options need the type's facts, which the row does not give", a.Source, name, r.MaxPods))
		}
		return answer(a)
	}
	if req.RowsPath != "" {
		tried = append(tried, "has no row in "+req.RowsPath)
	}

	if req.Describe == nil {
		tried = append(tried, "EC2 was not asked")
	} else if t, err := req.Describe(ctx, name); err != nil {
		tried = append(tried, fmt.Sprintf("ec2:DescribeInstanceTypes did not help (%v)", err))
	} else if a, err := fromFacts(t, SourceEC2, req); err != nil {
		tried = append(tried, fmt.Sprintf("ec2:DescribeInstanceTypes facts did not do (%v)", err))
	} else {
		return answer(a)
	}

	return answer(Answer{MaxPods: Default, Source: SourceDefault, Fallback: true, Warnings: []string{
		fmt.Sprintf("instance type %q %s; using max pods %d", name, strings.Join(tried, ", "), Default),
	}})
}

// fromFacts computes the answer from facts t found at source.
func fromFacts(t TypeInfo, source string, req Request) (Answer, error) {
	a := Answer{Source: source, Facts: &t}
	used := t
	if used.VCPUs <= 0 && req.NodeCPUs > 0 && !req.Options.Uncapped {
		used.VCPUs = req.NodeCPUs
		a.Warnings = append(a.Warnings, fmt.Sprintf("the vCPU count of %s is not known; the cap uses this node's %d CPUs", req.InstanceType, req.NodeCPUs))
	}
	r, err := Compute(used, req.Options)
	if err != nil {
		return Answer{}, err
	}
	a.MaxPods, a.Result = r.MaxPods, &r
	return a, nil
}
