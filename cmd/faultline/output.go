package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON prints v as indented JSON followed by a newline, its fractional
// numbers rounded (see roundJSONNumbers).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	if _, err := w.Write(roundJSONNumbers(b.Bytes())); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
