package waiver

import "testing"

// FuzzParse: any bytes are a set of waivers or one error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("[[waiver]]\nstruct = \"a\\\"[[[[\"\n"))
	f.Add([]byte("x = [[[[[[[[[[1]]]]]]]]]]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.toml", data)
		if err == nil {
			for _, w := range s.Waivers {
				if w.Rule == "" || w.Who == "" || w.Why == "" || w.Until.IsZero() {
					t.Fatalf("accepted an incomplete waiver %+v", w)
				}
			}
		}
	})
}
