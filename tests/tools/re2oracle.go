// re2oracle.go - Go's regexp package (RE2 syntax and semantics) as the oracle for buildtrace's
// relabeling regexes: each input line is "PATTERN<TAB>TEXT<TAB>TEMPLATE", every field hex-encoded;
// the pattern is anchored as Prometheus anchors relabeling regexes ("^(?:" + PATTERN + ")$"). Each
// output line is "E" (Go refuses the pattern), "N" (no match) or "M START END ... HEX": the spans of
// the whole match and of each group (-1 -1 when a group took no part), then TEMPLATE expanded with
// Regexp.ExpandString, hex-encoded.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func field(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad hex:", s)
		os.Exit(2)
	}
	return string(b)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		f := strings.Split(in.Text(), "\t")
		if len(f) != 3 {
			fmt.Fprintln(os.Stderr, "expected three fields:", in.Text())
			os.Exit(2)
		}
		pat, text, tmpl := field(f[0]), field(f[1]), field(f[2])
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			fmt.Fprintln(out, "E")
			continue
		}
		m := re.FindStringSubmatchIndex(text)
		if m == nil {
			fmt.Fprintln(out, "N")
			continue
		}
		fmt.Fprint(out, "M")
		for _, v := range m {
			fmt.Fprintf(out, " %d", v)
		}
		exp := re.ExpandString(nil, tmpl, text, m)
		fmt.Fprintf(out, " %s\n", hex.EncodeToString(exp))
	}
}
