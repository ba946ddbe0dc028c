package locate

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// feature is one signal of the ranker. Every feature is in [0,1] (or a sum
// of a few such) for each file, and a file's score is their weighted sum.
type feature int

const (
	fContent      feature = iota // BM25 of the contents, over the best file's
	fPath                        // BM25 of the path's words
	fSymbol                      // BM25 of the names the file defines
	fQuoted                      // the issue quotes the file's path or name
	fFrame                       // a traceback frame is in the file, innermost weighs most
	fDefines                     // the file defines identifiers the issue names
	fModule                      // the issue names the file's dotted module (or a name in it)
	fTestLink                    // a test with explicit evidence is named after or imports it
	fNeighbour                   // a file with explicit evidence imports it or is imported by it
	fPrior                       // centrality in the import graph
	fTest                        // lexical + defines evidence, when the file is a test
	fDoc                         // the same, for documentation and examples
	fData                        // the same, for files that are not code
	fTitle                       // the title's words match the path or defined names
	fInnermost                   // the innermost traceback frame in non-test repository code
	fContentRank                 // 1/sqrt(position) among files ordered by content BM25
	fPackageInit                 // the file is a Python package's __init__.py
	fPassage                     // BM25 of the file's best window of lines, over the best read file's
	fPhrase                      // a line of the file holds three of the issue's terms in its order
	fOtherLang                   // lexical evidence, scaled by how far the issue's language evidence points away from the file's language
	fPassageRank                 // 1/sqrt(position) among the read files ordered by passage
	fTitlePassage                // BM25 of the file's best window over the title's terms, over the best read file's
	fTitleContent                // BM25 of the contents over the title's terms, over the best file's
	fCodeContent                 // BM25 of the contents over the terms of the issue's code, over the best file's
	fExported                    // other files import a name the issue uses from this file
	fTitleName                   // the file is the home of a name in the title (imported from or defined at top level)
	fHistory                     // past commits whose messages match the issue changed the file
	fTitleHistory                // past commits whose messages match the title changed the file
	fQuotedText                  // the file holds a rare phrase the issue quotes, verbatim
	fMethod                      // the issue names Class.method and the file's class defines it
	fIssueRefs                   // a past commit citing an issue the issue cites changed the file
	fErrorText                   // the file holds the message of an error the issue shows, verbatim
	fMsgTemplate                 // a literal of the file, its placeholders filled in, prints an error or quote the issue shows
	numFeatures
)

type features [numFeatures]float64

var featureInfo = [numFeatures]struct{ name, label string }{
	fContent:      {"content", "content matches"},
	fPath:         {"path", "path terms match"},
	fSymbol:       {"symbols", "symbol names match"},
	fQuoted:       {"quoted_path", "mentioned"},
	fFrame:        {"traceback_frame", "traceback"},
	fDefines:      {"defines", "defines symbols named in the issue"},
	fModule:       {"dotted_name", "dotted name in the issue"},
	fTestLink:     {"test_link", "test-to-source link"},
	fNeighbour:    {"imports", "linked by imports to"},
	fPrior:        {"centrality", "central in the import graph"},
	fTest:         {"test_file", "test file"},
	fDoc:          {"doc_file", "documentation or example"},
	fData:         {"data_file", "not source code"},
	fTitle:        {"title", "title matches the path or symbols"},
	fInnermost:    {"innermost_frame", "innermost traceback frame"},
	fContentRank:  {"content_rank", "high among content matches"},
	fPackageInit:  {"package_init", "package __init__.py"},
	fPassage:      {"passage", "closest passage"},
	fPhrase:       {"phrase", "shares phrases with the issue"},
	fOtherLang:    {"other_language", "not in the language the issue points at"},
	fPassageRank:  {"passage_rank", "high among closest passages"},
	fTitlePassage: {"title_passage", "a passage matches the title"},
	fTitleContent: {"title_content", "content matches the title"},
	fCodeContent:  {"code_content", "content matches the issue's code"},
	fExported:     {"imported_from", "the place other files import a named symbol from"},
	fTitleName:    {"title_name", "home of a name in the title"},
	fHistory:      {"history", "changed by similar past commits"},
	fTitleHistory: {"title_history", "changed by past commits like the title"},
	fQuotedText:   {"quoted_text", "holds words the issue quotes"},
	fMethod:       {"class_method", "defines a Class.method the issue names"},
	fIssueRefs:    {"cited_issue", "changed by a commit citing the same issue"},
	fErrorText:    {"error_text", "holds the message of an error the issue shows"},
	fMsgTemplate:  {"message_template", "prints an error or quote the issue shows"},
}

// Weights are the ranker's coefficients, one per feature.
type Weights [numFeatures]float64

func (w *Weights) score(f *features) float64 {
	s := 0.0
	for k := range f {
		s += w[k] * f[k]
	}
	return s
}

// MarshalJSON writes the weights as an object keyed by feature name.
func (w Weights) MarshalJSON() ([]byte, error) {
	m := make(map[string]float64, numFeatures)
	for k := range w {
		m[featureInfo[k].name] = roundTo(w[k], 4)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the object MarshalJSON writes; every feature must be
// present and no other key may be.
func (w *Weights) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("reading weights: %w", err)
	}
	var unknown, missing []string
	for name := range m {
		if featureByName(name) < 0 {
			unknown = append(unknown, name)
		}
	}
	for k := range w {
		v, ok := m[featureInfo[k].name]
		if !ok {
			missing = append(missing, featureInfo[k].name)
		}
		w[k] = v
	}
	sort.Strings(unknown)
	if len(unknown) > 0 || len(missing) > 0 {
		return fmt.Errorf("reading weights: unknown features [%s], missing [%s]", strings.Join(unknown, " "), strings.Join(missing, " "))
	}
	return nil
}

func featureByName(name string) feature {
	for k := range featureInfo {
		if featureInfo[k].name == name {
			return feature(k)
		}
	}
	return -1
}

func roundTo(x float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

// weightsJSON are the fitted weights (planex eval-locate --fit writes them).
//
//go:embed weights.json
var weightsJSON []byte

// DefaultWeights returns the checked-in weights.
func DefaultWeights() *Weights {
	var w Weights
	if err := json.Unmarshal(weightsJSON, &w); err != nil {
		// weights.json is part of the source; a test reads it.
		panic(err)
	}
	return &w
}

// LoadWeights reads weights written by SaveWeights.
func LoadWeights(path string) (*Weights, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading weights: %w", err)
	}
	var w Weights
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}

// SaveWeights writes w as indented JSON, one feature a line.
func SaveWeights(path string, w *Weights) error {
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding weights: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing weights: %w", err)
	}
	return nil
}
