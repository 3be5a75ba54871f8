package model

import (
	"go/types"
	"reflect"
	"strings"
)

// JSONName is how json v2 lays out the struct field f, whose struct tag is
// tag: its member name, its json tag options, and whether json leaves it
// out (json:"-", or unexported and not embedded). An embedded field whose
// tag names nothing has name "": its struct's members are promoted.
func JSONName(f *types.Var, tag string) (name string, opts []string, skip bool) {
	v := reflect.StructTag(tag).Get("json")
	if v == "-" || (!f.Exported() && !f.Embedded()) {
		return "", nil, true
	}
	name, rest, _ := strings.Cut(v, ",")
	if rest != "" {
		opts = strings.Split(rest, ",")
	}
	if name == "" && !f.Embedded() {
		name = f.Name()
	}
	return name, opts, false
}
