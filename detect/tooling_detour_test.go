package detect

import "testing"

func TestToolingDetour(t *testing.T) {
	const (
		broken  = `fail shell {"command":["python3","-c","import pandas; pandas.read_csv('/data/snap/7/logs.tsv')"]} => ModuleNotFoundError: No module named 'pandas'`
		version = `call shell {"command":["python3","--version"]} => Python 3.9.6`
		which   = `call shell {"command":["which","python3"]} => /usr/bin/python3`
		install = `fail shell {"command":["pip","install","pandas"]} => error: externally-managed-environment`
		hello   = `call shell {"command":["python3","-c","print(1)"]} => 1`
		data    = `call mcp__srv__log_analysis {"logs_file":"/data/snap/7/logs.tsv"} => 3 patterns`
	)
	runCases(t, ToolingDetour, []detCase{
		{name: "an error and straight back to the data", trace: build(zeroTask, `user go`, broken, data, version, which)},
		{name: "a detour through the agent's tooling", trace: build(zeroTask, `user go`, broken, version, which, hello, data),
			want: [][]int{{1, 3, 5, 7, 2}}, quote: "ModuleNotFoundError: No module named 'pandas'", conf: 0.55},
		{name: "installing makes it surer", trace: build(zeroTask, `user go`, broken, version, install, which, hello, data),
			want: [][]int{{1, 3, 5, 7, 9, 2}}, conf: 0.7},
		{name: "retrying the data is not tooling", trace: build(zeroTask, `user go`, broken, broken, broken, version, data)},
		{name: "work on the output file is neutral", trace: build(zeroTask, `user go`, broken, writeAnswer, validate, `fail shell {"cmd":"echo x > agent_output.json"} => denied`, data)},
		{name: "without a data directory nothing is judged", trace: build(`task Fix the bug in main.go.`, `user go`, broken, version, which, hello)},
		{name: "re-running its own script on the data is still tooling", trace: build(zeroTask, `user go`,
			`call apply_patch {"input":"*** Begin Patch\n*** Add File: rca.sh\n+awk x\n*** End Patch"} => Success.`,
			`fail shell {"command":["bash","-lc","bash rca.sh /data/snap/7"]} => rca.sh: line 3: unexpected EOF`,
			`fail shell {"command":["bash","-lc","bash -n rca.sh"]} => syntax error`,
			`call apply_patch {"input":"*** Begin Patch\n*** Update File: rca.sh\n-awk x\n+awk y\n*** End Patch"} => Success.`,
			`call shell {"command":["bash","-lc","./rca.sh /data/snap/7"]} => `, data),
			want: [][]int{{3, 5, 7, 9, 4}}, conf: 0.55},
		{name: "a detour that never returns to the data", trace: build(zeroTask, `user go`, broken, version, which, hello),
			want: [][]int{{1, 3, 5, 7, 2}}},
	})
}
