package main

import (
	"strconv"
)

// roundJSONNumbers rewrites every fractional number of a JSON document to
// at most 6 significant digits (0.6666666666666666 → 0.666667, 1e-07
// stays), leaving strings, integers and the layout alone: figures computed
// as ratios read as numbers, not as float noise.
func roundJSONNumbers(doc []byte) []byte {
	out := make([]byte, 0, len(doc))
	inString, escaped := false, false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case inString:
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			fractional := false
			for j < len(doc) && isNumberByte(doc[j]) {
				if doc[j] == '.' || doc[j] == 'e' || doc[j] == 'E' {
					fractional = true
				}
				j++
			}
			num := doc[i:j]
			if f, err := strconv.ParseFloat(string(num), 64); fractional && err == nil {
				num = strconv.AppendFloat(nil, roundSignificant(f), 'g', -1, 64)
			}
			out = append(out, num...)
			i = j - 1
		default:
			out = append(out, c)
		}
	}
	return out
}

func isNumberByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9')
}

// roundSignificant rounds f to 6 significant digits.
func roundSignificant(f float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 6, 64), 64)
	if err != nil {
		return f
	}
	return r
}
