package detect

import "testing"

func TestAnnouncedActionMismatch(t *testing.T) {
	const (
		logs   = `call mcp__srv__log_analysis {"logs_file":"/data/snap/7/logs.tsv"} => 3 patterns`
		events = `call mcp__srv__event_analysis {"events_file":"/data/snap/7/events.tsv"} => 5 events`
		spec   = `call mcp__srv__get_k8_spec {"name":"flagd-config"} => spec`
	)
	runCases(t, AnnouncedActionMismatch, []detCase{
		{name: "does what it said", trace: build(`user go`, logs, `think Next I will use event_analysis on the warnings.`, events)},
		{name: "says one tool, calls others", trace: build(`user go`, logs, events, `say Now I'll use log_analysis for the ad service.`, events, spec),
			want: [][]int{{5, 6, 8}}, quote: "Now I'll use log_analysis for the ad service.", conf: 0.75},
		{name: "an announced tool used only later", trace: build(`user go`, events, `think I'll run build_topology next.`, events, spec, `call mcp__srv__build_topology {} => x`),
			want: [][]int{{3, 4, 6}}, conf: 0.6},
		{name: "announced in a plan explanation", trace: build(`user go`, events, `call update_plan {"explanation":"I'll use event_analysis to find warnings.","plan":[{"step":"events","status":"in_progress"}]} => ok`, spec, spec),
			want: [][]int{{3, 5, 7}}, conf: 0.75},
		{name: "a preparatory call first is allowed", trace: build(`user go`, logs, `say I'll write a script that reads logs.tsv.`, `call shell {"cmd":"mkdir -p code"} => `, `call shell {"cmd":"cat > code/a.py <<EOF\nopen('logs.tsv')\nEOF"} => `)},
		{name: "a tool the run never calls, introduced with 'with'", trace: build(`user go`, logs, `think I'll check valkey's memory with metric_analysis.`, `call shell {"cmd":"grep pod status"} => Running`),
			want: [][]int{{3, 4}}, quote: "I'll check valkey's memory with metric_analysis.", conf: 0.75},
		{name: "the announced tool, on another entity", trace: build(`user go`,
			`call mcp__srv__metric_analysis {"services":["ad","frontend"]} => ratios`,
			`think I'll read the ERROR logs of ad with log_analysis.`,
			`call mcp__srv__log_analysis {"logs_file":"/data/snap/7/logs.tsv","service_name":"frontend"} => 377 errors`),
			want: [][]int{{3, 4}}, quote: "I'll read the ERROR logs of ad with log_analysis.", conf: 0.6},
		{name: "the announced tool on a variant of the entity's name", trace: build(`user go`,
			`call mcp__srv__metric_analysis {"services":["ad","frontend"]} => ratios`,
			`think I'll read the logs of ad with log_analysis.`,
			`call mcp__srv__log_analysis {"service_name":"ad-service"} => none`)},
		{name: "an entity no call targets is not judged", trace: build(`user go`,
			`think I'll read the logs of checkout with log_analysis.`,
			`call mcp__srv__log_analysis {"service_name":"frontend"} => errors`)},
		{name: "a negated announcement is not one", trace: build(`user go`, logs, `say I will not use event_analysis again.`, spec)},
		{name: "words that name no tool or file are not read", trace: build(`user go`, logs, `say Let me check the logs of the ad service.`, spec)},
		{name: "an announcement with nothing after it", trace: build(`user go`, logs, `final I'll use event_analysis next.`)},
	})
}
