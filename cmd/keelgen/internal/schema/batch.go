package schema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// batchDir is where a batch's program seems to live, beside the first
// package: a name an import path may hold, as its units are imported.
const batchDir = "keelgen-schema-batch"

// Batch reflects several packages of one module with one schema program:
// each package is a unit of its own (its declarations as Program's
// program has them), and one main prints every unit's Reflect. What it
// gives each package is what Program's run would print for it; keelgen's
// tests share one run across their cases.
func Batch(pkgs []*model.Package) ([]Reflected, error) {
	if len(pkgs) == 0 {
		return nil, nil
	}
	dir, base := pkgs[0].Dir, pkgs[0].Paths[0]
	program := map[string][]byte{}
	var units []string
	for _, pkg := range pkgs {
		// A unit is named after its package's paths, not its place: a case
		// added or changed recompiles its own unit, not every one after it.
		name := fmt.Sprintf("unit%x", sha256.Sum256([]byte(strings.Join(pkg.Paths, " "))))[:16]
		path := base + "/" + batchDir + "/" + name
		f := jen.NewFilePathName(path, name)
		f.NoFormat = true
		f.HeaderComment(files.Header)
		declare(f, pkg)
		src, err := rendered(f)
		if err != nil {
			return nil, err
		}
		program[batchDir+"/"+name+"/unit.go"] = src
		units = append(units, path)
	}
	f := jen.NewFile("main")
	f.NoFormat = true
	f.HeaderComment(files.Header)
	f.Comment("keelgen's throwaway schema program for a batch: it prints each unit's schemas, in order.")
	f.Func().Id("main").Params().Block(printed(jen.Index().Any().ValuesFunc(func(g *jen.Group) {
		for _, u := range units {
			g.Qual(u, "Reflect").Call()
		}
	}))...)
	src, err := rendered(f)
	if err != nil {
		return nil, err
	}
	program[batchDir+"/main.go"] = src
	raw, err := run(dir, program, batchDir)
	if err != nil {
		return nil, err
	}
	var each []json.RawMessage
	if err := json.Unmarshal(raw, &each); err != nil || len(each) != len(pkgs) {
		return nil, fmt.Errorf("reading a batch's reflected schemas: %d of %d units, %v", len(each), len(pkgs), err)
	}
	out := make([]Reflected, len(each))
	for i, r := range each {
		out[i] = Reflected(r)
	}
	return out, nil
}
