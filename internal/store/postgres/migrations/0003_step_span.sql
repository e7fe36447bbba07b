-- The OpenTelemetry span each step came from (hex span id; empty for other
-- formats), so exports can tie findings back to the spans an OTLP backend
-- shows.
ALTER TABLE steps ADD COLUMN span_id TEXT NOT NULL DEFAULT '';
