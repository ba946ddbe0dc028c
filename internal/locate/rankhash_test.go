package locate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
)

// rankingHash hashes every path and exact score of a ranking, so two
// builds rank identically exactly when their hashes are equal.
func rankingHash(rs []Ranked) string {
	h := sha256.New()
	for _, r := range rs {
		fmt.Fprintf(h, "%s\x00%016x\n", r.Path, math.Float64bits(r.Score))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
