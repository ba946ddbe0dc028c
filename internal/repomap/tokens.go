package repomap

// Tokenization is shared by the map (content terms) and by rankers (query
// terms), so both sides of a match see words the same way.

// SplitIdent splits an identifier on underscores, digits boundaries and
// camelCase humps: "parseHTTPRequest_v2" -> ["parse", "HTTP", "Request", "v2"].
func SplitIdent(s string) []string {
	var parts []string
	eachPart([]byte(s), func(p []byte) { parts = append(parts, string(p)) })
	return parts
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }

// IsIdentByte reports whether c can be part of an identifier word.
func IsIdentByte(c byte) bool { return isAlnum(c) || c == '_' }

// EachTerm calls fn for every index term in text: each identifier-like word
// lowercased and joined (get_user_name -> getusername) and, when it has
// several parts, each part too. Terms are lightly stemmed. Bytes outside
// ASCII act as separators, so any encoding is safe.
func EachTerm(text []byte, fn func(term string)) {
	eachTermBytes(text, func(t []byte) { fn(string(t)) })
}

// Terms returns the index terms of s in order (with repeats).
func Terms(s string) []string {
	var out []string
	EachTerm([]byte(s), func(t string) { out = append(out, t) })
	return out
}

// eachTermBytes is EachTerm without allocation: the slice passed to fn is
// only valid during the call.
func eachTermBytes(text []byte, fn func(term []byte)) {
	var s termScratch
	i := 0
	for i < len(text) {
		if !IsIdentByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && IsIdentByte(text[j]) {
			j++
		}
		s.word(text[i:j], fn)
		i = j
	}
}

// termScratch holds the buffers a word is folded and split into.
type termScratch struct{ joined, part []byte }

// word passes the index terms of word, a whole run of identifier bytes,
// to fn: the word folded and stemmed unless it is a stopword, then its
// parts (see eachPartTerm).
func (s *termScratch) word(word []byte, fn func(term []byte)) {
	if len(word) < 2 || len(word) > 64 {
		return
	}
	var hasSplit bool
	s.joined, hasSplit = foldWord(s.joined[:0], word)
	if len(s.joined) < 2 || allDigits(s.joined) {
		return
	}
	s.part = append(s.part[:0], s.joined...)
	full := stemBytes(s.part)
	if !stopwordBytes(s.joined) {
		fn(full)
	}
	if hasSplit {
		s.part = eachPartTerm(word, s.joined, s.part, fn)
	}
}

// foldWord appends word lowercased and without underscores to buf, and
// says whether it has parts of its own (snake_case or camelCase).
func foldWord(buf, word []byte) ([]byte, bool) {
	hasSplit := false
	for k, c := range word {
		if c == '_' {
			hasSplit = true
			continue
		}
		if k > 0 && isUpper(c) && isLower(word[k-1]) || k > 1 && isLower(c) && isUpper(word[k-1]) && isUpper(word[k-2]) {
			hasSplit = true
		}
		buf = append(buf, lower(c))
	}
	return buf, hasSplit
}

// eachPartTerm passes each part of word that is a term of its own (not
// the whole word again, not a stopword) to fn, lowercased and stemmed in
// part, which it returns for reuse.
func eachPartTerm(word, joined, part []byte, fn func([]byte)) []byte {
	eachPart(word, func(p []byte) {
		if len(p) < 2 || allDigits(p) {
			return
		}
		part = part[:0]
		for _, c := range p {
			part = append(part, lower(c))
		}
		if string(part) == string(joined) || stopwordBytes(part) {
			return
		}
		fn(stemBytes(part))
	})
	return part
}

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// eachPart splits an identifier as SplitIdent describes, without
// allocating: the content index calls it for every word of every file.
func eachPart(s []byte, fn func([]byte)) {
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			fn(s[start:end])
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := s[i-1]
		if isUpper(c) && isLower(prev) || isUpper(c) && isUpper(prev) && i+1 < len(s) && isLower(s[i+1]) {
			flush(i)
			start = i
		}
	}
	flush(len(s))
}

func stopwordBytes(b []byte) bool { return len(b) <= 6 && stopword(string(b)) }

// stemBytes applies Stem's rules in place (stemming only ever shortens a
// word, or swaps "ies" for "y").
func stemBytes(w []byte) []byte {
	if s, ok := stemPlural(w); ok {
		return s
	}
	n := len(w)
	switch {
	case n > 6 && string(w[n-3:]) == "ing":
		return w[:n-3]
	case n > 5 && string(w[n-2:]) == "ed" && w[n-3] != 'e':
		return w[:n-2]
	}
	return w
}

// stemPlural is stemBytes' rules for plurals, which it tries first.
func stemPlural(w []byte) ([]byte, bool) {
	n := len(w)
	has := func(suf string) bool { return n >= len(suf) && string(w[n-len(suf):]) == suf }
	switch {
	case n > 5 && has("ies"):
		w[n-3] = 'y'
		return w[:n-2], true
	case n > 5 && has("sses"):
		return w[:n-2], true
	case n > 4 && has("es") && (w[n-3] == 's' || w[n-3] == 'x' || w[n-3] == 'h'):
		return w[:n-2], true
	case n > 3 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		return w[:n-1], true
	}
	return w, false
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// Stem strips common English inflections so "aliases" meets "alias" and
// "parsing" meets "parse". It is deliberately crude and symmetric: the same
// function runs on documents and queries.
func Stem(w string) string { return string(stemBytes([]byte(w))) }

// stopword reports words too common in prose and code to carry signal.
func stopword(w string) bool {
	switch w {
	case "the", "and", "or", "of", "to", "in", "is", "it", "be", "as", "at",
		"by", "for", "from", "on", "an", "if", "this", "that", "with", "are",
		"was", "not", "but", "we", "can", "do", "does", "have", "has", "no",
		"so", "there", "their", "they", "then", "than", "which", "would",
		"should", "could", "will", "when", "what", "all", "any", "some",
		"also", "been", "into", "its", "my", "me", "you", "your", "our",
		"here", "these", "those", "such", "only", "just", "other",
		"self", "def", "return", "import", "func", "var", "let", "const",
		"none", "null", "nil", "true", "false", "else", "elif", "end",
		"https", "http", "www", "com", "org", "github":
		return true
	}
	return false
}

// Stopword reports whether w (lowercase) is ignored by the tokenizer.
func Stopword(w string) bool { return stopword(w) }
