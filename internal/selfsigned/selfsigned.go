// Package selfsigned makes throw-away self-signed CA certificates: the demo's cluster
// CA, render's placeholder for a CA left to cluster discovery, and the tests'. The key
// is discarded, so nothing can be signed with them. It exists so that the one recipe
// (P-256, a CA valid for certificate signing) is written once.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"time"
)

// CA returns the DER of a self-signed CA certificate named commonName, valid from
// notBefore to notAfter.
func CA(commonName string, notBefore, notAfter time.Time) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}

// PEM encodes a certificate's DER as a PEM CERTIFICATE block.
func PEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
