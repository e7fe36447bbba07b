package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// cacheKey hashes everything that shapes an answer: the model, the
// sampling parameters, the sample number (so that K samples are K answers)
// and the messages. The response format is left out: it changes how the
// endpoint is asked for JSON, not what the answer means.
func cacheKey(req Request, sample int) string {
	h := sha256.New()
	// Encoding these types cannot fail.
	_ = json.NewEncoder(h).Encode(struct {
		Model       string
		Temperature *float64
		Seed        *int
		MaxTokens   int
		Sample      int
		Messages    []Message
	}{req.Model, req.Temperature, req.Seed, req.MaxTokens, sample, req.Messages})
	return hex.EncodeToString(h.Sum(nil))
}
