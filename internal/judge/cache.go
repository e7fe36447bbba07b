package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// CacheEntry is an accepted answer kept by the hash of the request that
// asked for it, so that asking again costs nothing. Only answers that passed
// validation are kept: a rejected one would be rejected again forever.
type CacheEntry struct {
	Key     string
	Model   string
	Content string // the accepted reply, verbatim
	// InputTokens and OutputTokens are what producing the answer took,
	// a corrective retry included.
	InputTokens, OutputTokens int
}

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
