package doctor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/eksboot/eksboot/internal/lazy"
)

// secretKeyValue finds a key that names a secret and its value, as YAML writes it
// (`token: v`, `client-key-data: v`) and as JSON does (`"password":"v"`,
// `"Authorization":["Bearer v"]`): group 1 is the key with what separates it from
// the value, group 2 its name, group 3 the value (a quoted string, a list, or a bare
// word; an object is not a value here, its own keys are looked at).
var secretKeyValue = lazy.Regexp{Expr: `(?i)("?([A-Za-z0-9_.-]*(?:token|passw(?:or)?d|secret|private|credential|key-data|certificate-data|authority-data|client-key|authorization|api-?key|bearer)[A-Za-z0-9_.-]*)"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|\[[^\]]*\]|[^\s,{}\[\]"][^\s,}\]]*)`}

// notSecretKey are the names, among those secretKeyValue finds, of values that are
// not secrets but where one is: tlsPrivateKeyFile, a token's TTL.
var notSecretKey = lazy.Regexp{Expr: `(?i)(file|path|dir|ttl|mode)$`}

// pemBlock is a PEM block (a key, a certificate), also inside one JSON string or
// behind comment marks, or cut short before its END line.
var pemBlock = lazy.Regexp{Expr: `(?s)-----BEGIN ([A-Z0-9 ]{1,40})-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|\z)`}

// redactFile hides the secrets of a node file's text before doctor shows a diff of
// it: the value of every key that names a secret (kubeconfig's token,
// client-key-data, client-certificate-data and certificate-authority-data, any
// password, secret, private key, credential or authorization) and every PEM block.
// Each is replaced by its length and a digest keyed for this run only, so that a
// changed value shows as changed in the diff while a weak password cannot be
// guessed from its digest.
func (d *run) redactFile(s string) string {
	s = pemBlock.Get().ReplaceAllStringFunc(s, func(m string) string {
		kind := pemBlock.Get().FindStringSubmatch(m)[1]
		return fmt.Sprintf("(a PEM block %s redacted, %s)", kind, d.digest(m))
	})
	return secretKeyValue.Get().ReplaceAllStringFunc(s, func(m string) string {
		g := secretKeyValue.Get().FindStringSubmatch(m)
		if notSecretKey.Get().MatchString(g[2]) {
			return m
		}
		v := g[3]
		if strings.HasPrefix(v, `"`) && len(v) >= 2 {
			return g[1] + `"(redacted, ` + d.digest(v[1:len(v)-1]) + `)"`
		}
		return g[1] + "(redacted, " + d.digest(v) + ")"
	})
}

// digest names v without showing it: its length and an HMAC-SHA256 prefix under a
// key drawn for this run.
func (d *run) digest(v string) string {
	if d.digestKey == nil {
		d.digestKey = make([]byte, 32)
		_, _ = rand.Read(d.digestKey)
	}
	m := hmac.New(sha256.New, d.digestKey)
	m.Write([]byte(v))
	return fmt.Sprintf("%d bytes, #%x", len(v), m.Sum(nil)[:4])
}
