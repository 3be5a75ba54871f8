package runtime

import (
	"github.com/keelgen/keel/internal/question"
	"github.com/keelgen/keel/internal/schemamodel"
)

// questionOf is the question a person reads to approve a call of t with
// args (ApprovalRequest.Question): the tool's wording, and the whole call,
// its writeOnly members shown as set, never their values; and its brief,
// each string cut at brief characters.
func (t *Tool) questionOf(args []byte, brief int) (whole, short string) {
	tool := question.Tool{Name: t.info.Name, Title: t.info.Title, Version: t.info.Version, Approve: t.info.Approve}
	if t.sensitive {
		if root := t.inputForDetails(); root != nil {
			tool.Input = shapeOf(root, schemamodel.DefsOf(root))
		}
	}
	whole = question.Render(tool, args)
	if short, cut := question.Brief(tool, args, brief); cut {
		return whole, short
	}
	return whole, whole
}

// shape is an input schema at one place of the arguments, as the question
// reads it: its $refs resolved, a use's writeOnly laid over what it names.
type shape struct {
	s    *schemamodel.Schema
	defs schemamodel.Defs
}

// shapeOf is s as a question.Schema; nil (no interface holding a nil) for
// a place the schema says nothing of.
func shapeOf(s *schemamodel.Schema, defs schemamodel.Defs) question.Schema {
	if s = defs.Of(s); s == nil {
		return nil
	}
	return shape{s, defs}
}

func (n shape) Member(name string) question.Schema { return shapeOf(n.s.Property(name), n.defs) }
func (n shape) Items() question.Schema             { return shapeOf(n.s.Items, n.defs) }
func (n shape) Sensitive() bool                    { return string(n.s.Keyword("writeOnly")) == "true" }

// approveMembers checks t's approval wording against its arguments'
// members.
func (t *Tool) approveMembers() string {
	root := t.inputForDetails()
	if root == nil {
		return "cannot be checked: the input schema does not read"
	}
	return question.ApproveMembers(t.info.Approve, root.PropertyNames())
}
