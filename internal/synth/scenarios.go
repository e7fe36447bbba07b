package synth

import (
	"fmt"
	"strings"
)

// scenario is one fictional incident: the snapshot an agent investigates,
// the tool calls it can make on it with what they return, and the ground
// truth it is scored against. Every run of a scenario reads the same
// snapshot, so the same call returns the same output in every run: a
// repeated call in a script is a repeated call in the trace.
type scenario struct {
	id       string
	snapshot string
	calls    map[string]call
	truth    groundTruth

	// What Generate's runs know of the incident.
	leads    []lead        // the calls an investigation can follow, in a sensible order
	root     suspect       // the cause
	victims  []suspect     // what it impacted, nearest first
	decoy    suspect       // the red herring
	chain    []propagation // how the fault spread, from the root
	alerts   []alertNote   // every firing alert, rightly explained
	invented string        // log text that no tool of the snapshot returns (FM-3.3)
	// denial is reasoning that contradicts the decisive fact after the run
	// has seen it, and turns to the decoy's lead, chase (FM-1.4).
	denial, chase string
	// recheck is the call that asks again for the decisive fact with other
	// arguments, and reask the reasoning asking it as if for the first time
	// (FM-1.4).
	recheck, reask string
}

// lead is a call an investigation can make, with what the model says before
// making it and what it learns from it.
type lead struct {
	key  string // the call in scenario.calls
	plan string // the plan item it carries out
	// announce is reasoning that names the tool and what it will look at,
	// an imperative sentence, which a model may also say as "I'll ...".
	announce string
	learned  string // what the output shows, in a sentence
	facts    []fact // verbatim parts of the output, as diagnosis evidence
	decisive bool   // the cause cannot be named without it
}

// fact is a piece of a call's output that is evidence about an entity.
type fact struct {
	entity string
	quote  string
}

// suspect is an entity a diagnosis may name, with its reasoning as the
// cause and as an impacted (or unrelated) entity.
type suspect struct {
	name     string
	asCause  string
	asImpact string
	// spread is what a diagnosis naming it as the cause says it did next;
	// for the root, the chain says it.
	spread propagation
}

// lead returns the scenario's lead of the given call.
func (sc *scenario) lead(key string) *lead {
	for i := range sc.leads {
		if sc.leads[i].key == key {
			return &sc.leads[i]
		}
	}
	panic(fmt.Sprintf("scenario %s has no lead %q", sc.id, key))
}

// do is the step making the scenario's named call.
func (sc *scenario) do(name string) step {
	c, ok := sc.calls[name]
	if !ok {
		panic(fmt.Sprintf("scenario %s has no call %q", sc.id, name))
	}
	return do(c)
}

// The two incidents, built once: runs share them.
var incident101, incident102 = flagIncident(), memoryLimitIncident()

func scenarios() []*scenario { return []*scenario{incident101, incident102} }

// flagIncident is scenario 101: someone turns on the adFailure feature flag
// in the flagd-config ConfigMap; the ad service starts rejecting a share of
// its calls and the frontend reports the failures. Nothing crashes and no
// Warning event fires, so the cause is only visible as a config change. A
// load-generator that was scaled up twenty minutes earlier is CPU-throttled:
// an alert that is real but unrelated.
func flagIncident() *scenario {
	snap := "/data/itbench-lite/snapshots/101"
	sc := &scenario{id: "101", snapshot: snap}
	sc.calls = map[string]call{
		"ls": shell("ls -R "+snap, `alerts
events.tsv
ground_truth.yaml
logs.tsv
metrics
objects.tsv
traces.tsv

`+snap+`/alerts:
alerts_2026-01-20T14-04-00Z.json
alerts_2026-01-20T14-06-00Z.json
alerts_2026-01-20T14-08-00Z.json

`+snap+`/metrics:
ad.tsv
flagd.tsv
frontend.tsv
load-generator.tsv
`, 0, 0.1),

		"alerts": mcp("alert_summary", map[string]any{"alerts_dir": snap + "/alerts"}, `[
  {"alertname": "CPUThrottlingElevated", "entity": "otel-demo/Pod/load-generator-5d8f7c9b6-q2w4e", "severity": "info", "state": "firing", "first_seen": "2026-01-20 13:41:00", "last_seen": "2026-01-20 14:08:00", "summary": "load-generator spends 38% of its CPU periods throttled"},
  {"alertname": "GrpcServerErrorRatioHigh", "entity": "otel-demo/Service/ad", "severity": "warning", "state": "firing", "first_seen": "2026-01-20 14:05:40", "last_seen": "2026-01-20 14:08:00", "summary": "ad: 9.7% of oteldemo.AdService/GetAds calls fail (threshold 5%)"},
  {"alertname": "FrontendUpstreamErrors", "entity": "otel-demo/Service/frontend", "severity": "warning", "state": "firing", "first_seen": "2026-01-20 14:07:10", "last_seen": "2026-01-20 14:08:00", "summary": "frontend: 4.1% of requests end with an upstream gRPC error"}
]`),

		"events": mcp("event_analysis", map[string]any{"events_file": snap + "/events.tsv", "namespace": "otel-demo"}, `{
  "window": "2026-01-20 13:30:00 to 2026-01-20 14:08:00",
  "total": 5,
  "warnings": 0,
  "events": [
    {"time": "2026-01-20 13:40:50", "type": "Normal", "object": "Deployment/load-generator", "reason": "ScalingReplicaSet", "message": "Scaled up replica set load-generator-5d8f7c9b6 to 1"},
    {"time": "2026-01-20 13:40:52", "type": "Normal", "object": "Pod/load-generator-5d8f7c9b6-q2w4e", "reason": "Scheduled", "message": "Successfully assigned otel-demo/load-generator-5d8f7c9b6-q2w4e to worker-2"},
    {"time": "2026-01-20 13:40:55", "type": "Normal", "object": "Pod/load-generator-5d8f7c9b6-q2w4e", "reason": "Started", "message": "Started container load-generator"},
    {"time": "2026-01-20 13:41:20", "type": "Normal", "object": "Deployment/load-generator", "reason": "ScalingReplicaSet", "message": "Scaled down replica set load-generator-74b9c6d5f8 to 0 from 1"},
    {"time": "2026-01-20 13:41:22", "type": "Normal", "object": "Pod/load-generator-74b9c6d5f8-h6j3k", "reason": "Killing", "message": "Stopping container load-generator"}
  ]
}`),

		"changes": mcp("k8s_spec_change_analysis", map[string]any{"objects_file": snap + "/objects.tsv", "start_time": "2026-01-20T13:30:00Z"}, `{
  "window_start": "2026-01-20 13:30:00",
  "changed_objects": 2,
  "changes": [
    {"object": "otel-demo/Deployment/load-generator", "time": "2026-01-20 13:40:50", "field": "spec.template.spec.containers[load-generator].env[LOCUST_USERS]", "from": "10", "to": "25"},
    {"object": "otel-demo/ConfigMap/flagd-config", "time": "2026-01-20 14:02:11", "field": "data[demo.flagd.json].flags.adFailure.defaultVariant", "from": "off", "to": "on"}
  ]
}`),

		"flagd-config": shell("grep -F 'flagd-config' "+snap+"/objects.tsv | cut -f1,3,4", `2026-01-20 13:30:00	ConfigMap	{"flags":{"adFailure":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off"},"cartFailure":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off"}}}
2026-01-20 14:02:11	ConfigMap	{"flags":{"adFailure":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"},"cartFailure":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off"}}}
`, 0, 0.3),

		"ad-logs": mcp("log_analysis", map[string]any{"logs_file": snap + "/logs.tsv", "service_name": "ad", "severity_filter": "ERROR,WARN"}, `{
  "service": "ad",
  "matched": 418,
  "patterns": [
    {"count": 404, "severity": "ERROR", "first": "2026-01-20 14:02:31", "last": "2026-01-20 14:08:00", "template": "GetAds failed for context keys=<*>: flag adFailure is on, returning UNAVAILABLE"},
    {"count": 14, "severity": "WARN", "first": "2026-01-20 14:02:14", "last": "2026-01-20 14:02:16", "template": "flagd provider: flag configuration changed, re-evaluating <*> flags"}
  ]
}`),

		"frontend-logs": mcp("log_analysis", map[string]any{"logs_file": snap + "/logs.tsv", "service_name": "frontend", "severity_filter": "ERROR,WARN"}, `{
  "service": "frontend",
  "matched": 377,
  "patterns": [
    {"count": 377, "severity": "ERROR", "first": "2026-01-20 14:02:32", "last": "2026-01-20 14:08:00", "template": "failed to get ads: 14 UNAVAILABLE: ad request rejected by feature flag"}
  ]
}`),

		"error-ratio": mcp("metric_analysis", map[string]any{"metrics_dir": snap + "/metrics", "metric": "rpc_server_error_ratio", "services": []string{"ad", "frontend"}}, `service    13:30-14:02   14:02-14:08   peak
ad         0.000         0.097         0.121
frontend   0.000         0.041         0.055`),

		"loadgen-cpu": mcp("metric_analysis", map[string]any{"metrics_dir": snap + "/metrics", "metric": "container_cpu_cfs_throttled_ratio", "services": []string{"load-generator"}}, `pod                              13:30-13:40   13:41-14:08
load-generator-5d8f7c9b6-q2w4e   -             0.38
load-generator-74b9c6d5f8-h6j3k  0.04          -`),

		"traces": mcp("get_trace_error_tree", map[string]any{"traces_file": snap + "/traces.tsv", "pivot_time": "2026-01-20T14:02:00Z"}, `{
  "pivot_time": "2026-01-20 14:02:00",
  "edges": [
    {"path": "frontend -> ad (oteldemo.AdService/GetAds)", "error_rate_before": 0.0, "error_rate_after": 0.096, "p95_ms_before": 11, "p95_ms_after": 12},
    {"path": "frontend -> product-catalog (ListProducts)", "error_rate_before": 0.0, "error_rate_after": 0.0, "p95_ms_before": 18, "p95_ms_after": 19},
    {"path": "frontend -> cart (GetCart)", "error_rate_before": 0.0, "error_rate_after": 0.0, "p95_ms_before": 9, "p95_ms_after": 9}
  ],
  "error_origins": [
    {"service": "ad", "status": "UNAVAILABLE", "message": "ad request rejected by feature flag", "spans": 402}
  ]
}`),

		"anomalies": mcp("get_metric_anomalies", map[string]any{"metrics_dir": snap + "/metrics", "object_name": "otel-demo/Service/ad", "start_time": "2026-01-20T13:30:00Z"}, `{
  "object": "otel-demo/Service/ad",
  "anomalies": [
    {"metric": "rpc_server_error_ratio", "since": "2026-01-20 14:02:31", "baseline": 0.0, "observed": 0.097, "score": 9.1}
  ],
  "unchanged": ["rpc_server_duration_p95_ms", "container_cpu_usage_seconds", "container_memory_working_set_bytes", "container_restarts"]
}`),

		"changes-late": mcp("k8s_spec_change_analysis", map[string]any{"objects_file": snap + "/objects.tsv", "start_time": "2026-01-20T14:00:00Z"}, `{
  "window_start": "2026-01-20 14:00:00",
  "changed_objects": 1,
  "changes": [
    {"object": "otel-demo/ConfigMap/flagd-config", "time": "2026-01-20 14:02:11", "field": "data[demo.flagd.json].flags.adFailure.defaultVariant", "from": "off", "to": "on"}
  ]
}`),
	}
	sc.truth = groundTruth{
		ID: "101",
		Groups: []gtGroup{
			{ID: "flagd-config", Kind: "ConfigMap", Name: "flagd-config", Namespace: "otel-demo", RootCause: true},
			{ID: "ad-service-1", Kind: "Service", Namespace: "otel-demo", Filter: []string{"^ad$"}},
			{ID: "ad-pod-1", Kind: "Pod", Namespace: "otel-demo", Filter: []string{"^ad-[a-z0-9]+-[a-z0-9]+$"}},
			{ID: "frontend-service-1", Kind: "Service", Namespace: "otel-demo", Filter: []string{"^frontend$"}},
			{ID: "frontend-pod-1", Kind: "Pod", Namespace: "otel-demo", Filter: []string{"^frontend-[a-z0-9]+-[a-z0-9]+$"}},
		},
		Aliases: [][]string{{"ad-service-1", "ad-pod-1"}, {"frontend-service-1", "frontend-pod-1"}},
		Propagations: []gtPropagation{
			{Source: "flagd-config", Target: "ad-service-1", Condition: "adFailure flag set to its on variant in flagd-config", Effect: "ad rejects a share of GetAds calls with UNAVAILABLE"},
			{Source: "ad-service-1", Target: "frontend-service-1", Condition: "GetAds calls fail with UNAVAILABLE", Effect: "frontend requests end with upstream gRPC errors"},
		},
		Fault: []gtFault{{
			Category: "Configuration Setting", Condition: "adFailure feature flag switched on",
			Entity: gtEntity{GroupID: "flagd-config", Kind: "ConfigMap", Name: "flagd-config"}, FaultMechanism: "custom(flagd)",
		}},
		Alerts: []gtAlert{
			{ID: "GrpcServerErrorRatioHigh", GroupID: "ad-service-1", Metadata: gtAlertMeta{Description: "ad fails GetAds calls above the error budget"}},
			{ID: "FrontendUpstreamErrors", GroupID: "frontend-service-1", Metadata: gtAlertMeta{Description: "frontend requests fail on calls to ad"}},
		},
		RecommendedActions: []gtAction{{Solution: gtSolution{
			ID:      "turn_off_adfailure_flag",
			Actions: []string{"set flags.adFailure.defaultVariant back to off in the flagd-config ConfigMap"},
		}}},
	}
	sc.calls["ground-truth"] = readGroundTruth(sc)

	const flagd, ad, frontend, loadgen = "otel-demo/ConfigMap/flagd-config", "otel-demo/Service/ad", "otel-demo/Service/frontend", "otel-demo/Deployment/load-generator"
	sc.root = suspect{name: flagd,
		asCause: "The adFailure flag in flagd-config was switched from off to on at 14:02:11; from then on ad rejects GetAds calls citing that flag, so the change triggered every error that follows."}
	sc.victims = []suspect{
		{name: ad,
			asCause:  "ad returns UNAVAILABLE for a share of its GetAds calls: the failures originate in ad.",
			asImpact: "ad fails the GetAds calls the flag tells it to fail; its Deployment did not change and its pods did not restart.",
			spread:   propagation{ad, frontend, "GetAds returns UNAVAILABLE", "frontend requests fail with upstream errors"}},
		{name: frontend, asImpact: "frontend passes the failed GetAds calls on to users as upstream errors."},
	}
	sc.decoy = suspect{name: loadgen,
		asCause:  "The load generator is CPU-throttled and floods the shop with requests, which overloads the services behind the frontend.",
		asImpact: "Its throttling began twenty minutes before the first error, when it was scaled up, and more load cannot make ad answer UNAVAILABLE. Unrelated.",
		spread:   propagation{loadgen, frontend, "too much load", "frontend requests fail"}}
	sc.chain = []propagation{
		{flagd, ad, "adFailure defaultVariant set to on", "ad rejects about 10% of GetAds calls with UNAVAILABLE"},
		{ad, frontend, "GetAds returns UNAVAILABLE", "4.1% of frontend requests fail with an upstream gRPC error"},
	}
	sc.alerts = []alertNote{
		{"GrpcServerErrorRatioHigh", "Fired by ad, which rejects GetAds calls because the adFailure flag is on.", true},
		{"FrontendUpstreamErrors", "Fired by frontend, whose calls to ad fail.", true},
		{"CPUThrottlingElevated", "Fired by load-generator after it was scaled up at 13:40; not part of this incident.", true},
	}
	sc.leads = []lead{
		{key: "alerts", plan: "Summarise the alerts",
			announce: "Summarise the firing alerts with alert_summary before picking a service.",
			learned:  "The ad and frontend alerts start at 14:05; the load generator's throttling alert has fired since 13:41.",
			facts:    []fact{{ad, "GrpcServerErrorRatioHigh"}, {frontend, "FrontendUpstreamErrors"}, {loadgen, "CPUThrottlingElevated"}}},
		{key: "changes", plan: "Find recent spec changes", decisive: true,
			announce: "Look for spec changes in otel-demo before the first error with k8s_spec_change_analysis.",
			learned:  "The flagd-config ConfigMap changed at 14:02:11: adFailure went from off to on.",
			facts:    []fact{{flagd, "data[demo.flagd.json].flags.adFailure.defaultVariant"}, {flagd, "2026-01-20 14:02:11"}, {loadgen, "env[LOCUST_USERS]"}}},
		{key: "ad-logs", plan: "Read the error logs",
			announce: "Read the ERROR and WARN logs of ad, the service with the highest error ratio, with log_analysis.",
			learned:  "The ad errors start at 14:02:31 and quote the adFailure flag.",
			facts:    []fact{{flagd, "flag adFailure is on, returning UNAVAILABLE"}, {ad, "GetAds failed for context keys=<*>"}}},
		{key: "frontend-logs", plan: "Read the error logs",
			announce: "Read the frontend's error logs with log_analysis to see which upstream calls fail.",
			learned:  "The frontend errors are all failed GetAds calls to ad.",
			facts:    []fact{{frontend, "failed to get ads: 14 UNAVAILABLE"}}},
		{key: "traces", plan: "Trace the failing requests",
			announce: "Follow the failing requests with get_trace_error_tree, pivoting at 14:02.",
			learned:  "Only the frontend -> ad edge fails, and the spans blame the feature flag.",
			facts:    []fact{{frontend, "frontend -> ad (oteldemo.AdService/GetAds)"}, {ad, "ad request rejected by feature flag"}}},
		{key: "flagd-config", plan: "Find recent spec changes",
			announce: "Read both versions of the flagd-config ConfigMap from objects.tsv with grep.",
			learned:  "The second version of flagd-config sets adFailure's defaultVariant to on.",
			facts:    []fact{{flagd, `"defaultVariant":"on"`}}},
		{key: "anomalies", plan: "Check the metrics",
			announce: "Ask get_metric_anomalies which of ad's metrics moved, and since when.",
			learned:  "Only ad's error ratio moved, from 14:02:31; latency, CPU, memory and restarts did not.",
			facts:    []fact{{ad, "rpc_server_error_ratio"}}},
		{key: "error-ratio", plan: "Check the metrics",
			announce: "Compare the gRPC error ratio of ad and frontend before and after 14:02 with metric_analysis.",
			learned:  "The ad error ratio went from 0.000 to 0.097 at 14:02.",
			facts:    []fact{{ad, "0.097"}}},
		{key: "events", plan: "Check the Kubernetes events",
			announce: "Check the Kubernetes events in otel-demo for crashes or restarts with event_analysis.",
			learned:  "There are no Warning events; only the load generator was rescaled, at 13:40.",
			facts:    []fact{{loadgen, "Scaled up replica set load-generator-5d8f7c9b6 to 1"}}},
		{key: "loadgen-cpu", plan: "Check the metrics",
			announce: "Check the load generator's CPU throttling with metric_analysis.",
			learned:  "The load generator has been throttled since 13:41, long before the first error.",
			facts:    []fact{{loadgen, "0.38"}}},
	}
	sc.invented = "ad-7f9c4b8d6-x2x7q OOMKilled: java.lang.OutOfMemoryError: Java heap space"
	sc.chase = "loadgen-cpu"
	sc.denial = "Nothing in the snapshot changed while the errors began, so no configuration is to blame; the throttled load generator is the likeliest cause. Check its CPU."
	sc.recheck = "changes-late"
	sc.reask = "I have not yet checked whether any object changed just before the errors began. Run k8s_spec_change_analysis from 14:00."
	return sc
}

// memoryLimitIncident is scenario 102: a rollout of the checkout Deployment
// lowers its container's memory limit from 256Mi to 20Mi, below what the
// service uses; every new pod is OOMKilled and crash-loops, and orders fail
// at the frontend. The application logs never say "OOM" (the kernel kills
// the process), so the evidence is in pod status, events and the spec
// change. valkey-cart runs close to its memory limit, as it has for hours:
// an alert that is real but unrelated.
func memoryLimitIncident() *scenario {
	snap := "/data/itbench-lite/snapshots/102"
	sc := &scenario{id: "102", snapshot: snap}
	sc.calls = map[string]call{
		"ls": shell("ls -R "+snap, `alerts
events.tsv
ground_truth.yaml
logs.tsv
metrics
objects.tsv
traces.tsv

`+snap+`/alerts:
alerts_2026-01-22T09-18-00Z.json
alerts_2026-01-22T09-20-00Z.json
alerts_2026-01-22T09-22-00Z.json

`+snap+`/metrics:
checkout.tsv
frontend.tsv
valkey-cart.tsv
`, 0, 0.1),

		"missing-alerts": shell("cat "+snap+"/alerts.json", "cat: "+snap+"/alerts.json: No such file or directory\n", 1, 0.1),

		"alerts": mcp("alert_summary", map[string]any{"alerts_dir": snap + "/alerts"}, `[
  {"alertname": "MemoryWorkingSetHigh", "entity": "otel-demo/Pod/valkey-cart-6c8b7f9d4-p8r2n", "severity": "warning", "state": "firing", "first_seen": "2026-01-22 08:50:00", "last_seen": "2026-01-22 09:22:00", "summary": "valkey-cart working set is at 83% of its memory limit"},
  {"alertname": "ContainerRestartBurst", "entity": "otel-demo/Pod/checkout-7c9f6d8b5-xk2pq", "severity": "critical", "state": "firing", "first_seen": "2026-01-22 09:19:20", "last_seen": "2026-01-22 09:22:00", "summary": "checkout restarted 5 times in 5 minutes"},
  {"alertname": "FrontendUpstreamErrors", "entity": "otel-demo/Service/frontend", "severity": "warning", "state": "firing", "first_seen": "2026-01-22 09:20:05", "last_seen": "2026-01-22 09:22:00", "summary": "frontend: 6.3% of requests end with an upstream gRPC error"}
]`),

		"events": mcp("event_analysis", map[string]any{"events_file": snap + "/events.tsv", "namespace": "otel-demo"}, `{
  "window": "2026-01-22 08:45:00 to 2026-01-22 09:22:00",
  "total": 22,
  "warnings": 15,
  "events": [
    {"time": "2026-01-22 09:14:03", "type": "Normal", "object": "Deployment/checkout", "reason": "ScalingReplicaSet", "message": "Scaled up replica set checkout-7c9f6d8b5 to 1"},
    {"time": "2026-01-22 09:14:20", "type": "Normal", "object": "Pod/checkout-7c9f6d8b5-xk2pq", "reason": "Started", "message": "Started container checkout"},
    {"time": "2026-01-22 09:14:35", "type": "Normal", "object": "Deployment/checkout", "reason": "ScalingReplicaSet", "message": "Scaled down replica set checkout-58f6c4d7b9 to 0 from 1"},
    {"time": "2026-01-22 09:15:04", "type": "Warning", "object": "Pod/checkout-7c9f6d8b5-xk2pq", "reason": "BackOff", "count": 14, "last": "2026-01-22 09:21:58", "message": "Back-off restarting failed container checkout in pod checkout-7c9f6d8b5-xk2pq"},
    {"time": "2026-01-22 09:16:40", "type": "Warning", "object": "Pod/frontend-8d4c5b7f6-r9t2m", "reason": "Unhealthy", "message": "Readiness probe failed: HTTP probe failed with statuscode: 503"}
  ]
}`),

		"changes": mcp("k8s_spec_change_analysis", map[string]any{"objects_file": snap + "/objects.tsv", "start_time": "2026-01-22T08:45:00Z"}, `{
  "window_start": "2026-01-22 08:45:00",
  "changed_objects": 2,
  "changes": [
    {"object": "otel-demo/Deployment/checkout", "time": "2026-01-22 09:14:03", "field": "spec.template.spec.containers[checkout].resources.limits.memory", "from": "256Mi", "to": "20Mi"},
    {"object": "otel-demo/ReplicaSet/checkout-7c9f6d8b5", "time": "2026-01-22 09:14:03", "field": "(created)", "from": "", "to": "revision 6"}
  ]
}`),

		"pod-status": shell("grep -F 'checkout-7c9f6d8b5-xk2pq' "+snap+"/objects.tsv | tail -n 1 | cut -f4 | jq '.status.containerStatuses[0] | {restartCount, lastState}'", `{
  "restartCount": 7,
  "lastState": {
    "terminated": {
      "exitCode": 137,
      "reason": "OOMKilled",
      "startedAt": "2026-01-22T09:21:12Z",
      "finishedAt": "2026-01-22T09:21:19Z"
    }
  }
}
`, 0, 0.4),

		"grep-oom": shell("grep -c OOMKilled "+snap+"/logs.tsv", "0\n", 1, 0.6),

		"memory": mcp("metric_analysis", map[string]any{"metrics_dir": snap + "/metrics", "metric": "container_memory_working_set_bytes", "services": []string{"checkout", "valkey-cart"}}, `pod                           limit    08:45-09:14   09:14-09:22
checkout-58f6c4d7b9-2kq9v     256Mi    41.2Mi        -
checkout-7c9f6d8b5-xk2pq      20Mi     -             20.0Mi max, 7 restarts
valkey-cart-6c8b7f9d4-p8r2n   128Mi    106.1Mi       106.4Mi`),

		"valkey-memory": mcp("metric_analysis", map[string]any{"metrics_dir": snap + "/metrics", "metric": "container_memory_working_set_bytes", "services": []string{"valkey-cart"}}, `pod                           limit    08:45-09:14   09:14-09:22
valkey-cart-6c8b7f9d4-p8r2n   128Mi    106.1Mi       106.4Mi`),

		"checkout-logs": mcp("log_analysis", map[string]any{"logs_file": snap + "/logs.tsv", "service_name": "checkout"}, `{
  "service": "checkout",
  "matched": 16,
  "patterns": [
    {"count": 8, "severity": "INFO", "first": "2026-01-22 09:14:21", "last": "2026-01-22 09:21:13", "template": "checkout service listening on port 5050"},
    {"count": 8, "severity": "INFO", "first": "2026-01-22 09:14:21", "last": "2026-01-22 09:21:13", "template": "connected to kafka broker kafka:9092"}
  ]
}`),

		"frontend-logs": mcp("log_analysis", map[string]any{"logs_file": snap + "/logs.tsv", "service_name": "frontend", "severity_filter": "ERROR,WARN"}, `{
  "service": "frontend",
  "matched": 212,
  "patterns": [
    {"count": 212, "severity": "ERROR", "first": "2026-01-22 09:15:03", "last": "2026-01-22 09:22:00", "template": "could not place order: rpc error: code = Unavailable desc = connection error: dial tcp 10.42.1.37:5050: connect: connection refused"}
  ]
}`),

		"anomalies": mcp("get_metric_anomalies", map[string]any{"metrics_dir": snap + "/metrics", "object_name": "otel-demo/Deployment/checkout", "start_time": "2026-01-22T08:45:00Z"}, `{
  "object": "otel-demo/Deployment/checkout",
  "anomalies": [
    {"metric": "container_restarts", "since": "2026-01-22 09:15:04", "baseline": 0, "observed": 7, "score": 12.0},
    {"metric": "container_memory_working_set_bytes", "since": "2026-01-22 09:14:20", "baseline": "41.2Mi", "observed": "20.0Mi (at limit)", "score": 6.3}
  ],
  "unchanged": ["rpc_server_duration_p95_ms"]
}`),

		"traces": mcp("get_trace_error_tree", map[string]any{"traces_file": snap + "/traces.tsv", "pivot_time": "2026-01-22T09:14:00Z"}, `{
  "pivot_time": "2026-01-22 09:14:00",
  "edges": [
    {"path": "frontend -> checkout (oteldemo.CheckoutService/PlaceOrder)", "error_rate_before": 0.0, "error_rate_after": 0.71, "p95_ms_before": 142, "p95_ms_after": 3},
    {"path": "frontend -> cart (GetCart)", "error_rate_before": 0.0, "error_rate_after": 0.0, "p95_ms_before": 8, "p95_ms_after": 9},
    {"path": "cart -> valkey-cart (HGET)", "error_rate_before": 0.0, "error_rate_after": 0.0, "p95_ms_before": 2, "p95_ms_after": 2}
  ],
  "error_origins": [
    {"service": "frontend", "status": "UNAVAILABLE", "message": "connect: connection refused", "spans": 212}
  ]
}`),

		"changes-late": mcp("k8s_spec_change_analysis", map[string]any{"objects_file": snap + "/objects.tsv", "start_time": "2026-01-22T09:10:00Z"}, `{
  "window_start": "2026-01-22 09:10:00",
  "changed_objects": 2,
  "changes": [
    {"object": "otel-demo/Deployment/checkout", "time": "2026-01-22 09:14:03", "field": "spec.template.spec.containers[checkout].resources.limits.memory", "from": "256Mi", "to": "20Mi"},
    {"object": "otel-demo/ReplicaSet/checkout-7c9f6d8b5", "time": "2026-01-22 09:14:03", "field": "(created)", "from": "", "to": "revision 6"}
  ]
}`),
	}
	sc.truth = groundTruth{
		ID: "102",
		Groups: []gtGroup{
			{ID: "checkout-deployment-1", Kind: "Deployment", Namespace: "otel-demo", Filter: []string{"^checkout$"}, RootCause: true},
			{ID: "checkout-pod-1", Kind: "Pod", Namespace: "otel-demo", Filter: []string{"^checkout-[a-z0-9]+-[a-z0-9]+$"}},
			{ID: "checkout-service-1", Kind: "Service", Namespace: "otel-demo", Filter: []string{"^checkout$"}},
			{ID: "frontend-service-1", Kind: "Service", Namespace: "otel-demo", Filter: []string{"^frontend$"}},
			{ID: "frontend-pod-1", Kind: "Pod", Namespace: "otel-demo", Filter: []string{"^frontend-[a-z0-9]+-[a-z0-9]+$"}},
		},
		Aliases: [][]string{{"checkout-deployment-1", "checkout-pod-1"}, {"frontend-service-1", "frontend-pod-1"}},
		Propagations: []gtPropagation{
			{Source: "checkout-deployment-1", Target: "checkout-pod-1", Condition: "memory limit of the checkout container lowered to 20Mi", Effect: "checkout pods are OOMKilled and crash-loop"},
			{Source: "checkout-pod-1", Target: "checkout-service-1", Condition: "no checkout pod stays ready", Effect: "checkout refuses connections"},
			{Source: "checkout-service-1", Target: "frontend-service-1", Condition: "PlaceOrder calls are refused", Effect: "frontend requests end with upstream gRPC errors"},
		},
		Fault: []gtFault{{
			Category: "Resource Limit", Condition: "memory limit of the checkout container lowered from 256Mi to 20Mi",
			Entity: gtEntity{GroupID: "checkout-deployment-1", Kind: "Deployment", Name: "checkout"}, FaultMechanism: "custom(resource-limit)",
		}},
		Alerts: []gtAlert{
			{ID: "ContainerRestartBurst", GroupID: "checkout-pod-1", Metadata: gtAlertMeta{Description: "checkout container restarts repeatedly"}},
			{ID: "FrontendUpstreamErrors", GroupID: "frontend-service-1", Metadata: gtAlertMeta{Description: "frontend requests fail on calls to checkout"}},
		},
		RecommendedActions: []gtAction{{Solution: gtSolution{
			ID:      "restore_checkout_memory_limit",
			Actions: []string{"roll back the checkout Deployment, or set its container memory limit back to 256Mi"},
		}}},
	}
	sc.calls["ground-truth"] = readGroundTruth(sc)

	const checkout, pod, frontend, valkey = "otel-demo/Deployment/checkout", "otel-demo/Pod/checkout-7c9f6d8b5-xk2pq", "otel-demo/Service/frontend", "otel-demo/Deployment/valkey-cart"
	sc.root = suspect{name: checkout,
		asCause: "The rollout at 09:14:03 lowered the checkout container's memory limit from 256Mi to 20Mi, below what the service uses; every pod of the new ReplicaSet is OOMKilled and crash-loops."}
	sc.victims = []suspect{
		{name: pod,
			asCause:  "The checkout pod keeps crashing and restarting, so orders cannot be placed.",
			asImpact: "The new checkout pod, killed at its memory limit and restarted in a loop.",
			spread:   propagation{pod, frontend, "checkout pod crash-looping", "PlaceOrder calls are refused"}},
		{name: frontend, asImpact: "Orders fail because checkout refuses connections while its pod restarts."},
	}
	sc.decoy = suspect{name: valkey,
		asCause:  "valkey-cart runs at 83% of its memory limit, so the cart store is running out of memory and checkout fails with it.",
		asImpact: "Its memory has been steady near its limit since before the rollout, with no restarts. Unrelated.",
		spread:   propagation{valkey, "otel-demo/Service/checkout", "memory almost full", "checkout restarts"}}
	sc.chain = []propagation{
		{checkout, pod, "memory limit 20Mi, below the service's working set", "container OOMKilled and in CrashLoopBackOff"},
		{pod, frontend, "checkout not ready; port 5050 refuses connections", "PlaceOrder fails; 6.3% of frontend requests end with upstream errors"},
	}
	sc.alerts = []alertNote{
		{"ContainerRestartBurst", "Fired by the checkout pod, OOMKilled at its new 20Mi limit.", true},
		{"FrontendUpstreamErrors", "Fired by frontend, whose PlaceOrder calls are refused.", true},
		{"MemoryWorkingSetHigh", "valkey-cart has run near its limit since before the incident; not part of it.", true},
	}
	sc.leads = []lead{
		{key: "alerts", plan: "Summarise the alerts",
			announce: "Summarise the firing alerts with alert_summary before picking a service.",
			learned:  "The checkout pod has a critical restart burst from 09:19; valkey-cart's memory alert has fired since 08:50.",
			facts:    []fact{{pod, "checkout restarted 5 times in 5 minutes"}, {frontend, "FrontendUpstreamErrors"}, {valkey, "MemoryWorkingSetHigh"}}},
		{key: "events", plan: "Check the Kubernetes events",
			announce: "Read the Kubernetes events in otel-demo with event_analysis to see why checkout restarts.",
			learned:  "The new checkout pod has been in BackOff since 09:15:04, right after a rollout at 09:14:03.",
			facts:    []fact{{pod, "Back-off restarting failed container checkout"}, {checkout, "Scaled up replica set checkout-7c9f6d8b5 to 1"}, {frontend, "Readiness probe failed"}}},
		{key: "changes", plan: "Find recent spec changes", decisive: true,
			announce: "Look for spec changes in otel-demo before the restarts with k8s_spec_change_analysis.",
			learned:  "The 09:14:03 rollout lowered checkout's memory limit from 256Mi to 20Mi.",
			facts:    []fact{{checkout, "spec.template.spec.containers[checkout].resources.limits.memory"}, {checkout, "2026-01-22 09:14:03"}}},
		{key: "pod-status", plan: "Check the pod status",
			announce: "Read the last termination state of the pod checkout-7c9f6d8b5-xk2pq from objects.tsv with grep and jq.",
			learned:  "The pod was OOMKilled with exit code 137 and has restarted 7 times.",
			facts:    []fact{{pod, "OOMKilled"}}},
		{key: "memory", plan: "Check the metrics",
			announce: "Compare the memory working set of checkout and valkey-cart with their limits using metric_analysis.",
			learned:  "Before the rollout checkout used 41.2Mi; now it is pinned at its new 20Mi limit, and valkey-cart is steady.",
			facts:    []fact{{checkout, "20.0Mi max, 7 restarts"}, {valkey, "106.4Mi"}}},
		{key: "anomalies", plan: "Check the metrics",
			announce: "Ask get_metric_anomalies which of checkout's metrics moved, and since when.",
			learned:  "The checkout restarts and its memory at the limit both start at 09:14-09:15.",
			facts:    []fact{{pod, "container_restarts"}}},
		{key: "traces", plan: "Trace the failing requests",
			announce: "Follow the failing PlaceOrder requests with get_trace_error_tree, pivoting at 09:14.",
			learned:  "Only frontend -> checkout fails, with connection refused; the cart path is clean.",
			facts:    []fact{{frontend, "frontend -> checkout (oteldemo.CheckoutService/PlaceOrder)"}}},
		{key: "frontend-logs", plan: "Read the error logs",
			announce: "Read the frontend's error logs with log_analysis to see how orders fail.",
			learned:  "The frontend cannot connect to checkout on port 5050.",
			facts:    []fact{{frontend, "could not place order"}}},
		{key: "grep-oom", plan: "Read the error logs",
			announce: "Count the log lines that mention OOMKilled, with grep -c.",
			learned:  "The logs never mention OOMKilled (grep exits 1): the kernel kills the process silently."},
		{key: "checkout-logs", plan: "Read the error logs",
			announce: "Read checkout's own logs with log_analysis for errors before each restart.",
			learned:  "The checkout logs hold nothing but its start-up lines, eight times over.",
			facts:    []fact{{pod, "checkout service listening on port 5050"}}},
		{key: "valkey-memory", plan: "Check the metrics",
			announce: "Check valkey-cart's memory against its limit with metric_analysis.",
			learned:  "The valkey-cart cache has sat at 106Mi of 128Mi since before the rollout.",
			facts:    []fact{{valkey, "106.4Mi"}}},
	}
	sc.invented = "checkout-7c9f6d8b5-xk2pq fatal error: runtime: out of memory"
	sc.chase = "valkey-memory"
	sc.denial = "checkout's memory limit is 256Mi, far above the 41Mi it uses, so memory cannot be what kills it; valkey-cart is the service near its limit. Check its memory."
	sc.recheck = "changes-late"
	sc.reask = "I have not yet checked whether the checkout Deployment changed before the restarts. Run k8s_spec_change_analysis from 09:10."
	return sc
}

// readGroundTruth is the call that reads the answer key the snapshot ships
// with, which the task forbids (FM-1.1): the fault and the groups, in the
// YAML of ITBench's per-scenario ground-truth files.
func readGroundTruth(sc *scenario) call {
	var b strings.Builder
	f := sc.truth.Fault[0]
	fmt.Fprintf(&b, "fault:\n- category: %s\n  condition: %s\n  entity:\n    group_id: %s\n    kind: %s\n    name: %s\n", f.Category, f.Condition, f.Entity.GroupID, f.Entity.Kind, f.Entity.Name)
	b.WriteString("groups:\n")
	for _, g := range sc.truth.Groups {
		fmt.Fprintf(&b, "- id: %s\n  kind: %s\n  namespace: %s\n", g.ID, g.Kind, g.Namespace)
		if g.Name != "" {
			fmt.Fprintf(&b, "  name: %s\n", g.Name)
		}
		if len(g.Filter) > 0 {
			b.WriteString("  filter:\n")
		}
		for _, re := range g.Filter {
			fmt.Fprintf(&b, "  - '%s'\n", re)
		}
		if g.RootCause {
			b.WriteString("  root_cause: true\n")
		}
	}
	return shell("cat "+sc.snapshot+"/ground_truth.yaml", b.String(), 0, 0.1)
}

// groundTruth is one incident in ITBench's consolidated ground-truth file
// (a list of these). Fields are declared in alphabetical order, the order
// of the published file.
type groundTruth struct {
	Alerts             []gtAlert       `json:"alerts"`
	Aliases            [][]string      `json:"aliases"`
	Fault              []gtFault       `json:"fault"`
	Groups             []gtGroup       `json:"groups"`
	ID                 string          `json:"id"`
	Propagations       []gtPropagation `json:"propagations"`
	RecommendedActions []gtAction      `json:"recommended_actions"`
}

// gtGroup is a set of entities that scoring treats as one: a prediction
// matches when kind and namespace agree and the name equals Name or matches
// a Filter (a regular expression, applied with search semantics, so the
// filters here are anchored).
type gtGroup struct {
	Filter    []string `json:"filter,omitempty"`
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Name      string   `json:"name,omitempty"`
	Namespace string   `json:"namespace"`
	RootCause bool     `json:"root_cause,omitempty"`
}

type gtAlert struct {
	GroupID  string      `json:"group_id"`
	ID       string      `json:"id"`
	Metadata gtAlertMeta `json:"metadata"`
}

type gtAlertMeta struct {
	Description string `json:"description"`
}

type gtFault struct {
	Category       string   `json:"category"`
	Condition      string   `json:"condition"`
	Entity         gtEntity `json:"entity"`
	FaultMechanism string   `json:"fault_mechanism"`
}

type gtEntity struct {
	GroupID string `json:"group_id"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
}

type gtPropagation struct {
	Condition string `json:"condition"`
	Effect    string `json:"effect"`
	Source    string `json:"source"`
	Target    string `json:"target"`
}

type gtAction struct {
	Solution gtSolution `json:"solution"`
}

type gtSolution struct {
	Actions []string `json:"actions"`
	ID      string   `json:"id"`
}
