package egress

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
)

// blankPNG is the base64 of a w×h PNG of one colour, two in its
// palette: a bit a pixel, compressed to a few hundred bytes.
func blankPNG(t testing.TB, w, h int) string {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// frameBeyondScreenGIF is the base64 of a GIF whose logical screen is
// one pixel and whose one frame is side pixels square (no colour table,
// its image data an LZW clear code and end code).
func frameBeyondScreenGIF(side int) string {
	b := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00")
	b = append(b, 0x21, 0xfe, 3, 'h', 'i', '!', 0) // a comment extension
	b = append(b, 0x2c, 0, 0, 0, 0, byte(side), byte(side>>8), byte(side), byte(side>>8), 0)
	b = append(b, 2, 2, 0x4c, 0x01, 0, 0x3b)
	return base64.StdEncoding.EncodeToString(b)
}

// jpegEncode writes a w×h grey JPEG to b.
func jpegEncode(b io.Writer, w, h int) error {
	return jpeg.Encode(b, image.NewGray(image.Rect(0, 0, w, h)), nil)
}

// gifEncode writes a w×h GIF of one colour to b.
func gifEncode(b io.Writer, w, h int) error {
	return gif.Encode(b, image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black}), nil)
}

// TestRedTeamImagesReckonedByTheirPixels: a provider bills an image by
// its size in pixels (Anthropic up to about 1,600 tokens, more for its
// high-resolution models; OpenAI's original detail up to 10,000 patches),
// not its bytes, and the gateway reckoned an image's base64 at a token
// per three bytes. A PNG of one colour, 2000 pixels square, is a few
// hundred bytes: 150 of them, 2,000 tokens each or more (300K), in a
// body of 100 KB were reckoned at 35K tokens, so the call's bound was
// priced at the ordinary rate, and its searches' readings at a sixth of
// what they bill. An image is now reckoned by its width and height (a
// token per 600 pixels, at most 16,384), where that is more than its
// bytes reckon.
func TestRedTeamImagesReckonedByTheirPixels(t *testing.T) {
	t.Parallel()
	img := blankPNG(t, 2000, 2000)
	var anthropic, openai, gemini []string
	for range 150 {
		anthropic = append(anthropic, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+img+`"}}`)
		openai = append(openai, `{"type":"input_image","detail":"high","image_url":"data:image/png;base64,`+img+`"}`)
		gemini = append(gemini, `{"inlineData":{"mimeType":"image/png","data":"`+img+`"}}`)
	}
	small := blankPNG(t, 100, 100)
	for _, r := range []struct {
		name, body, want string
	}{
		{"anthropic", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":[` + strings.Join(anthropic, ",") + `]}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"openai", `{"model":"gpt-5","input":[{"role":"user","content":[` + strings.Join(openai, ",") + `]}]}`, "gpt-5" + LongPrompt},
		{"gemini", `{"contents":[{"role":"user","parts":[` + strings.Join(gemini, ",") + `]}]}`, "gemini-3-pro" + LongPrompt},
		{"a small image", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + small + `"}}]}]}`, "claude-sonnet-5-5"},
		// A picture of one pixel is a hundred bytes of base64 and
		// billed 1,120 tokens by Gemini 3: 800 of them are 896K tokens
		// in 140 KB.
		{"gemini, tiny images", `{"contents":[{"role":"user","parts":[` + strings.Repeat(`{"inlineData":{"mimeType":"image/png","data":"`+blankPNG(t, 1, 1)+`"}},`, 800) + `{"text":"?"}]}]}`, "gemini-3-pro" + LongPrompt},
		// A GIF whose header states a screen of one pixel and whose
		// first frame is 2000 pixels square, a few dozen bytes: a
		// decoder that sizes the picture by its frame (as some grow the
		// screen to hold it) bills it as 2000 square, while the gateway
		// read the screen alone and reckoned it at the floor of 1,120:
		// 150 of them are 1.4M tokens by their frames in 12 KB.
		{"anthropic, GIFs larger than their screen", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":[` + strings.Repeat(`{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"`+frameBeyondScreenGIF(2000)+`"}},`, 150) + `{"type":"text","text":"?"}]}]}`, "claude-sonnet-5-5" + LongPrompt},
		// Video and audio given inline bill by their length (Gemini: 263
		// tokens a second of video, 32 of audio), which a still video
		// or silence holds in a few bytes a second.
		{"gemini, a video", `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"video/mp4","data":"AAAAIGZ0eXBpc29t"}}]}]}`, "gemini-3-pro" + LongPrompt},
		{"gemini, audio", `{"contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"Audio/ogg","data":"T2dnUwACAAAAAAAA"}}]}]}`, "gemini-3-pro" + LongPrompt},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			status, msg, asked := capsAsked(t, r.body)
			if status != http.StatusOK || len(asked) == 0 || asked[0] != r.want {
				t.Errorf("status %d (%.200s), Cap asked for %q, want %q first (body %d bytes)", status, msg, asked, r.want, len(r.body))
			}
		})
	}
}

// TestImageTokens: an image's tokens are reckoned from the size its
// header gives, in each format a provider takes; one whose size cannot
// be read at the most an image bills; anything else not at all.
func TestImageTokens(t *testing.T) {
	t.Parallel()
	enc := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	var jpg, gif bytes.Buffer
	if err := jpegEncode(&jpg, 1200, 600); err != nil {
		t.Fatal(err)
	}
	if err := gifEncode(&gif, 300, 200); err != nil {
		t.Fatal(err)
	}
	riff := func(chunk string, body []byte) string {
		b := append([]byte("RIFF\x00\x00\x00\x00WEBP"+chunk+"\x0a\x00\x00\x00"), body...)
		return enc(append(b, make([]byte, 16)...))
	}
	for _, r := range []struct {
		name, b64 string
		want      int64
	}{
		{"png", blankPNG(t, 3000, 1200), 3008*1216/imagePixels + 1}, // in whole patches of 32
		{"one pixel", blankPNG(t, 1, 1), imageFloor},
		{"a GIF's frame beyond its screen", frameBeyondScreenGIF(2000), 2016*2016/imagePixels + 1},
		// 500 patches, 1,230 tokens to a nano model of OpenAI's.
		{"a column of one pixel", blankPNG(t, 1, 16000), 32*16000/imagePixels + 1},
		{"png as a data URL", "data:image/png;base64," + blankPNG(t, 1200, 1200), 1216*1216/imagePixels + 1},
		{"jpeg", enc(jpg.Bytes()), 1216*608/imagePixels + 1},
		{"gif", enc(gif.Bytes()), imageFloor},                                                              // 300 by 200
		{"webp, extended", riff("VP8X", []byte{0, 0, 0, 0, 0xff, 0x0f, 0, 0xff, 0x0f, 0}), maxImageTokens}, // 4096 square
		{"webp, lossless", riff("VP8L", []byte{0x2f, 0xff, 0xc3, 0xff, 0x00}), 1024*1024/imagePixels + 1},
		{"webp, lossy", riff("VP8 ", []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0x00, 0x04, 0x00, 0x02}), 1024*512/imagePixels + 1},
		{"webp, unreadable", riff("VP8Z", nil), maxImageTokens},
		{"webp in base64url", strings.NewReplacer("+", "-", "/", "_").Replace(enc(append([]byte("RIFF\xfb\xff\xff\x00WEBPVP8L\x0a\x00\x00\x00\x2f\xff\xc3\xff\x00"), make([]byte, 16)...))), 1024*1024/imagePixels + 1},
		{"heic", enc([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")), maxImageTokens},
		{"png, cut short", enc([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")), maxImageTokens},
		{"a PDF", enc([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")), 0},
		{"text", enc([]byte("hello, world, hello, world")), 0},
		{"not base64", "!!!!!!!!!!!!!!!!", 0},
	} {
		if got := imageTokens(r.b64); got != r.want {
			t.Errorf("%s: %d tokens, want %d", r.name, got, r.want)
		}
	}
}

// TestTileImageTokens: an image's tokens to gpt-4o-mini are reckoned by
// the tiles of 512 pixels square it makes once scaled as the provider
// scales it (to fit 2048 square, then its shorter side to 768), 2,833
// and 5,667 a tile; an image whose size cannot be read at the most
// tiles (8); anything else not at all.
func TestTileImageTokens(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, b64 string
		want      int64
	}{
		{"one pixel", blankPNG(t, 1, 1), tileBase + tileTokens},
		{"the widest", blankPNG(t, 2048, 768), tileBase + 8*tileTokens},
		{"scaled to fit, then its shorter side", blankPNG(t, 4096, 4096), tileBase + 4*tileTokens}, // 768 square
		{"a column", blankPNG(t, 1, 16000), tileBase + 4*tileTokens},                               // 1 by 2048
		{"wide, scaled to fit", blankPNG(t, 8000, 1000), tileBase + 4*tileTokens},                  // 2048 by 256
		{"unreadable", enc64([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")), tileBase + tileMost*tileTokens},
		{"a PDF", enc64([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")), 0},
	} {
		if got := tileImageTokens(r.b64); got != r.want {
			t.Errorf("%s: %d tokens, want %d", r.name, got, r.want)
		}
	}
	for _, r := range []struct {
		model string
		want  bool
	}{{"gpt-4o-mini", true}, {"GPT-4o-mini-2024-07-18", true}, {"gpt-4o-mini-search-preview" + LongPrompt, true}, {"gpt-4o", false}, {"gpt-4.1-mini", false}} {
		if got := tileBilled(r.model); got != r.want {
			t.Errorf("tileBilled(%q) = %v, want %v", r.model, got, r.want)
		}
	}
}

func enc64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestRedTeamNanoImagesAtOriginalDetail: a program sends gpt-5-nano
// ten large images at OpenAI's original detail, each up to 10,000
// patches of 32 pixels at nano's multiplier of 2.46: 24,600 tokens an
// image, 246,000 in all. Every image was held to 16,384, the most any
// other model bills one, so the call was reckoned 82,000 tokens short
// and bounded at the ordinary rate. A model billing images at nano's
// rate (nanoBilled) now reckons each up to 24,600.
func TestRedTeamNanoImagesAtOriginalDetail(t *testing.T) {
	t.Parallel()
	img := blankPNG(t, 4000, 4000) // 15,625 patches, 10,000 at most billed
	parts := make([]string, 10)
	for i := range parts {
		parts[i] = `{"type":"input_image","detail":"original","image_url":"data:image/png;base64,` + img + `"}`
	}
	body := `{"model":"gpt-5-nano","input":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
	shape, err := readModelBody(ProviderOpenAI, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		model string
		least int64
	}{{"gpt-5-nano", 10 * 24600}, {"gpt-4.1-nano-2025-04-14", 10 * 24600}, {"gpt-5-mini", 10 * 16200}} {
		if got := shape.promptTokensTo(r.model, int64(len(body))); got < r.least {
			t.Errorf("%s: ten images reckoned at %d tokens, billed up to %d", r.model, got, r.least)
		}
	}
	if got := shape.promptTokensTo("gpt-5", int64(len(body))); got > 10*maxImageTokens+int64(len(body)) {
		t.Errorf("gpt-5: ten images reckoned at %d tokens, over 16,384 each", got)
	}
}

// TestRedTeamRoutedModelNamesReckonedAsTheirModel: the program names a
// nano model or gpt-4o-mini by a router's name for it (openai/gpt-5-nano
// behind an OpenAI-compatible base URL, which the meter prices as
// gpt-5-nano), in upper case, or a fine-tuned one (ft:gpt-4o-mini-…),
// billed as the model it names. The nano and tile rules looked for a
// name beginning gpt-, so those images were reckoned by pixels alone:
// ten 4000-pixel squares at 16,384 each, not 24,600; a 2048 by 768
// picture at some 3,800, not gpt-4o-mini's 48,169.
func TestRedTeamRoutedModelNamesReckonedAsTheirModel(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		w, h   int
		models []string
		least  int64 // each image's tokens at the least
	}{
		{4000, 4000, []string{"openai/gpt-5-nano", "OpenAI/GPT-5-Nano", "ft:gpt-4.1-nano-2025-04-14:org::a1"}, 24600},
		{2048, 768, []string{"openai/gpt-4o-mini", "ft:gpt-4o-mini-2024-07-18:org:custom:a1", "openrouter/openai/gpt-4o-mini"}, 48169},
	} {
		img := blankPNG(t, r.w, r.h)
		parts := make([]string, 10)
		for i := range parts {
			parts[i] = `{"type":"input_image","detail":"original","image_url":"data:image/png;base64,` + img + `"}`
		}
		body := `{"model":"m","input":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
		shape, err := readModelBody(ProviderOpenAI, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range r.models {
			if got := shape.promptTokensTo(m, int64(len(body))); got < 10*r.least {
				t.Errorf("%s: ten %dx%d images reckoned at %d tokens, billed up to %d", m, r.w, r.h, got, 10*r.least)
			}
		}
	}
}
