package stats

import "math"

// RegIncBeta is the regularized incomplete beta function I_x(a, b), the
// distribution function of a Beta(a, b) variable at x, from which the
// Student t and F distributions below follow. It evaluates the continued
// fraction of Numerical Recipes (modified Lentz), on whichever side of the
// mean it converges fast.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) - (la + lb - lab))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

func betaFraction(a, b, x float64) float64 {
	const (
		// Convergence takes about sqrt(max(a, b)) terms: enough for
		// degrees of freedom in the millions.
		maxTerms = 20000
		epsilon  = 1e-15
		tiny     = 1e-300
	)
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= maxTerms; m++ {
		even := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / guard(1+even*d)
		c = guard(1 + even/c)
		h *= d * c
		odd := -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / guard(1+odd*d)
		c = guard(1 + odd/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < epsilon {
			break
		}
	}
	return h
}

// StudentTCDF is P(T ≤ t) for Student's t distribution with df degrees of
// freedom.
func StudentTCDF(t, df float64) float64 {
	tail := 0.5 * RegIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentTQuantile is the t with P(T ≤ t) = p for df degrees of freedom
// (0 < p < 1), found by bisection on StudentTCDF: a few dozen evaluations,
// and a report needs only a handful of quantiles.
func StudentTQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		lo, hi = hi, hi*2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// FSurvival is P(F > f) for the F distribution with d1 and d2 degrees of
// freedom: the p-value of an F test.
func FSurvival(f, d1, d2 float64) float64 {
	if f <= 0 {
		return 1
	}
	return RegIncBeta(d2/2, d1/2, d2/(d2+d1*f))
}
