package dashboards

//go:generate go tool keelgen -out generated

import (
	"context"
	"fmt"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/wire"
)

// SearchArgs are a search's terms.
type SearchArgs struct {
	// Part of a title, in any case.
	Query string `json:"query" jsonschema:"minLength=1,maxLength=200"`
	// How many come back (1 to 100; all when absent).
	Limit int `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100"`
}

// Lists what matched.
type SearchResult struct {
	// The matches, in the store's order.
	Dashboards []Dashboard `json:"dashboards"`
}

// MCPText is the sentence an MCP client shows, as the server wrote it
// before the move; the data stays structuredContent.
func (r SearchResult) MCPText() string { return fmt.Sprintf("%d dashboards match.", len(r.Dashboards)) }

// Finds dashboards by title.
//
//keel:tool name=search_dashboards version=1.4.0 effect=read lax=numbers
//keel:icon src=https://grafana.example/icons/search.svg mime=image/svg+xml sizes=any
func SearchDashboards(ctx context.Context, in SearchArgs) (SearchResult, error) {
	return SearchResult{Dashboards: Find(in.Query, in.Limit)}, nil
}

// AnnotationArgs say what to note where.
type AnnotationArgs struct {
	// The dashboard.
	DashboardUID string `json:"dashboard_uid" jsonschema:"minLength=1,maxLength=100"`
	// The note.
	Text string `json:"text" jsonschema:"minLength=1,maxLength=2000"`
}

// The note as stored.
type Annotation struct {
	// Names the dashboard.
	DashboardUID string `json:"dashboard_uid"`
	// How many notes the dashboard has now.
	Count int `json:"count"`
}

// Adds a note to a dashboard.
//
//keel:tool name=create_annotation version=1.2 effect=write errors=dashboard_not_found
//keel:icon src=https://grafana.example/icons/note.png mime=image/png sizes=48x48 theme=dark
//keel:meta ui={"resourceUri":"ui://dashboards/annotate"}
func CreateAnnotation(ctx context.Context, in AnnotationArgs) (Annotation, error) {
	n, ok := Annotate(in.DashboardUID, in.Text)
	if !ok {
		return Annotation{}, runtime.Fail("dashboard_not_found", "No dashboard has this uid; search for it first.")
	}
	return Annotation{DashboardUID: in.DashboardUID, Count: n}, nil
}

// FileArgs say which dashboard to file where.
type FileArgs struct {
	// The dashboard.
	UID string `json:"uid" jsonschema:"minLength=1,maxLength=100"`
	// The folder to move it to; null moves it to the root, absent leaves it where it is.
	Folder wire.Nullable[string] `json:"folder,omitzero" jsonschema:"minLength=1,maxLength=100"`
}

// Moves a dashboard into a folder, or out of every folder.
//
//keel:tool name=file_dashboard version=1.0 effect=write errors=dashboard_not_found
func FileDashboard(ctx context.Context, in FileArgs) (Dashboard, error) {
	folder, _ := in.Folder.Get() // "" when null or absent
	d, ok := File(in.UID, folder, in.Folder.IsNull())
	if !ok {
		return Dashboard{}, runtime.Fail("dashboard_not_found", "No dashboard has this uid; search for it first.")
	}
	return d, nil
}

// A variable's value: text, a number or a flag.
//
//keel:union
type Value struct {
	Text   *string
	Number *float64
	Flag   *bool
}

// VariableArgs say which variable of which dashboard to set to what.
type VariableArgs struct {
	// The dashboard.
	UID string `json:"uid" jsonschema:"minLength=1,maxLength=100"`
	// The variable's name.
	Name string `json:"name" jsonschema:"minLength=1,maxLength=100"`
	// Its new value.
	Value Value `json:"value"`
}

// Sets a dashboard variable to text, a number or a flag.
//
//keel:tool name=set_variable version=1.0 effect=write errors=dashboard_not_found
func SetDashboardVariable(ctx context.Context, in VariableArgs) (VariableArgs, error) {
	var value any
	switch v := in.Value; {
	case v.Text != nil:
		value = *v.Text
	case v.Number != nil:
		value = *v.Number
	case v.Flag != nil:
		value = *v.Flag
	}
	if !SetVariable(in.UID, in.Name, value) {
		return VariableArgs{}, runtime.Fail("dashboard_not_found", "No dashboard has this uid; search for it first.")
	}
	return in, nil
}
