package agent

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedTeamKeysWithoutPEMLines: a held variable whose name says
// nothing of a secret names a private key in DER, as Java reads one
// (PKCS8EncodedKeySpec), or a key's base64 without its PEM lines, as a
// warehouse's or a signer's key is kept in a secret (the body of a
// PKCS#8 PEM). Neither holds a "PRIVATE KEY" line, and a contained agent
// read each: PKCS#8 (RSA, EC, Ed25519), PKCS#1 and SEC1 in DER, and the
// base64 of one. A DER certificate stays readable.
func TestRedTeamKeysWithoutPEMLines(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-derkeys-")
	der := derKeys(t)
	files := map[string][]byte{}
	var env []string
	for name, b := range der {
		files[name] = b
		env = append(env, "APP_"+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))+"="+filepath.Join(dir, name))
	}
	b64 := base64.StdEncoding.EncodeToString(der["pkcs8-ec.der"])
	files["snowflake.txt"] = []byte(b64[:40] + "\n" + b64[40:] + "\n")
	env = append(env, "APP_WAREHOUSE="+filepath.Join(dir, "snowflake.txt"), "PATH=/usr/bin:/bin")
	var script strings.Builder
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		script.WriteString("echo read:" + name + ":$(wc -c <" + filepath.Join(dir, name) + " 2>/dev/null); ")
	}
	script.WriteString("true")
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", script.String())
	for name := range files {
		want := name == "cert.der"
		if got := strings.Contains(out, fmt.Sprintf("read:%s:%d\n", name, len(files[name]))); got != want {
			t.Errorf("%s: readable=%v, want %v (%s)", name, got, want, out)
		}
	}
}

// derKeys are private keys of each kind in DER, and a certificate.
func derKeys(t *testing.T) map[string][]byte {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"pkcs1-rsa.der": x509.MarshalPKCS1PrivateKey(rk)}
	for name, k := range map[string]any{"pkcs8-ec.der": ec, "pkcs8-rsa.der": rk, "pkcs8-ed25519.der": ed} {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	if out["sec1-ec.der"], err = x509.MarshalECPrivateKey(ec); err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ci"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	if out["cert.der"], err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ec.PublicKey, ec); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDERKeyStart: which first bytes are a private key in DER.
func TestDERKeyStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		head []byte
		want bool
	}{
		{"encrypted PKCS#8, PBES2", []byte{0x30, 0x82, 0x01, 0x00, 0x30, 0x4e, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0d, 0x30, 0x41}, true},
		{"encrypted PKCS#8, PKCS#12 scheme", []byte{0x30, 0x81, 0xf0, 0x30, 0x1c, 0x06, 0x0a, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c, 0x01, 0x03, 0x30, 0x0e}, true},
		{"a certificate signing request", []byte{0x30, 0x82, 0x01, 0x00, 0x30, 0x81, 0xa6, 0x02, 0x01, 0x00, 0x30, 0x45}, false},
		{"a PKCS#7 bundle", []byte{0x30, 0x82, 0x05, 0x00, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02}, false},
		{"text", []byte("0 hello world"), false},
		{"too short", []byte{0x30, 0x03, 0x02, 0x01}, false},
	} {
		if got := derKeyStart(c.head); got != c.want {
			t.Errorf("derKeyStart(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRedTeamBinaryKeyFiles: a held variable whose name says nothing of
// a secret names a binary credential with no text to find: an OpenPGP
// secret key as `gpg --export-secret-keys` writes it (a release
// signer's), a Kerberos keytab (a service's password keys) or a
// Kerberos ticket cache. A contained agent read each; the public key
// beside the secret one stays readable.
func TestRedTeamBinaryKeyFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-binkeys-")
	files := map[string]string{}
	for name, b := range binaryKeys() {
		files[name] = string(b) + "loot-" + name
	}
	files["signer.pub.gpg"] = "\x98\x33\x04\x6b\x0b\xd4\x3f\x16\x09\x2b\x06\x01\x04\x01public-key-readable"
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin"}
	for name := range files {
		env = append(env, "APP_"+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))+"="+filepath.Join(dir, name))
	}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// binaryKeys are the first bytes of binary credential files: OpenPGP
// secret keys (old and new packet formats), a keytab (versions 1 and
// 2) and a ticket cache (versions 3 and 4).
func binaryKeys() map[string][]byte {
	return map[string][]byte{
		"signer.gpg":     {0x94, 0x58, 0x04, 0x6b, 0x0b, 0xd4, 0x3f, 0x16, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47},
		"signer-rsa.pgp": {0x95, 0x07, 0xc6, 0x04, 0x5a, 0x0b, 0xd4, 0x3f, 0x01, 0x10, 0x00, 0xc1, 0x2e},
		"signer-new.gpg": {0xc5, 0x58, 0x04, 0x6b, 0x0b, 0xd4, 0x3f, 0x16, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47},
		"svc.keytab":     {0x05, 0x02, 0x00, 0x00, 0x00, 0x3b, 0x00, 0x01, 0x00, 0x09, 'C', 'O', 'R', 'P', '.', 'L', 'O', 'C', 'L', 0x00, 0x02, 'c', 'i'},
		"old.keytab":     {0x05, 0x01, 0x00, 0x00, 0x00, 0x3b, 0x00, 0x02, 0x00, 0x09, 'C', 'O', 'R', 'P', '.', 'L', 'O', 'C', 'L', 0x00, 0x02, 'c', 'i'},
		"tickets":        {0x05, 0x04, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x08, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01},
		"tickets-v3":     {0x05, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 'C', 'O', 'R', 'P', '.', 'L', 'O', 'C', 'L'},
	}
}

// TestBinaryKeyStarts: the binary credentials' first bytes are keys;
// an OpenPGP public key, an ELF program, a gzip file and text are not.
func TestBinaryKeyStarts(t *testing.T) {
	t.Parallel()
	for name, b := range binaryKeys() {
		if looksLikeSecret(b) != sniffKey {
			t.Errorf("%s: not judged a key", name)
		}
	}
	for _, b := range []string{"\x98\x33\x04\x6b\x0b\xd4\x3f\x16\x09\x2b\x06\x01", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", "\x05\x02 plain text after", "hello, world and more"} {
		if looksLikeSecret([]byte(b)) != sniffNone {
			t.Errorf("%q judged a key", b)
		}
	}
}
