-- The OpenTelemetry span each step came from (hex span id; empty for other
-- formats), so exports can tie findings back to the spans Phoenix, Langfuse
-- or any OTLP backend already shows. Numbered 0004: 0003 was reserved for a
-- concurrent change.
ALTER TABLE steps ADD COLUMN span_id TEXT NOT NULL DEFAULT '';
