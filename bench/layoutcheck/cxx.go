package main

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// cxxShape is the generated C++ library: units of structs, each struct
// instantiated through class templates over the standard containers, so
// that most of its DWARF is what large C++ libraries carry — template
// instances, their member functions, and the standard library's types
// repeated in every unit (docs/benchmarks.md#the-c-object).
type cxxShape struct {
	units   int
	structs int // per unit
}

// fullCXX gives about 5 MiB of .debug_info per unit with g++ 12 -g
// (measured: one unit of 40 structs, 5.0 MB), so 12 units are about 60 MiB,
// over the 50 MiB of C++ debug info the whole-library rows are meant to
// read (docs/benchmarks.md#the-c-object).
var fullCXX = cxxShape{units: 12, structs: 40}

// quickCXX is the quick mode's: one unit, two structs.
var quickCXX = cxxShape{units: 1, structs: 2}

// cxxUnit is the source of unit u: deterministic, a function of its
// arguments only.
func cxxUnit(u, structs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>
namespace u%d {
template <typename T, int N> struct Box {
	T v[N];
	std::array<T, N> a;
	int tag = N;
	T get(int i) const { return v[i %% N]; }
};
template <typename K, typename V> struct Table {
	std::map<K, std::vector<V>> m;
	std::unordered_map<K, std::shared_ptr<V>> h;
	void put(const K &k, const V &v) { m[k].push_back(v); h[k] = std::make_shared<V>(v); }
	std::size_t size() const { return m.size() + h.size(); }
};
template <int I, typename T> struct Rec {
	Box<T, I> b;
	std::tuple<int, Box<char, I>, std::string> t;
	Rec<I - 1, T> next;
};
template <typename T> struct Rec<0, T> { T end; };
`, u)
	for k := range structs {
		fmt.Fprintf(&b, "struct S%d { long a%d; std::string s; Box<int, %d> b; };\n", k, k, k%5+1)
	}
	b.WriteString("std::size_t use() {\n\tstd::size_t n = 0;\n")
	for k := range structs {
		fmt.Fprintf(&b, "\t{ Table<int, Rec<%d, S%d>> t; t.put(%d, Rec<%d, S%d>{}); n += t.size(); }\n", k%6+1, k, k, k%6+1, k)
		fmt.Fprintf(&b, "\t{ Table<std::string, Box<S%d, %d>> t; t.put(\"k\", Box<S%d, %d>{}); n += t.size(); }\n", k, k%4+1, k, k%4+1)
	}
	b.WriteString("\treturn n;\n}\n}\n")
	return b.String()
}

// cxxObject builds (once per content) libcxxbench.so from the generated
// units with `gcc -g -O0` (g++'s cc1plus) and -lstdc++. The cache key is the
// hash of every unit's source and of the compiler's version line, so a
// changed generator or compiler builds anew and an unchanged one never does.
func cxxObject(cache string, shape cxxShape) (string, error) {
	ver, err := cc.Output("--version")
	if err != nil {
		return "", fmt.Errorf("the C compiler's version: %w", err)
	}
	h := sha256.New()
	fmt.Fprintln(h, strings.SplitN(ver, "\n", 2)[0])
	srcs := make([]string, shape.units)
	for u := range shape.units {
		srcs[u] = cxxUnit(u, shape.structs)
		fmt.Fprintf(h, "%d\n%s", len(srcs[u]), srcs[u])
	}
	dir := filepath.Join(cache, fmt.Sprintf("cxx-%x", h.Sum(nil)[:8]))
	out := filepath.Join(dir, "libcxxbench.so")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	slog.Info("compiling the C++ object (once per source and compiler)", "units", shape.units, "dir", dir)
	var objs []string
	var wg sync.WaitGroup
	errs := make(chan error, shape.units)
	sem := make(chan struct{}, runtime.NumCPU())
	for u, text := range srcs {
		name := fmt.Sprintf("u%03d.cc", u)
		obj := strings.TrimSuffix(name, ".cc") + ".o"
		objs = append(objs, obj)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return "", err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := cc.Run(dir, "-c", "-fPIC", "-g", "-O0", "-o", obj, name); err != nil {
				errs <- fmt.Errorf("the C++ object (g++ is needed: apt-get install g++): %w", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := cc.Run(dir, append(append([]string{"-shared", "-o", tmp}, objs...), "-lstdc++")...); err != nil {
		return "", err
	}
	for _, o := range objs {
		os.Remove(filepath.Join(dir, o))
	}
	return out, os.Rename(tmp, out)
}
