package usage

import (
	"encoding/json"
	"testing"
)

func TestAdd(t *testing.T) {
	got := Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5}.Add(Usage{InputTokens: 5, OutputTokens: 1, CostUSD: 0.25})
	if want := (Usage{InputTokens: 15, OutputTokens: 3, CostUSD: 0.75}); got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
}

// The JSON names are what session.json and the CSVs' readers expect.
func TestJSONNames(t *testing.T) {
	b, err := json.Marshal(Usage{InputTokens: 1, OutputTokens: 2, CostUSD: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"input_tokens":1,"output_tokens":2,"cost_usd":0.5}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}
