package egress

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"image"
	_ "image/gif"  // the sizes of GIF images given inline
	_ "image/jpeg" // of JPEG ones
	_ "image/png"  // of PNG ones
	"io"
	"strings"
)

// Images given inline are billed by their size in pixels, not their
// bytes: Anthropic's about a token per 750 pixels (up to about 1,600,
// more for its high-resolution models), OpenAI's original detail a
// patch of 32 by 32 each (up to 10,000, times 1.62 for its mini models
// and 2.46 for its nano ones: a token per 416 pixels), Gemini's a few
// hundred per tile of 768 by 768, and Gemini 3's a fixed count per
// image whatever its size (1,120 at its default resolution for images).
// imagePixels is the pixels a token of any of them holds at the
// fewest, counted in whole patches of 32 by 32 (a picture one pixel
// wide is a column of patches); imageFloor the tokens any image may be
// billed however small (a picture of one pixel, a hundred bytes of
// base64, is billed 1,120 tokens by Gemini 3, 85 times a model's
// multiplier at OpenAI's low detail); and maxImageTokens the most
// tokens one image is billed: what an image whose size cannot be read
// is reckoned at.
const (
	imagePixels    = 416
	imagePatch     = 32
	imageFloor     = 1120
	maxImageTokens = 16384
)

// imageTokens reckons the tokens an image given inline as b64 (its
// base64, or a data: URL) may be billed, at most: by its width and
// height in whole patches (imagePixels), at least imageFloor,
// maxImageTokens where they cannot be read from an image's header, and
// 0 where b64 is no image (a document, audio).
func imageTokens(b64 string) int64 {
	return imageTokensUpTo(b64, maxImageTokens)
}

// nanoImageTokens is the most tokens a model of nanoBilled bills an
// image: OpenAI's original detail, 10,000 patches at nano's multiplier
// of 2.46, above maxImageTokens.
const nanoImageTokens = 24600

// nanoBilled says whether model bills images at OpenAI's nano rate
// (gpt-5-nano, gpt-4.1-nano), whose most an image is nanoImageTokens.
func nanoBilled(model string) bool {
	m := baseModel(model)
	return strings.HasPrefix(m, "gpt-") && strings.Contains(m, "-nano")
}

// baseModel is model in lower case without a router's prefix (what its
// last slash follows: openai/gpt-5-nano) or a fine-tuned model's ft:,
// the model whose rates the provider bills it at. Before, the rules on
// images looked at the name as given: openai/gpt-5-nano, which the
// meter prices as gpt-5-nano, had its images reckoned as another model's
// (TestRedTeamRoutedModelNamesReckonedAsTheirModel).
func baseModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return strings.TrimPrefix(m, "ft:")
}

// imageTokensUpTo is imageTokens with most the tokens an image is
// billed at the most.
func imageTokensUpTo(b64 string, most int64) int64 {
	w, h, isImage, ok := imageSize(b64)
	switch {
	case !isImage:
		return 0
	case !ok:
		return most
	}
	patches := func(d int64) int64 { return (d + imagePatch - 1) / imagePatch * imagePatch }
	return min(max(patches(w)*patches(h)/imagePixels+1, imageFloor), most)
}

// gpt-4o-mini bills an image by tiles of 512 pixels square at 33 times
// gpt-4o's rate: tileBase for the image and tileTokens a tile, once the
// image is scaled to fit tileFit square and then its shorter side to
// tileShort; at most tileMost tiles (2048 by 768), 48,169 tokens.
const (
	tileBase   = 2833
	tileTokens = 5667
	tileSide   = 512
	tileFit    = 2048
	tileShort  = 768
	tileMost   = 8
)

// tileBilled says whether model bills images by gpt-4o-mini's tiles.
func tileBilled(model string) bool {
	return strings.HasPrefix(baseModel(model), "gpt-4o-mini")
}

// tileImageTokens reckons the tokens the image b64 may be billed by a
// model of tileBilled, at most: at its size, scaled as the provider
// does, in whole tiles; at the most tiles where its size cannot be
// read; 0 where b64 is no image.
func tileImageTokens(b64 string) int64 {
	w, h, isImage, ok := imageSize(b64)
	switch {
	case !isImage:
		return 0
	case !ok:
		return tileBase + tileTokens*tileMost
	}
	if long := max(w, h); long > tileFit {
		w, h = max(w*tileFit/long, 1), max(h*tileFit/long, 1)
	}
	if short := min(w, h); short > tileShort {
		w, h = max(w*tileShort/short, 1), max(h*tileShort/short, 1)
	}
	tiles := (w + tileSide - 1) / tileSide * ((h + tileSide - 1) / tileSide)
	return tileBase + tileTokens*min(tiles, tileMost)
}

// imageSize reads the width and height of the image given inline as b64
// (its base64, or a data: URL) from its header: isImage says b64 begins
// as an image a provider takes, ok that its size could be read.
func imageSize(b64 string) (w, h int64, isImage, ok bool) {
	if strings.HasPrefix(strings.ToLower(b64), "data:") {
		_, b64, _ = strings.Cut(b64, ",")
	}
	if len(b64) < 8 {
		return 0, 0, false, false
	}
	if strings.ContainsAny(b64, "-_") {
		// base64url, which Gemini's reader takes as well.
		b64 = strings.NewReplacer("-", "+", "_", "/").Replace(b64)
	}
	head := make([]byte, 32)
	n, _ := io.ReadFull(base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64[:min(len(b64), 44)])), head)
	head = head[:n]
	if !imageMagic(head) {
		return 0, 0, false, false
	}
	w, h, ok = webpSize(head)
	if !ok && strings.HasPrefix(string(head), "GIF8") {
		w, h, ok = gifSize(bufio.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64))))
	}
	if !ok {
		cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64)))
		w, h, ok = int64(cfg.Width), int64(cfg.Height), err == nil
	}
	if !ok || w <= 0 || h <= 0 || w > maxImageTokens*imagePixels || h > maxImageTokens*imagePixels {
		return 0, 0, true, false
	}
	return w, h, true, true
}

// imageMagic says whether head begins as an image format a provider
// takes does: PNG, JPEG, GIF, WebP, HEIC or HEIF, AVIF.
func imageMagic(head []byte) bool {
	s := string(head)
	switch {
	case strings.HasPrefix(s, "\x89PNG"), strings.HasPrefix(s, "\xff\xd8"), strings.HasPrefix(s, "GIF8"):
		return true
	case strings.HasPrefix(s, "RIFF") && len(s) >= 12 && s[8:12] == "WEBP":
		return true
	case len(s) >= 12 && s[4:8] == "ftyp":
		switch s[8:12] {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", "avif", "avis":
			return true
		}
	}
	return false
}

// webpSize reads a WebP image's width and height from its first 30
// bytes (head): the canvas of an extended one (VP8X), or the frame of a
// lossless (VP8L) or lossy (VP8) one.
func webpSize(head []byte) (w, h int64, ok bool) {
	if len(head) < 30 || string(head[:4]) != "RIFF" || string(head[8:12]) != "WEBP" {
		return 0, 0, false
	}
	u24 := func(b []byte) int64 { return int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16 }
	switch string(head[12:16]) {
	case "VP8X":
		return u24(head[24:27]) + 1, u24(head[27:30]) + 1, true
	case "VP8L":
		bits := binary.LittleEndian.Uint32(head[21:25])
		return int64(bits&0x3fff) + 1, int64(bits>>14&0x3fff) + 1, head[20] == 0x2f
	case "VP8 ":
		return int64(binary.LittleEndian.Uint16(head[26:28]) & 0x3fff), int64(binary.LittleEndian.Uint16(head[28:30]) & 0x3fff), true
	}
	return 0, 0, false
}

// gifSize reads a GIF's size from r: its logical screen, grown to hold
// its first frame where that frame lies beyond it. Decoders differ on
// such a frame (one clips it, another sizes the picture by it, another
// grows the screen), so the larger is taken. Before, the screen alone
// was read: a GIF stating a screen of one pixel around a frame 2000
// pixels square was reckoned at the floor.
func gifSize(r *bufio.Reader) (w, h int64, ok bool) {
	var head [13]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || string(head[:4]) != "GIF8" {
		return 0, 0, false
	}
	u16 := func(b []byte) int64 { return int64(binary.LittleEndian.Uint16(b)) }
	w, h = u16(head[6:8]), u16(head[8:10])
	if flags := head[10]; flags&0x80 != 0 {
		if _, err := r.Discard(3 << (flags&7 + 1)); err != nil { // the global colour table
			return w, h, true
		}
	}
	for {
		c, err := r.ReadByte()
		switch {
		case err != nil || c != 0x21 && c != 0x2c:
			return w, h, true // the end, or no frame
		case c == 0x2c:
			var d [8]byte
			if _, err := io.ReadFull(r, d[:]); err != nil {
				return w, h, true
			}
			return max(w, u16(d[0:2])+u16(d[4:6])), max(h, u16(d[2:4])+u16(d[6:8])), true
		}
		if !skipGIFExtension(r) {
			return w, h, true
		}
	}
}

// skipGIFExtension reads a GIF extension's label and data sub-blocks
// from r, after its introducer, saying whether they were whole.
func skipGIFExtension(r *bufio.Reader) bool {
	if _, err := r.ReadByte(); err != nil {
		return false
	}
	for {
		n, err := r.ReadByte()
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
		if _, err := r.Discard(int(n)); err != nil {
			return false
		}
	}
}
