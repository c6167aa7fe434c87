package benchenv

import "testing"

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("Median reordered its input: %v", in)
			}
		}
	}
}

func TestLoadAvg(t *testing.T) {
	if got := LoadAvg(); got == "" {
		t.Error("LoadAvg is empty; it says ? when /proc does not answer")
	}
}
