package synth

import "time"

// The simulated models. Their names say they are simulated so that no one
// mistakes the cohort for measurements of a real model.
const (
	alpha = "sim-alpha" // strong: right every time, brief; repeats a call once
	beta  = "sim-beta"  // medium: right on 102, blames the victim on 101; re-runs queries
	gamma = "sim-gamma" // weak: loses track of the task, chases red herrings
)

// cohort is the twelve runs: three models, two scenarios, two trials. The
// README's table lists what each is meant to show; keep the two in step.
func cohort() []run {
	a, b := incident101, incident102
	runs := []run{
		{model: alpha, sc: a, trial: 1, answer: jsonAnswer(alpha101), steps: []step{
			plan("Inventory the snapshot, line the alerts up with recent changes, then confirm with logs and traces.", 0,
				"List the snapshot", "Summarise the alerts", "Find what changed before the first error", "Confirm with logs and traces", "Write and validate agent_output.json").
				thinking("Offline RCA on a snapshot. Start with an inventory before picking tools."),
			a.do("ls"),
			a.do("alerts").thinking("The listing includes ground_truth.yaml; I must not open it. Alerts first."),
			a.do("changes").thinking("ad and frontend alerts start at 14:05 and 14:07; the throttling alert has been firing since 13:41, before anything else. Look for changes just before 14:05."),
			a.do("ad-logs").thinking("flagd-config changed at 14:02:11: adFailure off to on. If ad's errors start right after and name the flag, the flag is the cause."),
			a.do("traces").thinking("ad's errors start 20 s after the change and quote the flag. Check that the frontend's errors come from the ad edge alone."),
			plan("Flag change -> ad rejects GetAds -> frontend errors; the throttling predates it all.", 4,
				"List the snapshot", "Summarise the alerts", "Find what changed before the first error", "Confirm with logs and traces", "Write and validate agent_output.json"),
			patch(),
			validate(),
			say(alphaFinal101),
		}},
		{model: alpha, sc: a, trial: 2, answer: jsonAnswer(alpha101), steps: []step{
			a.do("ls").thinking("List the snapshot first."),
			a.do("alerts"),
			a.do("ad-logs").thinking("Two service alerts and one on the load generator. ad has the higher error ratio; read its errors."),
			a.do("frontend-logs").thinking("ad's errors cite the adFailure flag: a flag evaluation, not a crash. Check the frontend's errors are the same failures."),
			a.do("changes").thinking("Both sides point at the flag. When did its configuration change?"),
			a.do("flagd-config").thinking("adFailure's default variant went off -> on at 14:02:11. Read the ConfigMap before and after to be sure."),
			patch().thinking("The ConfigMap is the root cause; ad and frontend are impacted; the load generator is unrelated."),
			validate(),
			say(alphaFinal101),
		}},
		{model: alpha, sc: b, trial: 1, answer: jsonAnswer(alpha102), steps: []step{
			plan("Inventory, alerts, then find why checkout restarts.", 0,
				"List the snapshot", "Summarise the alerts", "Find why checkout restarts", "Write and validate agent_output.json").
				thinking("Start with an inventory of the snapshot."),
			b.do("ls"),
			b.do("alerts"),
			b.do("grep-oom").thinking("checkout restarts in a burst. See whether the logs mention OOM."),
			b.do("events").thinking("No match (grep exits 1): a process killed by the kernel logs nothing. Events and pod status will say how it died."),
			b.do("pod-status").thinking("BackOff on the pod of a ReplicaSet created at 09:14:03. Read its last termination."),
			b.do("changes").thinking("OOMKilled, exit 137, 7 restarts. What did the 09:14 rollout change?"),
			b.do("memory").thinking("The memory limit went 256Mi -> 20Mi. Compare with what checkout used before, and check the valkey-cart alert."),
			plan("Limit 20Mi < 41Mi working set -> OOMKilled -> orders refused; valkey-cart unchanged.", 3,
				"List the snapshot", "Summarise the alerts", "Find why checkout restarts", "Write and validate agent_output.json"),
			patch(),
			validate(),
			say(alphaFinal102),
		}},
		{model: alpha, sc: b, trial: 2, answer: jsonAnswer(alpha102), plants: []plant{
			{fm13, "identical-call", "event_analysis run again with the same arguments and output: a benign re-check in a successful run"},
		}, steps: []step{
			b.do("ls").thinking("List the snapshot first."),
			b.do("alerts"),
			b.do("events").thinking("A critical restart burst on checkout. Events first.").mark(fm13),
			b.do("memory").thinking("BackOff right after a rollout. Memory is the usual suspect; compare usage with limits."),
			// The planted repetition: a benign re-check, as strong models do.
			b.do("events").thinking("The new pod sits at its 20Mi limit. Re-read the events to be sure the restarts go on to the end of the window.").mark(fm13),
			b.do("changes").thinking("Still restarting at 09:21:58. Confirm the limit change in the spec."),
			patch(),
			validate(),
			say(alphaFinal102),
		}},

		{model: beta, sc: a, trial: 1, answer: jsonAnswer(beta101), plants: []plant{
			{fm13, "identical-call", "the same log_analysis query for ad three times, with the same output"},
		}, steps: []step{
			plan("Check alerts, then the service with the most errors.", 0, "Look at the data", "Find the failing service", "Write agent_output.json").
				thinking("I need to find the root cause from the snapshot."),
			a.do("ls"),
			a.do("alerts"),
			a.do("ad-logs").thinking("ad has the highest error ratio. Read its logs.").mark(fm13),
			a.do("error-ratio"),
			a.do("ad-logs").thinking("The error ratio jumps at 14:02. Look at ad's errors again.").mark(fm13),
			a.do("events").thinking("ad returns UNAVAILABLE. Did its pods crash?"),
			a.do("ad-logs").thinking("No warnings and no crashes. The ad logs are the strongest evidence I have; go over them once more.").mark(fm13),
			patch().thinking("ad is failing its own GetAds calls, so ad is the root cause and the frontend is impacted."),
			validate(),
			say(betaFinal101),
		}},
		{model: beta, sc: a, trial: 2, answer: jsonAnswer(beta101), plants: []plant{
			{fm13, "identical-call", "get_trace_error_tree twice with the same pivot and output"},
		}, steps: []step{
			a.do("ls").thinking("Look at the data first."),
			a.do("alerts"),
			a.do("frontend-logs").thinking("The frontend is user facing; start from its errors."),
			a.do("traces").thinking("The frontend fails to get ads. Follow the call into ad.").mark(fm13),
			a.do("ad-logs").thinking("All errors originate in ad. Read ad's logs."),
			a.do("traces").thinking("Confirm the error tree once more before writing.").mark(fm13),
			patch(),
			validate(),
			say(betaFinal101),
		}},
		{model: beta, sc: b, trial: 1, answer: jsonAnswer(beta102), steps: []step{
			plan("Read the alerts, then events and changes.", 0, "Read the alerts", "Check events and changes", "Write agent_output.json").
				thinking("Start with the alerts."),
			b.do("missing-alerts"),
			b.do("ls").thinking("There is no alerts.json; list the snapshot."),
			b.do("alerts"),
			b.do("events").thinking("checkout is restarting. Check the events."),
			b.do("changes").thinking("The restarts begin after a rollout at 09:14:03. What changed?"),
			patch().thinking("The rollout cut checkout's memory limit to 20Mi; that is the cause."),
			validate(),
			say(betaFinal102),
		}},
		{model: beta, sc: b, trial: 2, answer: jsonAnswer(beta102), plants: []plant{
			{fm13, "identical-call", "event_analysis twice in a row, with the same output"},
		}, steps: []step{
			b.do("ls").thinking("Look at the data first."),
			b.do("alerts"),
			b.do("events").thinking("checkout is restarting. Check the events.").mark(fm13),
			b.do("events").thinking("Check the events again for the checkout pod.").mark(fm13),
			b.do("memory").thinking("BackOff after a rollout. Check memory."),
			b.do("changes").thinking("checkout is at its limit. Did the limit change?"),
			patch(),
			validate(),
			say(betaFinal102),
		}},

		// gamma never thinks aloud, like models whose reasoning the API keeps hidden.
		{model: gamma, sc: a, trial: 1, plants: []plant{
			{fm15, "harness-retries", "five harness retries, answered with a promise or with nothing, never with a tool call"},
			{ModeSystem, "empty-turn", "three model turns that produce nothing at all, two of them answered by a harness retry"},
			{fm31, "no-answer-file", "the run ends without agent_output.json, after a single tool call"},
		}, steps: []step{
			a.do("ls"),
			say("The snapshot contains alerts, events, logs, metrics and traces. Next I will analyze the alerts to find the root cause."),
			nudge().mark(fm15),
			say("Understood. I will continue the investigation and create agent_output.json."),
			nudge().mark(fm15),
			idle().mark(ModeSystem),
			nudge().mark(fm15),
			say("Continuing with the alert analysis.").mark(fm31),
			nudge().mark(fm15),
			idle().mark(ModeSystem),
			nudge().mark(fm15),
			idle().mark(ModeSystem).mark(fm31),
		}},
		{model: gamma, sc: a, trial: 2, answer: jsonAnswer(gamma101), plants: []plant{
			{fm32, "no-validation", "writes agent_output.json and stops without the jq check the task asks for"},
		}, steps: []step{
			a.do("ls"),
			a.do("alerts"),
			a.do("loadgen-cpu"),
			a.do("frontend-logs"),
			patch().mark(fm32),
			say("I created agent_output.json. The load generator is overloading the application.").mark(fm32),
		}},
		{model: gamma, sc: b, trial: 1, answer: jsonAnswer(gamma102wrong), steps: []step{
			b.do("ls"),
			b.do("alerts"),
			b.do("valkey-memory"),
			truncatedPatch(),
			patch(),
			validate(),
			say("agent_output.json is written. valkey-cart is running out of memory, which breaks checkout."),
		}},
		{model: gamma, sc: b, trial: 2, answer: jsonAnswer(gamma102right), steps: []step{
			b.do("ls"),
			b.do("alerts"),
			b.do("events"),
			b.do("checkout-logs"),
			patch(),
			validate(),
			say("Done. The checkout deployment is the root cause."),
		}},
	}
	days := map[string]int{alpha: 3, beta: 4, gamma: 5}
	for i := range runs {
		r := &runs[i]
		hour := 9
		if r.sc == b {
			hour = 14
		}
		r.start = time.Date(2026, 2, days[r.model], hour, 3+40*(r.trial-1), 11*r.trial, 0, time.UTC)
	}
	return runs
}

const (
	alphaFinal101 = "Diagnosis written to agent_output.json and validated with jq.\n\n" +
		"Root cause: otel-demo/ConfigMap/flagd-config. The adFailure flag was switched on at 14:02:11; from 14:02:31 the ad service rejects about 10% of GetAds calls with UNAVAILABLE, and the frontend reports them as upstream errors. " +
		"The CPUThrottlingElevated alert on the load generator started at 13:41, after it was scaled to 25 users, and is unrelated."
	alphaFinal102 = "Diagnosis written to agent_output.json and validated with jq.\n\n" +
		"Root cause: otel-demo/Deployment/checkout. The 09:14:03 rollout lowered the container's memory limit from 256Mi to 20Mi, half of what checkout uses; the new pod is OOMKilled (exit 137) and crash-loops, so the frontend's PlaceOrder calls are refused. " +
		"valkey-cart's memory alert predates the rollout and is unrelated."
	betaFinal101 = "I have written the diagnosis to agent_output.json. The ad service is the root cause: it returns UNAVAILABLE for GetAds requests, which the frontend then reports as upstream errors."
	betaFinal102 = "I have written the diagnosis to agent_output.json. The checkout Deployment is the root cause: its new revision has a 20Mi memory limit and its pod keeps restarting, so the frontend cannot place orders."
)

// Right: the ConfigMap first, the victims and the red herring after it.
var alpha101 = &diagnosis{
	Entities: []entity{
		{"otel-demo/ConfigMap/flagd-config", true,
			"The adFailure flag in flagd-config was switched from off to on at 14:02:11. From 14:02:31 the ad service rejects GetAds calls citing that flag, so the change triggered every error that follows.",
			"k8s_spec_change_analysis: data[demo.flagd.json].flags.adFailure.defaultVariant off -> on at 14:02:11. ad logs: 404 x 'flag adFailure is on, returning UNAVAILABLE' from 14:02:31, 14 x 'flag configuration changed' at 14:02:14."},
		{"otel-demo/Service/ad", false,
			"ad is where the errors surface, but it fails only the calls the flag tells it to fail; its Deployment did not change and its pods did not restart.",
			"GrpcServerErrorRatioHigh from 14:05:40: 9.7% of GetAds calls fail; its errors all quote the flag; no spec change to Deployment/ad."},
		{"otel-demo/Service/frontend", false,
			"frontend passes the failed GetAds calls on to users as upstream errors.",
			"FrontendUpstreamErrors from 14:07:10: 4.1% of requests end with an upstream gRPC error, starting after ad's first errors."},
		{"otel-demo/Deployment/load-generator", false,
			"Its CPU throttling began at 13:41 when LOCUST_USERS went from 10 to 25, twenty minutes before the first error, and more load cannot make ad answer UNAVAILABLE. Unrelated.",
			"CPUThrottlingElevated from 13:41:00, 38% of CPU periods throttled; LOCUST_USERS 10 -> 25 at 13:40:50."},
	},
	Propagations: []propagation{
		{"otel-demo/ConfigMap/flagd-config", "otel-demo/Service/ad", "adFailure defaultVariant set to on", "ad rejects about 10% of GetAds calls with UNAVAILABLE"},
		{"otel-demo/Service/ad", "otel-demo/Service/frontend", "GetAds returns UNAVAILABLE", "4.1% of frontend requests fail with an upstream gRPC error"},
	},
	Alerts: []alertNote{
		{"GrpcServerErrorRatioHigh", "Fired by ad, which rejects GetAds calls because the adFailure flag is on.", true},
		{"FrontendUpstreamErrors", "Fired by frontend, whose calls to ad fail.", true},
		{"CPUThrottlingElevated", "Fired by load-generator after it was scaled to 25 users at 13:40; not part of this incident.", true},
	},
}

// Wrong: blames the service where the errors surface, though its own logs
// name the flag.
var beta101 = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/ad", true,
			"Every failing span originates in ad, and ad's own logs show it returning UNAVAILABLE for GetAds. The ad service is failing.",
			"404 ad ERROR logs 'GetAds failed for context keys=<*>: flag adFailure is on, returning UNAVAILABLE' from 14:02:31; GrpcServerErrorRatioHigh: 9.7% of GetAds calls fail."},
		{"otel-demo/Service/frontend", false,
			"frontend calls ad and shows its failures to users.",
			"FrontendUpstreamErrors: 4.1% of requests end with an upstream gRPC error."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/ad", "otel-demo/Service/frontend", "ad returns UNAVAILABLE", "frontend requests fail"},
	},
	Alerts: []alertNote{
		{"GrpcServerErrorRatioHigh", "ad is failing GetAds calls.", true},
		{"FrontendUpstreamErrors", "frontend calls to ad fail.", true},
		{"CPUThrottlingElevated", "Not related to the ad errors.", false},
	},
}

// Wrong: follows the unrelated alert.
var gamma101 = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/load-generator", true,
			"The load generator is CPU throttled and generates too much load, which overloads the shop and causes errors.",
			"CPUThrottlingElevated; throttled ratio 0.38."},
		{"otel-demo/Service/frontend", false,
			"The frontend has errors because of the load.",
			"FrontendUpstreamErrors; 'failed to get ads' errors."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/load-generator", "otel-demo/Service/frontend", "too much load", "frontend errors"},
	},
	Alerts: []alertNote{
		{"CPUThrottlingElevated", "The load generator is overloaded.", true},
		{"FrontendUpstreamErrors", "Caused by the load.", true},
	},
}

// Right, with the whole chain and the red herring dismissed.
var alpha102 = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/checkout", true,
			"The rollout at 09:14:03 lowered the checkout container's memory limit from 256Mi to 20Mi, half of the 41Mi the service used before; every pod of the new ReplicaSet is OOMKilled.",
			"k8s_spec_change_analysis: resources.limits.memory 256Mi -> 20Mi at 09:14:03; working set pinned at 20.0Mi; lastState OOMKilled, exit code 137, 7 restarts."},
		{"otel-demo/Pod/checkout-7c9f6d8b5-xk2pq", false,
			"The new checkout pod, killed at its memory limit and restarted in a loop.",
			"ContainerRestartBurst from 09:19:20; 14 BackOff events; restartCount 7."},
		{"otel-demo/Service/frontend", false,
			"Orders fail because checkout refuses connections while its pod restarts.",
			"FrontendUpstreamErrors from 09:20:05: 6.3% of requests end with an upstream gRPC error; its readiness probe failed with 503."},
		{"otel-demo/Pod/valkey-cart-6c8b7f9d4-p8r2n", false,
			"Its memory has been steady at 83% of its limit since before the rollout, with no restarts. Unrelated.",
			"MemoryWorkingSetHigh from 08:50:00; working set 106.1Mi before 09:14 and 106.4Mi after."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/checkout", "otel-demo/Pod/checkout-7c9f6d8b5-xk2pq", "memory limit 20Mi, below the service's working set", "container OOMKilled and in CrashLoopBackOff"},
		{"otel-demo/Pod/checkout-7c9f6d8b5-xk2pq", "otel-demo/Service/frontend", "checkout not ready; port 5050 refuses connections", "PlaceOrder fails; 6.3% of frontend requests end with upstream errors"},
	},
	Alerts: []alertNote{
		{"ContainerRestartBurst", "Fired by the checkout pod, OOMKilled at its new 20Mi limit.", true},
		{"FrontendUpstreamErrors", "Fired by frontend, whose PlaceOrder calls are refused.", true},
		{"MemoryWorkingSetHigh", "valkey-cart has run near its limit since before the incident; not part of it.", true},
	},
}

// Right, more briefly.
var beta102 = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/checkout", true,
			"A new revision of checkout was rolled out at 09:14:03 with a 20Mi memory limit; its pod has crash-looped ever since.",
			"Spec change resources.limits.memory 256Mi -> 20Mi; 14 BackOff events on checkout-7c9f6d8b5-xk2pq; ContainerRestartBurst."},
		{"otel-demo/Service/checkout", false,
			"Unavailable while its only pod restarts.",
			"BackOff events; frontend sees connection refused on port 5050."},
		{"otel-demo/Service/frontend", false,
			"Cannot place orders while checkout is down.",
			"FrontendUpstreamErrors from 09:20:05; readiness probe 503."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/checkout", "otel-demo/Service/checkout", "pods crash-loop", "checkout unavailable"},
		{"otel-demo/Service/checkout", "otel-demo/Service/frontend", "checkout unavailable", "order placement fails"},
	},
	Alerts: []alertNote{
		{"ContainerRestartBurst", "The checkout pod keeps restarting.", true},
		{"FrontendUpstreamErrors", "Orders fail at checkout.", true},
		{"MemoryWorkingSetHigh", "valkey-cart memory is high but was high before the incident.", true},
	},
}

// Wrong: takes the long-standing memory alert for the cause.
var gamma102wrong = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/valkey-cart", true,
			"valkey-cart uses 83% of its memory, so the cart store is running out of memory and checkout fails.",
			"MemoryWorkingSetHigh; 106.4Mi of 128Mi."},
		{"otel-demo/Service/checkout", false,
			"checkout depends on the cart and restarts.",
			"ContainerRestartBurst."},
		{"otel-demo/Service/frontend", false,
			"Errors from checkout.",
			"FrontendUpstreamErrors."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/valkey-cart", "otel-demo/Service/checkout", "memory almost full", "checkout restarts"},
		{"otel-demo/Service/checkout", "otel-demo/Service/frontend", "checkout restarts", "frontend errors"},
	},
	Alerts: []alertNote{
		{"MemoryWorkingSetHigh", "valkey-cart memory is almost full.", true},
		{"ContainerRestartBurst", "checkout restarts because of valkey-cart.", true},
		{"FrontendUpstreamErrors", "frontend errors from checkout.", true},
	},
}

// Right entity, for a reason it never checked: it saw the restarts and the
// rollout but not the memory limit.
var gamma102right = &diagnosis{
	Entities: []entity{
		{"otel-demo/Deployment/checkout", true,
			"The checkout pod keeps restarting since the deployment moved to a new replica set.",
			"BackOff events; ContainerRestartBurst."},
		{"otel-demo/Service/frontend", false,
			"Errors from checkout.",
			"FrontendUpstreamErrors."},
	},
	Propagations: []propagation{
		{"otel-demo/Deployment/checkout", "otel-demo/Service/frontend", "checkout restarting", "frontend errors"},
	},
	Alerts: []alertNote{
		{"ContainerRestartBurst", "checkout is restarting.", true},
		{"FrontendUpstreamErrors", "frontend errors from checkout.", true},
	},
}
