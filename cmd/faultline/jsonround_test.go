package main

import "testing"

func TestRoundJSONNumbers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"recall": 0.6666666666666666, "n": 12}`, `{"recall": 0.666667, "n": 12}`},
		{`[0.33333333333333337, -0.15000000000000002, 1e-07, 2.5e+10, 0.002165]`, `[0.333333, -0.15, 1e-07, 2.5e+10, 0.002165]`},
		{`{"text": "0.6666666666666666 \"1.23456789\"", "x": 1.0}`, `{"text": "0.6666666666666666 \"1.23456789\"", "x": 1}`},
		{`{"a\\": 0.123456789}`, `{"a\\": 0.123457}`},
		{`{"big": 123456789012}`, `{"big": 123456789012}`},
	} {
		if got := string(roundJSONNumbers([]byte(tc.in))); got != tc.want {
			t.Errorf("roundJSONNumbers(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
