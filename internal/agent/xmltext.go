package agent

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// xmlEncoding is how an XML file's characters are stored, as an XML
// reader (.NET's, which NuGet uses; Java's, Maven's) tells it from the
// file's first bytes: a byte order mark, or without one the way "<" is
// spelt (XML 1.0, appendix F). A configuration saved as UTF-16 (Windows
// PowerShell's Unicode) is read as well as a UTF-8 one.
type xmlEncoding int

const (
	xmlUTF8 xmlEncoding = iota
	xmlUTF16LE
	xmlUTF16BE
	xmlUTF32LE
	xmlUTF32BE
)

// xmlSignatures are the first bytes that tell an encoding, with how
// many of them are a byte order mark; longer ones first.
var xmlSignatures = []struct {
	prefix []byte
	enc    xmlEncoding
	bom    int
}{
	{[]byte{0x00, 0x00, 0xfe, 0xff}, xmlUTF32BE, 4},
	{[]byte{0xff, 0xfe, 0x00, 0x00}, xmlUTF32LE, 4},
	{[]byte{0x00, 0x00, 0x00, '<'}, xmlUTF32BE, 0},
	{[]byte{'<', 0x00, 0x00, 0x00}, xmlUTF32LE, 0},
	{[]byte{0xfe, 0xff}, xmlUTF16BE, 2},
	{[]byte{0xff, 0xfe}, xmlUTF16LE, 2},
	{[]byte{0x00, '<'}, xmlUTF16BE, 0},
	{[]byte{'<', 0x00}, xmlUTF16LE, 0},
}

// xmlText is an XML file's bytes as UTF-8 text, and a function giving
// text (that text changed) back in the file's own encoding, its byte
// order mark kept. A UTF-8 file is returned as it is.
func xmlText(b []byte) (text []byte, back func([]byte) []byte) {
	same := func(t []byte) []byte { return t }
	for _, s := range xmlSignatures {
		if !bytes.HasPrefix(b, s.prefix) {
			continue
		}
		bom := append([]byte(nil), b[:s.bom]...)
		return decodeXML(b[s.bom:], s.enc), func(t []byte) []byte { return append(bom, encodeXML(t, s.enc)...) }
	}
	return b, same
}

// byteOrder reads and appends the units of a UTF-16 or UTF-32 text.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// byteOrder is the byte order of enc.
func (enc xmlEncoding) byteOrder() byteOrder {
	if enc == xmlUTF16BE || enc == xmlUTF32BE {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// decodeXML is b, stored as enc (UTF-16 or UTF-32), as UTF-8; a unit
// that stands for no character becomes U+FFFD, a trailing odd byte is
// dropped.
func decodeXML(b []byte, enc xmlEncoding) []byte {
	order := enc.byteOrder()
	var runes []rune
	if enc == xmlUTF32LE || enc == xmlUTF32BE {
		for ; len(b) >= 4; b = b[4:] {
			r := rune(order.Uint32(b))
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			runes = append(runes, r)
		}
		return []byte(string(runes))
	}
	units := make([]uint16, 0, len(b)/2)
	for ; len(b) >= 2; b = b[2:] {
		units = append(units, order.Uint16(b))
	}
	return []byte(string(utf16.Decode(units)))
}

// encodeXML is t, UTF-8 text, stored as enc (UTF-16 or UTF-32).
func encodeXML(t []byte, enc xmlEncoding) []byte {
	order := enc.byteOrder()
	runes := []rune(string(t))
	var out []byte
	if enc == xmlUTF32LE || enc == xmlUTF32BE {
		for _, r := range runes {
			out = order.AppendUint32(out, uint32(r))
		}
		return out
	}
	for _, u := range utf16.Encode(runes) {
		out = order.AppendUint16(out, u)
	}
	return out
}
