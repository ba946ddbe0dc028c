package usage

import (
	"encoding/json"
	"testing"
)

func TestAdd(t *testing.T) {
	got := Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5, CacheReadTokens: 6, CacheWriteTokens: 1}.
		Add(Usage{InputTokens: 5, OutputTokens: 1, CostUSD: 0.25, CacheReadTokens: 3})
	if want := (Usage{InputTokens: 15, OutputTokens: 3, CostUSD: 0.75, CacheReadTokens: 9, CacheWriteTokens: 1}); got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
}

// Max keeps each field's larger account: a CLI reported more output than
// the gateway could read, the gateway metered more input and cost.
func TestMax(t *testing.T) {
	t.Parallel()
	reported := Usage{InputTokens: 10, OutputTokens: 9, CostUSD: 0.001, CacheReadTokens: 4}
	metered := Usage{InputTokens: 5000, OutputTokens: 2, CostUSD: 0.5, CacheWriteTokens: 3}
	want := Usage{InputTokens: 5000, OutputTokens: 9, CostUSD: 0.5, CacheReadTokens: 4, CacheWriteTokens: 3}
	if got := reported.Max(metered); got != want {
		t.Errorf("Max = %+v, want %+v", got, want)
	}
	if got := metered.Max(reported); got != want {
		t.Errorf("Max the other way = %+v, want %+v", got, want)
	}
}

// The JSON names are what session.json and the CSVs' readers expect; the
// cache counts appear only when there are some, so files written without
// caching read as before.
func TestJSONNames(t *testing.T) {
	for _, tc := range []struct {
		u    Usage
		want string
	}{
		{Usage{InputTokens: 1, OutputTokens: 2, CostUSD: 0.5}, `{"input_tokens":1,"output_tokens":2,"cost_usd":0.5}`},
		{Usage{InputTokens: 9, OutputTokens: 2, CostUSD: 0.5, CacheReadTokens: 7, CacheWriteTokens: 1},
			`{"input_tokens":9,"output_tokens":2,"cost_usd":0.5,"cache_read_tokens":7,"cache_write_tokens":1}`},
	} {
		b, err := json.Marshal(tc.u)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("JSON = %s, want %s", b, tc.want)
		}
		var back Usage
		if err := json.Unmarshal(b, &back); err != nil || back != tc.u {
			t.Errorf("round trip %s = %+v, %v", b, back, err)
		}
	}
}
