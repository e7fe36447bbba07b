package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serve runs the serve command until the test cancels it, and returns
// the address it printed.
func (c *cli) serve(ctx context.Context, args ...string) (string, <-chan int, *syncBuffer) {
	c.t.Helper()
	var stdout, stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, append([]string{"--db", c.db, "serve"}, args...), strings.NewReader(""), &stdout, &stderr)
	}()
	serving := regexp.MustCompile(`serving \S+ on (http://\S+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], exit, &stderr
		}
		select {
		case code := <-exit:
			c.t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
	}
	c.t.Fatalf("not serving: %s", stderr.String())
	return "", nil, nil
}

func TestServeCommand(t *testing.T) {
	c := newCLI(t)
	if _, errOut, code := c.run("", "analyze", "-q", examples); code != exitOK {
		t.Fatalf("analyze: %s", errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, exit, stderr := c.serve(ctx, "--addr", "127.0.0.1:0", "--ground-truth", filepath.Join(examples, "itbench-zero", "ground_truths.json"))
	res, err := http.Get(url + "traces?model=sim-beta")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || strings.Count(string(body), `<td class="id">`) != 4 {
		t.Errorf("the trace list: %s", res.Status)
	}
	cancel()
	if code := <-exit; code != exitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "no traces yet") {
		t.Errorf("a filled database said to be empty: %s", stderr.String())
	}

	// An empty database is served, with a word on how to fill it.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, exit, stderr = newCLI(t).serve(ctx, "--addr", "127.0.0.1:0")
	cancel()
	<-exit
	if !strings.Contains(stderr.String(), "holds no traces yet: faultline ingest PATH") {
		t.Errorf("nothing said of the empty database: %s", stderr.String())
	}

	// Beyond loopback only with a token, which the printed address carries.
	if _, errOut, code := c.run("", "serve", "--addr", "0.0.0.0:0"); code != exitFailure || !strings.Contains(errOut, "needs a token") {
		t.Errorf("serving everywhere without a token: exit %d, %s", code, errOut)
	} else if strings.Contains(errOut, "Ctrl-C stops") {
		t.Errorf("said it was serving before refusing: %s", errOut)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("FAULTLINE_TOKEN", "s3cret-token")
	url, exit, _ = c.serve(ctx, "--addr", "0.0.0.0:0")
	if !strings.HasSuffix(url, "/?token=s3cret-token") {
		t.Errorf("printed %s", url)
	}
	local := strings.Replace(strings.TrimSuffix(url, "?token=s3cret-token"), "0.0.0.0", "127.0.0.1", 1)
	if res, err := http.Get(local); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %v %v", err, res)
	}
	req, _ := http.NewRequest("GET", local, nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("with the token: %v %v", err, res)
	}
	cancel()
	<-exit

	out, _, _ := c.run("", "serve", "--help")
	for _, want := range []string{"faultline serve --addr 127.0.0.1:8080", "FAULTLINE_TOKEN", "--ground-truth"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}

// serve refuses a token that guards nothing, or an address beyond
// loopback without one, before it says it is serving.
func TestServeRefuses(t *testing.T) {
	c := newCLI(t)
	const unset = "(unset)"
	for _, tc := range []struct {
		name, env string // env: $FAULTLINE_TOKEN, or unset
		args      []string
		want      string
	}{
		{"a blank variable", "   ", []string{"--addr", "0.0.0.0:0"}, "$FAULTLINE_TOKEN: the token is blank"},
		{"an empty flag, a blank variable", "   ", []string{"--token", "", "--addr", "0.0.0.0:0"}, "--token is empty"},
		{"an empty flag on loopback", unset, []string{"--token", "", "--addr", "127.0.0.1:0"}, "--token is empty"},
		{"an empty variable", "", []string{"--addr", "127.0.0.1:0"}, "$FAULTLINE_TOKEN is empty"},
		{"a token of whitespace", unset, []string{"--token", " \t ", "--addr", "0.0.0.0:0"}, "--token: the token is blank"},
		{"a space in the token", unset, []string{"--token", "s3cret token-1", "--addr", "127.0.0.1:0"}, "holds a space"},
		{"a short token", unset, []string{"--token", "sh0rt", "--addr", "0.0.0.0:0"}, "too short"},
		{"a short variable", "sh0rt", []string{"--addr", "127.0.0.1:0"}, "$FAULTLINE_TOKEN: the token is 5 characters long"},
		{"beyond loopback without a token", unset, []string{"--addr", "0.0.0.0:0"}, "needs a token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FAULTLINE_TOKEN", tc.env)
			if tc.env == unset {
				os.Unsetenv("FAULTLINE_TOKEN")
			}
			// Served by mistake, the command would stop after a while, with 0.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr syncBuffer
			code := run(ctx, append([]string{"--db", c.db, "serve"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			errOut := stderr.String()
			if code != exitFailure || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d and %q: %s", code, exitFailure, tc.want, errOut)
			}
			if strings.Contains(errOut, "Ctrl-C stops") || strings.Contains(errOut, "sh0rt") {
				t.Errorf("said it was serving, or repeated the token: %s", errOut)
			}
		})
	}
}

func TestLabelsCommand(t *testing.T) {
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", examples); code != exitOK {
		t.Fatalf("ingest: %s", errOut)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "alice.csv")
	os.WriteFile(in, []byte("trace,mode,present,steps,quote,note\n"+
		"019c27e4-2c98-703d-8ddf-4d5566cecce7,FM-1.3,true,11,log_analysis,same call thrice\n"+
		"019c27e4-2c98-703d-8ddf-4d5566cecce7,FM-3.3,false,,,\n"+
		"019c2808-f690-7e25-8542-c93b50156ee9,FM-1.3,true,3,not in step 3,\n"+
		"nope,FM-1.3,true,,,\n"), 0o644)
	_, errOut, code := c.run("", "labels", "import", in, "--labeller", "alice")
	if code != exitDataError || !strings.Contains(errOut, `alice.csv:4: finding FM-1.3: quote "not in step 3" does not occur in steps [3]; label skipped`) ||
		!strings.Contains(errOut, `trace "nope" is not in the database`) || !strings.Contains(errOut, "stored 3 labels as human:alice") {
		t.Errorf("import: exit %d\n%s", code, errOut)
	}
	out, errOut, code := c.run("", "labels", "export", "--source", "human:alice")
	want := "trace,mode,present,steps,quote,note\n" +
		"019c27e4-2c98-703d-8ddf-4d5566cecce7,FM-1.3,true,11,log_analysis,same call thrice\n" +
		"019c27e4-2c98-703d-8ddf-4d5566cecce7,FM-3.3,false,,,\n" +
		"019c2808-f690-7e25-8542-c93b50156ee9,FM-3.3,false,,,\n"
	if code != exitOK || out != want {
		t.Errorf("export: exit %d %s\n%s", code, errOut, out)
	}
	// The export is a label file eval reads.
	file := filepath.Join(dir, "out.jsonl")
	if _, errOut, code := c.run("", "labels", "export", "--source", "human:alice", "--format", "jsonl", "-o", file); code != exitOK {
		t.Fatalf("export to a file: %s", errOut)
	}
	if _, errOut, code := c.run("", "eval", "--labels", file, "--source", "human:alice", "--bootstrap", "0"); code != exitOK {
		t.Errorf("eval of the export against its source: exit %d %s", code, errOut)
	}
	if _, errOut, code := c.run("", "labels", "import", in, "--labeller", "a b"); code != exitFailure || !strings.Contains(errOut, "labeller name") {
		t.Errorf("a bad name: exit %d %s", code, errOut)
	}
}
