package maxpods

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestResolve(t *testing.T) {
	const path = "/etc/eks/eni-max-pods.txt"
	ec2 := func(info TypeInfo, err error) func(context.Context, string) (TypeInfo, error) {
		return func(context.Context, string) (TypeInfo, error) { return info, err }
	}
	table := Options{Uncapped: true} // bootstrap.sh's number
	zz9 := TypeInfo{Hypervisor: "nitro", VCPUs: 4, ENIs: 4, IPv4PerENI: 15}
	tests := []struct {
		name         string
		req          Request
		want         int
		wantSource   string
		wantWarnings []string
		wantFallback bool
	}{
		{"table", Request{InstanceType: "m5.large", Options: table}, 29, SourceTable, nil, false},
		{"table, prefix delegation", Request{InstanceType: "m5.large", Options: Options{PrefixDelegation: true}}, 110, SourceTable, nil, false},
		{
			"table wins over a row, with a warning",
			Request{
				InstanceType: "m5.large", Options: table, RowsPath: path,
				Rows: []Row{{44, "m5.large", 20}, {45, "m5.xlarge", 1}},
			},
			29, SourceTable,
			[]string{"/etc/eks/eni-max-pods.txt:44: m5.large 20 is ignored: the table has m5.large (29), and rows count only for types it lacks"},
			false,
		},
		{"an agreeing row says nothing", Request{InstanceType: "m5.large", Options: table, RowsPath: path, Rows: []Row{{44, "m5.large", 29}}}, 29, SourceTable, nil, false},
		{"row for an unknown type", Request{
			InstanceType: "zz9.large", Options: table, RowsPath: path, Rows: []Row{{1434, "zz9.large", 58}},
			Describe: ec2(TypeInfo{}, errors.New("must not be asked")),
		}, 58, path + ":1434", nil, false},
		{
			"row used as is with options",
			Request{InstanceType: "zz9.large", Options: Options{PrefixDelegation: true}, RowsPath: path, Rows: []Row{{7, "zz9.large", 58}}},
			58, path + ":7",
			[]string{"/etc/eks/eni-max-pods.txt:7: zz9.large's max pods 58 is used as is: the options need the type's facts, which the row does not give"},
			false,
		},
		{"EC2 facts", Request{InstanceType: "zz9.large", Options: table, RowsPath: path, Describe: ec2(zz9, nil)}, 58, SourceEC2, nil, false},
		{"EC2 facts, custom networking, capped", Request{InstanceType: "zz9.large", Options: Options{CustomNetworking: true}, Describe: ec2(zz9, nil)}, 44, SourceEC2, nil, false},
		{
			"EC2 fails: default, naming what was tried",
			Request{InstanceType: "zz9.large", Options: table, RowsPath: path, Describe: ec2(TypeInfo{}, errors.New("connection refused"))},
			Default, SourceDefault,
			[]string{`instance type "zz9.large" is not in the max-pods table, has no row in /etc/eks/eni-max-pods.txt, ec2:DescribeInstanceTypes did not help (connection refused); using max pods 110`},
			true,
		},
		{
			"EC2 facts unusable",
			Request{InstanceType: "zz9.large", Options: table, Describe: ec2(TypeInfo{VCPUs: 2}, nil)},
			Default, SourceDefault,
			[]string{`instance type "zz9.large" is not in the max-pods table, ec2:DescribeInstanceTypes facts did not do (max pods: want positive ENIs and IPv4 addresses per ENI, got 0 and 0); using max pods 110`},
			true,
		},
		{
			"no EC2",
			Request{InstanceType: "zz9.large", Options: table},
			Default, SourceDefault,
			[]string{`instance type "zz9.large" is not in the max-pods table, EC2 was not asked; using max pods 110`},
			true,
		},
		{
			"vCPUs unknown: the node's CPUs",
			Request{InstanceType: "mac1.metal", Options: Options{}, NodeCPUs: 12},
			110, SourceTable,
			[]string{"the vCPU count of mac1.metal is not known; the cap uses this node's 12 CPUs"},
			false,
		},
		{"vCPUs unknown, no stand-in: EC2", Request{InstanceType: "mac1.metal", Options: Options{}, Describe: ec2(TypeInfo{VCPUs: 12, ENIs: 8, IPv4PerENI: 30}, nil)}, 110, SourceEC2, nil, false},
		{"vCPUs unknown, uncapped: the table", Request{InstanceType: "mac1.metal", Options: table}, 234, SourceTable, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(context.Background(), tc.req)
			if got.MaxPods != tc.want || got.Source != tc.wantSource || got.Fallback != tc.wantFallback {
				t.Errorf("Resolve = %d from %q (fallback %v); want %d from %q (fallback %v)", got.MaxPods, got.Source, got.Fallback, tc.want, tc.wantSource, tc.wantFallback)
			}
			if !reflect.DeepEqual(got.Warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q, want %q", got.Warnings, tc.wantWarnings)
			}
			if (got.Facts == nil) != (got.Result == nil) {
				t.Errorf("Facts %v and Result %v: want both or neither", got.Facts, got.Result)
			}
		})
	}
}
