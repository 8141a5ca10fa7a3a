package ec2api

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/eksboot/eksboot/maxpods"
)

func card(index, enis int32) types.NetworkCardInfo {
	return types.NetworkCardInfo{NetworkCardIndex: aws.Int32(index), MaximumNetworkInterfaces: aws.Int32(enis)}
}

func TestTypeInfo(t *testing.T) {
	tests := []struct {
		name    string
		in      types.InstanceTypeInfo
		want    maxpods.TypeInfo
		wantErr string
	}{
		{
			name: "c6in.32xlarge: default card only",
			in: types.InstanceTypeInfo{
				Hypervisor: types.InstanceTypeHypervisorNitro,
				VCpuInfo:   &types.VCpuInfo{DefaultVCpus: aws.Int32(128)},
				NetworkInfo: &types.NetworkInfo{
					MaximumNetworkInterfaces:  aws.Int32(16),
					DefaultNetworkCardIndex:   aws.Int32(0),
					NetworkCards:              []types.NetworkCardInfo{card(0, 8), card(1, 8)},
					Ipv4AddressesPerInterface: aws.Int32(50),
				},
			},
			want: maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 128, ENIs: 8, IPv4PerENI: 50},
		},
		{
			name: "default card by its index, not its position",
			in: types.InstanceTypeInfo{
				NetworkInfo: &types.NetworkInfo{
					MaximumNetworkInterfaces:  aws.Int32(6),
					DefaultNetworkCardIndex:   aws.Int32(1),
					NetworkCards:              []types.NetworkCardInfo{card(1, 2), card(0, 4)},
					Ipv4AddressesPerInterface: aws.Int32(10),
				},
			},
			want: maxpods.TypeInfo{ENIs: 2, IPv4PerENI: 10},
		},
		{
			name: "no cards: instance-wide maximum",
			in: types.InstanceTypeInfo{
				Hypervisor: types.InstanceTypeHypervisorXen,
				VCpuInfo:   &types.VCpuInfo{DefaultVCpus: aws.Int32(4)},
				NetworkInfo: &types.NetworkInfo{
					MaximumNetworkInterfaces:  aws.Int32(4),
					Ipv4AddressesPerInterface: aws.Int32(15),
				},
			},
			want: maxpods.TypeInfo{Hypervisor: "xen", VCPUs: 4, ENIs: 4, IPv4PerENI: 15},
		},
		{
			name: "default card missing",
			in: types.InstanceTypeInfo{
				NetworkInfo: &types.NetworkInfo{
					DefaultNetworkCardIndex: aws.Int32(2),
					NetworkCards:            []types.NetworkCardInfo{card(0, 4), card(1, 4)},
				},
			},
			wantErr: "default network card 2 not among the 2 cards in the answer",
		},
		{
			name:    "no network info",
			in:      types.InstanceTypeInfo{VCpuInfo: &types.VCpuInfo{DefaultVCpus: aws.Int32(2)}},
			wantErr: "no network info in the answer",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typeInfo(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("typeInfo error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("typeInfo = %+v, %v; want %+v, nil", got, err, tc.want)
			}
		})
	}
}
