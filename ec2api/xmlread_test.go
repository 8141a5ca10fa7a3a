package ec2api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// stdTree reads b with encoding/xml (strict) into the same kind of tree as readXML:
// local names, character data concatenated per element, comments and processing
// instructions skipped. It refuses what readXML refuses outright as a matter of
// policy (a directive, text outside the root, a second root), so that only the
// XML itself is compared.
func stdTree(b []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*element
	var root *element
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local}
			if tok.Name.Space != "" {
				e.name = tok.Name.Space + ":" + tok.Name.Local
			}
			switch {
			case len(stack) > 0:
				stack[len(stack)-1].kids = append(stack[len(stack)-1].kids, e)
			case root != nil:
				return nil, errors.New("second root")
			default:
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.Trim(tok, " \t\r\n")) > 0 {
					return nil, errors.New("text outside the root")
				}
				continue
			}
			stack[len(stack)-1].text += string(tok)
		case xml.Directive:
			return nil, errors.New("directive")
		}
	}
	if len(stack) > 0 || root == nil {
		return nil, errors.New("unfinished")
	}
	return root, nil
}

// sameTree reports whether a and b have the same names, texts and children.
func sameTree(a, b *element) bool {
	if a.name != b.name || a.text != b.text || len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !sameTree(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// xmlSeeds are answers of the fake and of EC2, and the edges of the grammar.
var xmlSeeds = []string{
	`<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><reservationSet><item><instancesSet><item><instanceId>i-1</instanceId><privateDnsName>ip-10-0-0-1.ec2.internal</privateDnsName></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
	`<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>x</RequestID></Response>`,
	"<a>x &amp; y &lt;&gt; &quot;&apos; &#65;&#x42;\r\nz\r</a>",
	"<a><![CDATA[<not> &amp; a tag]]>\r\n</a>",
	"<a><!-- a comment --><b/><?pi data?></a>",
	"<a b='1' c=\"2\"  d = '3'/>",
	"<a>&#13;&#xD;&#0;</a>",
	"<a>&unknown;</a>",
	"<a><b></a></b>",
	"<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>",
	"<a>\x00</a>",
	"<a>\xff</a>",
	"<x:a xmlns:x='u'/>",
	"<?xml version='1.1'?><a/>",
	"<?xml version=\"1.0\" encoding=\"latin1\"?><a/>",
	"<a></a><b></b>",
	"text<a/>",
	"<a><!-- -- --></a>",
}

// TestReadXMLAgreesWithEncodingXML checks the seeds: what readXML accepts,
// encoding/xml accepts, with the same tree.
func TestReadXMLAgreesWithEncodingXML(t *testing.T) {
	for _, s := range xmlSeeds {
		checkAgainstStd(t, []byte(s))
	}
}

func checkAgainstStd(t *testing.T, b []byte) {
	t.Helper()
	got, err := readXML(b)
	if err != nil {
		if !errors.Is(err, errXML) {
			t.Fatalf("readXML(%q): error %v does not wrap errXML", b, err)
		}
		return
	}
	want, stdErr := stdTree(b)
	if stdErr != nil {
		t.Fatalf("readXML(%q) accepts what encoding/xml refuses (%v)", b, stdErr)
	}
	if !sameTree(got, want) {
		t.Fatalf("readXML(%q) and encoding/xml read different trees", b)
	}
}

// FuzzReadXML: readXML accepts a subset of what encoding/xml accepts, and reads
// the same tree from it.
func FuzzReadXML(f *testing.F) {
	for _, s := range xmlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkAgainstStd(t, b) })
}

// TestReadXMLRefuses: the hostile answers readXML refuses, each with its reason.
func TestReadXMLRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"oversized", "<a>" + strings.Repeat("x", maxAnswer) + "</a>", "larger than 1048576 bytes"},
		{"deep", strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1), "nested deeper than 32"},
		{"too many elements", "<a>" + strings.Repeat("<b/>", maxElements) + "</a>", "more than 16384 elements"},
		{"crossed nesting", "<a><b></a></b>", "end tag a closes b"},
		{"end without start", "<a/></a>", "end tag a without a start"},
		{"unfinished", "<a><b>", "ends inside b"},
		{"empty", "", "no element"},
		{"two roots", "<a/><b/>", "a second root element b"},
		{"doctype", "<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>", "a DOCTYPE"},
		{"unknown entity", "<a>&e;</a>", "entity &e; is not one of XML's five"},
		{"bare ampersand", "<a>fish & chips</a>", "'&' not starting a reference"},
		{"NUL reference", "<a>&#0;</a>", "character reference &#0; is not an XML character"},
		{"NUL", "<a>\x00</a>", "character U+0000 is not allowed in XML"},
		{"bad UTF-8", "<a>\xff</a>", "invalid UTF-8"},
		{"prefix", "<x:a xmlns:x='u'/>", "namespace prefixes are not read"},
		{"unquoted attribute", "<a b=1/>", "attribute value not quoted"},
		{"text outside", "hello<a/>", "text outside the root element"},
		{"version", "<?xml version='1.1'?><a/>", `XML version "1.1", want 1.0`},
		{"encoding", "<?xml version='1.0' encoding='UTF-16'?><a/>", `encoding "UTF-16", want UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readXML([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errXML) {
				t.Fatalf("readXML: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
