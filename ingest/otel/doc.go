// Package otel maps OpenTelemetry traces to faultline traces, one per OTLP
// trace id. Package ingest reads them from files (its otlp-json and
// otlp-proto formats) and internal/receive live from OTLP/HTTP exporters;
// the mapping is here, apart from both, so that the receiver does not need
// ingest to export it, and it reaches nothing of ingest's formats. Three
// attribute vocabularies are read:
//
//   - the GenAI semantic conventions as they are now (gen_ai.operation.name,
//     gen_ai.input.messages / gen_ai.output.messages, gen_ai.tool.*,
//     gen_ai.agent.name) and as they were up to v1.36 and in OpenLLMetry
//     (gen_ai.system, gen_ai.prompt.N.* / gen_ai.completion.N.* attributes,
//     the gen_ai.content.prompt / gen_ai.content.completion span events,
//     traceloop.span.kind);
//   - OpenInference (openinference.span.kind, llm.input_messages.N.message.*,
//     tool.name, input.value / output.value), as Phoenix writes it.
//
// Spans become steps depth first, children ordered by start time: what a span
// was given (its input messages, a tool call) when it starts, then its
// children, then what it produced (output messages, a tool result, an error)
// when it ends.
package otel
