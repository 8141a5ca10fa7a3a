package ec2test

import (
	"encoding/xml"

	"github.com/eksboot/eksboot/maxpods"
)

// The EC2 Query XML shapes, cut down to the elements eksboot reads (plus a few that
// real responses always carry).

type errorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []errorXML `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

type errorXML struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

type describeInstancesResponse struct {
	XMLName      xml.Name `xml:"DescribeInstancesResponse"`
	Xmlns        string   `xml:"xmlns,attr"`
	RequestID    string   `xml:"requestId"`
	Reservations struct {
		Items []reservationXML `xml:"item"`
	} `xml:"reservationSet"`
}

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        struct{}      `xml:"groupSet"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type instanceXML struct {
	InstanceID     string   `xml:"instanceId"`
	State          stateXML `xml:"instanceState"`
	PrivateDNSName string   `xml:"privateDnsName"`
}

type stateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type describeInstanceTypesResponse struct {
	XMLName       xml.Name `xml:"DescribeInstanceTypesResponse"`
	Xmlns         string   `xml:"xmlns,attr"`
	RequestID     string   `xml:"requestId"`
	InstanceTypes struct {
		Items []instanceTypeXML `xml:"item"`
	} `xml:"instanceTypeSet"`
}

type instanceTypeXML struct {
	InstanceType string     `xml:"instanceType"`
	Hypervisor   string     `xml:"hypervisor,omitempty"`
	VCPU         *vcpuXML   `xml:"vCpuInfo"`
	Network      networkXML `xml:"networkInfo"`
}

type vcpuXML struct {
	DefaultVCpus int `xml:"defaultVCpus"`
}

type networkXML struct {
	MaximumNetworkInterfaces  int       `xml:"maximumNetworkInterfaces"`
	MaximumNetworkCards       int       `xml:"maximumNetworkCards"`
	DefaultNetworkCardIndex   int       `xml:"defaultNetworkCardIndex"`
	NetworkCards              []cardXML `xml:"networkCards>item"`
	Ipv4AddressesPerInterface int       `xml:"ipv4AddressesPerInterface"`
}

type cardXML struct {
	NetworkCardIndex         int `xml:"networkCardIndex"`
	MaximumNetworkInterfaces int `xml:"maximumNetworkInterfaces"`
}

// instanceTypeXMLFor describes name with one network card, the default, holding all
// of info.ENIs.
func instanceTypeXMLFor(name string, info maxpods.TypeInfo) instanceTypeXML {
	it := instanceTypeXML{
		InstanceType: name,
		Hypervisor:   info.Hypervisor,
		Network: networkXML{
			MaximumNetworkInterfaces:  info.ENIs,
			MaximumNetworkCards:       1,
			NetworkCards:              []cardXML{{NetworkCardIndex: 0, MaximumNetworkInterfaces: info.ENIs}},
			Ipv4AddressesPerInterface: info.IPv4PerENI,
		},
	}
	if info.VCPUs != 0 {
		it.VCPU = &vcpuXML{DefaultVCpus: info.VCPUs}
	}
	return it
}
