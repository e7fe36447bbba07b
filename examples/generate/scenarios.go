package main

import "fmt"

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
	return sc
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
