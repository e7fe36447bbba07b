package score

import (
	"regexp"
	"strings"
)

// Entity is a Kubernetes object a diagnosis names.
type Entity struct {
	Raw       string `json:"raw"`
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name"`
}

// knownKinds are the Kubernetes kinds recognised in free-form names such as
// "flagd-config ConfigMap" or "service/cart"; keys are lower case.
var knownKinds = map[string]string{}

func init() {
	for _, k := range []string{"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Service", "ConfigMap", "Secret",
		"Namespace", "Node", "Job", "CronJob", "Ingress", "PersistentVolumeClaim", "PersistentVolume", "HorizontalPodAutoscaler",
		"NetworkPolicy", "ResourceQuota", "PodDisruptionBudget", "ServiceAccount", "Endpoints", "Schedule", "NetworkChaos",
		"PodChaos", "StressChaos", "HTTPChaos", "IOChaos", "DNSChaos", "TimeChaos", "KernelChaos", "Port"} {
		knownKinds[strings.ToLower(k)] = k
	}
	for alias, k := range map[string]string{"svc": "Service", "deploy": "Deployment", "cm": "ConfigMap", "rs": "ReplicaSet",
		"sts": "StatefulSet", "ds": "DaemonSet", "ns": "Namespace", "pvc": "PersistentVolumeClaim", "hpa": "HorizontalPodAutoscaler"} {
		knownKinds[alias] = k
	}
}

func kindOf(s string) (string, bool) {
	k, ok := knownKinds[strings.ToLower(strings.TrimSpace(s))]
	return k, ok
}

var (
	kindInParens = regexp.MustCompile(`^(.+?)\s*\(([A-Za-z]+)\)$`)
	nameThenKind = regexp.MustCompile(`^(\S+)\s+([A-Za-z]+)$`)
)

// ParseEntity reads the ways agents name entities: "namespace/Kind/name",
// "Kind/name" (or "kind/name"), "name Kind", "name (Kind)" and a bare name.
func ParseEntity(s string) Entity {
	e := Entity{Raw: s}
	s = strings.Trim(strings.TrimSpace(s), "`'\"")
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 3:
		if k, ok := kindOf(parts[1]); ok {
			e.Namespace, e.Kind, e.Name = parts[0], k, parts[2]
			return e
		}
		e.Namespace, e.Kind, e.Name = parts[0], parts[1], parts[2]
		return e
	case len(parts) == 2:
		if k, ok := kindOf(parts[0]); ok {
			e.Kind, e.Name = k, parts[1]
			return e
		}
		// namespace/name
		e.Namespace, e.Name = parts[0], parts[1]
		return e
	}
	if m := kindInParens.FindStringSubmatch(s); m != nil {
		if k, ok := kindOf(m[2]); ok {
			e.Kind, e.Name = k, strings.TrimSpace(m[1])
			return e
		}
	}
	if m := nameThenKind.FindStringSubmatch(s); m != nil {
		if k, ok := kindOf(m[2]); ok {
			e.Kind, e.Name = k, m[1]
			return e
		}
	}
	e.Name = s
	return e
}

// String gives the entity in canonical namespace/Kind/name form, leaving out
// what is unknown.
func (e Entity) String() string {
	var parts []string
	for _, p := range []string{e.Namespace, e.Kind, e.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}
