package judge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// Preflight checks, before the first trace, what would otherwise fail every
// call after its retries: an endpoint host that does not resolve, and a
// remote endpoint without an API key (local servers such as Ollama or vLLM
// usually need none, so a host that resolves to loopback or a private
// address goes without). keyHint names where the key is read from.
func Preflight(ctx context.Context, baseURL, apiKey, keyHint string) error {
	u, err := url.Parse(chatURL(baseURL))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--base-url %q is not an http(s) URL", baseURL)
	}
	host := u.Hostname()
	addrs := []string{host}
	if net.ParseIP(host) == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		addrs, err = net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			msg := fmt.Sprintf("the judge endpoint's host %s does not resolve (%v): check --base-url and the network", host, err)
			if apiKey == "" {
				msg += "; no API key is set either: set " + keyHint
			}
			return errors.New(msg)
		}
	}
	if apiKey != "" {
		return nil
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		if ip == nil || !(ip.IsLoopback() || ip.IsPrivate()) {
			return fmt.Errorf("no API key for the judge endpoint %s: set %s (a local endpoint, such as http://localhost:11434/v1, needs none)", u.Host, keyHint)
		}
	}
	return nil
}
