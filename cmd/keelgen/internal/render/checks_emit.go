package render

import (
	"encoding/json"
	"math/big"

	"github.com/dave/jennifer/jen"
)

// The emitters print a plan of checks (checks.go) against the value x; they
// raise no diagnostic and ask go/types nothing.

// emitStringChecks prints the checks of the string s.
func emitStringChecks(cs []check, s jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range cs {
		switch c.keyword {
		case "enum", "const":
			out = append(out, emitEnum(c, s))
		case "not":
			if len(c.values) > 0 {
				out = append(out, jen.Switch(s).Block(jen.Case(literals(c.values)...).Block(returnWireFail("not"))))
			}
		case "minLength", "maxLength":
			out = append(out, failIf(jen.Qual(wirePkg, "Length").Call(s).Op(c.op).Lit(c.n), c.keyword))
		case "pattern":
			out = append(out, failIf(jen.Op("!").Id(c.pattern).Dot("MatchString").Call(s), c.keyword))
		case "format":
			out = append(out, ifErr(jen.Qual(wirePkg, "CheckFormat").Call(jen.Lit(c.text), s)))
		case "formatMinimum", "formatExclusiveMinimum", "formatMaximum", "formatExclusiveMaximum":
			if c.decimal {
				out = append(out, ifErr(jen.Qual(wirePkg, "DecimalBound").Call(s, jen.Lit(c.keyword), jen.Lit(c.text))))
			} else {
				out = append(out, ifErr(jen.Qual(wirePkg, "DurationBound").Call(s, jen.Lit(c.keyword), durationCode(c.dur))))
			}
		}
	}
	return out
}

// emitIntChecks prints the checks of the integer x.
func emitIntChecks(cs []check, x jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range cs {
		switch {
		case c.keyword == "enum" || c.keyword == "const":
			out = append(out, emitEnum(c, x))
		case c.always:
			out = append(out, returnWireFail(c.keyword))
		case c.nonZero:
			out = append(out, failIf(jen.Add(x).Op("!=").Lit(0), c.keyword))
		case c.keyword == "multipleOf":
			out = append(out, failIf(jen.Add(x).Op("%").Add(intLit(c.int)).Op("!=").Lit(0), c.keyword))
		default:
			out = append(out, failIf(jen.Add(x).Op(c.op).Add(intLit(c.int)), c.keyword))
		}
	}
	return out
}

// emitFloatChecks prints the checks of the float x (as float64), lit being
// the number's literal.
func emitFloatChecks(cs []check, x, lit jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range cs {
		switch c.keyword {
		case "minimum":
			out = append(out, ifErr(jen.Qual(wirePkg, "Minimum").Call(x, jen.Lit(c.float), jen.Lit(c.text), lit)))
		case "exclusiveMinimum":
			out = append(out, ifErr(jen.Qual(wirePkg, "ExclusiveMinimum").Call(x, jen.Lit(c.float))))
		case "maximum":
			out = append(out, ifErr(jen.Qual(wirePkg, "Maximum").Call(x, jen.Lit(c.float), jen.Lit(c.text), lit)))
		case "exclusiveMaximum":
			out = append(out, ifErr(jen.Qual(wirePkg, "ExclusiveMaximum").Call(x, jen.Lit(c.float))))
		case "multipleOf":
			out = append(out, ifErr(jen.Qual(wirePkg, "MultipleOf").Call(jen.Lit(c.text), lit)))
		case "enum", "const":
			if c.always {
				out = append(out, returnWireFail(c.keyword))
				continue
			}
			var anyOf *jen.Statement
			for i, v := range c.values {
				eq := jen.Qual(wirePkg, "EqualNumber").Call(lit, jen.Lit(string(v.(json.Number))))
				if i == 0 {
					anyOf = jen.Add(eq)
				} else {
					anyOf = anyOf.Op("||").Add(eq)
				}
			}
			out = append(out, failIf(jen.Op("!").Parens(anyOf), c.keyword))
		}
	}
	return out
}

// emitBoolChecks prints enum or const on the boolean x.
func emitBoolChecks(cs []check, x jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range cs {
		out = append(out, emitEnum(c, x))
	}
	return out
}

// emitCountChecks prints a container's size bounds, length being its size.
func emitCountChecks(cs []check, length jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range cs {
		out = append(out, failIf(jen.Add(length).Op(c.op).Lit(c.n), c.keyword))
	}
	return out
}

// emitUnique prints uniqueItems over the list.
func emitUnique(cs []check, list jen.Code) []jen.Code {
	var out []jen.Code
	for range cs {
		out = append(out, ifErr(jen.Qual(wirePkg, "Unique").Call(list)))
	}
	return out
}

// emitEnum switches over an enum's literals; with none, the value fails.
func emitEnum(c check, v jen.Code) jen.Code {
	if c.always {
		return returnWireFail(c.keyword)
	}
	return jen.Switch(v).Block(
		jen.Case(literals(c.values)...),
		jen.Default().Block(returnWireFail(c.keyword)),
	)
}

// literals are values of an enum, a const or a not as Go literals.
func literals(values []any) []jen.Code {
	var lits []jen.Code
	for _, x := range values {
		switch x := x.(type) {
		case *big.Int:
			lits = append(lits, intLit(x))
		default:
			lits = append(lits, jen.Lit(x))
		}
	}
	return lits
}

// returnWireFail prints the failed check of keyword: return wire.Fail("keyword").
func returnWireFail(keyword string) jen.Code {
	return jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit(keyword)))
}
