package ec2api

import (
	"testing"

	"github.com/eksboot/eksboot/maxpods"
)

func TestTypeInfo(t *testing.T) {
	tests := []struct {
		name    string
		item    string // one instanceTypeSet item
		want    maxpods.TypeInfo
		wantErr string
	}{
		{
			name: "c6in.32xlarge: default card only",
			item: `<item><instanceType>c6in.32xlarge</instanceType><hypervisor>nitro</hypervisor>
				<vCpuInfo><defaultVCpus>128</defaultVCpus><defaultCores>64</defaultCores></vCpuInfo>
				<networkInfo><maximumNetworkInterfaces>16</maximumNetworkInterfaces><defaultNetworkCardIndex>0</defaultNetworkCardIndex>
				<networkCards><item><networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>8</maximumNetworkInterfaces></item>
				<item><networkCardIndex>1</networkCardIndex><maximumNetworkInterfaces>8</maximumNetworkInterfaces></item></networkCards>
				<ipv4AddressesPerInterface>50</ipv4AddressesPerInterface></networkInfo></item>`,
			want: maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 128, ENIs: 8, IPv4PerENI: 50},
		},
		{
			name: "default card by its index, not its position",
			item: `<item><networkInfo><maximumNetworkInterfaces>6</maximumNetworkInterfaces><defaultNetworkCardIndex>1</defaultNetworkCardIndex>
				<networkCards><item><networkCardIndex>1</networkCardIndex><maximumNetworkInterfaces>2</maximumNetworkInterfaces></item>
				<item><networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>4</maximumNetworkInterfaces></item></networkCards>
				<ipv4AddressesPerInterface>10</ipv4AddressesPerInterface></networkInfo></item>`,
			want: maxpods.TypeInfo{ENIs: 2, IPv4PerENI: 10},
		},
		{
			name: "no cards: instance-wide maximum",
			item: `<item><hypervisor>xen</hypervisor><vCpuInfo><defaultVCpus>4</defaultVCpus></vCpuInfo>
				<networkInfo><maximumNetworkInterfaces>4</maximumNetworkInterfaces><ipv4AddressesPerInterface>15</ipv4AddressesPerInterface></networkInfo></item>`,
			want: maxpods.TypeInfo{Hypervisor: "xen", VCPUs: 4, ENIs: 4, IPv4PerENI: 15},
		},
		{
			name: "default card missing",
			item: `<item><networkInfo><defaultNetworkCardIndex>2</defaultNetworkCardIndex><networkCards>
				<item><networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>4</maximumNetworkInterfaces></item>
				<item><networkCardIndex>1</networkCardIndex><maximumNetworkInterfaces>4</maximumNetworkInterfaces></item></networkCards></networkInfo></item>`,
			wantErr: "default network card 2 not among the 2 cards in the answer",
		},
		{
			name:    "no network info",
			item:    `<item><vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo></item>`,
			wantErr: "no network info in the answer",
		},
		{
			name:    "a count that is not a number",
			item:    `<item><networkInfo><maximumNetworkInterfaces>4e3</maximumNetworkInterfaces></networkInfo></item>`,
			wantErr: `maximumNetworkInterfaces in networkInfo: "4e3" is not a 32-bit integer`,
		},
		{
			name:    "a count past int32",
			item:    `<item><networkInfo><ipv4AddressesPerInterface>4294967306</ipv4AddressesPerInterface></networkInfo></item>`,
			wantErr: `ipv4AddressesPerInterface in networkInfo: "4294967306" is not a 32-bit integer`,
		},
		{
			name:    "a count with space around it",
			item:    `<item><networkInfo><ipv4AddressesPerInterface> 10</ipv4AddressesPerInterface></networkInfo></item>`,
			wantErr: `ipv4AddressesPerInterface in networkInfo: " 10" is not a 32-bit integer`,
		},
		{
			name:    "a negative count",
			item:    `<item><networkInfo><maximumNetworkInterfaces>-3</maximumNetworkInterfaces><ipv4AddressesPerInterface>10</ipv4AddressesPerInterface></networkInfo></item>`,
			wantErr: `maximumNetworkInterfaces in networkInfo: -3 is out of range (0-1024)`,
		},
		{
			name:    "a count no instance has",
			item:    `<item><networkInfo><maximumNetworkInterfaces>4</maximumNetworkInterfaces><ipv4AddressesPerInterface>2147483647</ipv4AddressesPerInterface></networkInfo></item>`,
			wantErr: `ipv4AddressesPerInterface in networkInfo: 2147483647 is out of range (0-1024)`,
		},
		{
			name:    "vCPUs no instance has",
			item:    `<item><vCpuInfo><defaultVCpus>100000</defaultVCpus></vCpuInfo><networkInfo/></item>`,
			wantErr: `defaultVCpus in vCpuInfo: 100000 is out of range (0-16384)`,
		},
		{
			name:    "a card index no instance has",
			item:    `<item><networkInfo><defaultNetworkCardIndex>5000</defaultNetworkCardIndex><networkCards><item/></networkCards></networkInfo></item>`,
			wantErr: `defaultNetworkCardIndex in networkInfo: 5000 is out of range (0-1024)`,
		},
		{
			name:    "a hypervisor that is not a word",
			item:    `<item><hypervisor>nitro --max-pods=9999</hypervisor><networkInfo/></item>`,
			wantErr: `hypervisor "nitro --max-pods=9999" is not a word of EC2's (nitro, xen)`,
		},
		{
			name: "the largest counts",
			item: `<item><hypervisor>nitro</hypervisor><vCpuInfo><defaultVCpus>16384</defaultVCpus></vCpuInfo>
				<networkInfo><maximumNetworkInterfaces>1024</maximumNetworkInterfaces><ipv4AddressesPerInterface>1024</ipv4AddressesPerInterface></networkInfo></item>`,
			want: maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 16384, ENIs: 1024, IPv4PerENI: 1024},
		},
		{
			name:    "two network infos",
			item:    `<item><networkInfo/><networkInfo/></item>`,
			wantErr: "two networkInfo elements in item",
		},
		{
			name:    "elements where a count belongs",
			item:    `<item><networkInfo><ipv4AddressesPerInterface><item>1</item></ipv4AddressesPerInterface></networkInfo></item>`,
			wantErr: "ipv4AddressesPerInterface in networkInfo has elements inside, want text",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := readXML([]byte(tc.item))
			if err != nil {
				t.Fatal(err)
			}
			got, err := typeInfo(it)
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
