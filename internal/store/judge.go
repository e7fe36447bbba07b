package store

import "time"

// JudgeRecord is the outcome of judging one trace with one judge source:
// what the judge decided about the run as a whole (its findings are stored
// as findings of its source).
type JudgeRecord struct {
	Trace         string             `json:"trace"`
	Source        string             `json:"source"`
	PromptVersion string             `json:"prompt_version"`
	Status        string             `json:"status"` // judge.StatusOK, StatusFailed or StatusSkipped
	Error         string             `json:"error,omitempty"`
	Windows       int                `json:"windows"` // >1 when the trace was judged in overlapping windows
	Samples       int                `json:"samples"`
	Agreement     map[string]float64 `json:"agreement,omitempty"` // per mode: share of samples voting with the majority
	// Summary is the judge's account of the run, or for a skipped trace
	// why it was not judged.
	Summary     string `json:"summary,omitempty"`
	TaskSuccess string `json:"task_success,omitempty"` // the judge's guess: success, failure, unknown
	// Calls counts the calls this judgement made (0 when every answer came
	// from the cache); tokens and cost are what producing its answers took,
	// corrective retries and failed attempts included, cached answers
	// counted at what they took when first made.
	Calls        int       `json:"calls"`
	InputTokens  int       `json:"input_tokens"`
	OutputTokens int       `json:"output_tokens"`
	Cost         *float64  `json:"cost"` // nil when the model has no price
	JudgedAt     time.Time `json:"judged_at"`
}

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
