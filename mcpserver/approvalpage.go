package mcpserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/keelgen/keel/mcpserver/approvalstore"
)

// Approver is a person the approval page serves: who they are, and whose
// calls they may approve.
type Approver struct {
	Name string
	// May reports whether they may decide the calls of principal in
	// tenant; nil decides none.
	May func(tenant, principal string) bool
	// Tenants are the tenants whose waiting calls their list reads, each
	// from the store's index of that tenant (May still decides which of
	// them it shows): nil is the one tenant "" of a server that names none.
	// Another tenant's callers, however many calls they leave waiting,
	// take no place in the list.
	Tenants []string
}

func (a Approver) may(p approvalstore.Approval) bool {
	return a.May != nil && a.May(p.Tenant, p.Principal)
}

// PageOptions configure ApprovalPage.
type PageOptions struct {
	// Approver names the person behind a request by the server owner's own
	// sign-in (a session cookie, a header the owner's proxy sets); false
	// answers 401. Required: the page serves no one it cannot name.
	Approver func(r *http.Request) (Approver, bool)
	// Logger receives each decision: who decided what, for whom (default
	// slog.Default()).
	Logger *slog.Logger
}

//go:embed approvalpage.html
var pageFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(pageFiles, "approvalpage.html"))

// ApprovalPage serves a's approval page at the path of a.PageURL: there an
// approver lists the calls waiting for a person that they may decide, reads
// each one's question (the executor's rendering of the whole call, as
// every door shows it) and approves or denies it, once. An approval becomes
// the grant of exactly that call; the call runs when its client sends it
// again. The page is HTML from html/template with no script, sent with a
// Content-Security-Policy that allows none; a decision is a POST from the
// page itself (same origin, and a token bound to the approval and the
// approver); no value of a call is ever in an address.
func ApprovalPage(a *Approvals, opts PageOptions) (http.Handler, error) {
	switch {
	case a == nil || a.Pending == nil:
		return nil, errors.New("mcpserver: ApprovalPage: the Approvals have no Pending store")
	case opts.Approver == nil:
		return nil, errors.New("mcpserver: ApprovalPage: PageOptions.Approver is nil; the page serves no one it cannot name")
	}
	u, err := url.Parse(a.PageURL)
	if err != nil || !u.IsAbs() || !strings.HasSuffix(u.Path, "/") {
		return nil, errors.New("mcpserver: ApprovalPage: Approvals.PageURL must be an absolute URL whose path ends in /")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &approvalPage{a: a, who: opts.Approver, prefix: u.Path, origin: u.Scheme + "://" + u.Host, log: log}, nil
}

type approvalPage struct {
	a      *Approvals
	who    func(*http.Request) (Approver, bool)
	prefix string // the page's path
	origin string // the page's origin, which a decision's POST must come from
	log    *slog.Logger
}

// maxListed bounds the approvals one listing shows.
const maxListed = 100

func (p *approvalPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a browser send Origin: null with the page's own POST
	h.Set("Cache-Control", "no-store")
	id, ok := strings.CutPrefix(r.URL.Path, p.prefix)
	if !ok || strings.Contains(id, "/") {
		http.NotFound(w, r)
		return
	}
	who, ok := p.who(r)
	if !ok || who.Name == "" {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	switch {
	case id == "" && r.Method == http.MethodGet:
		p.list(w, r, who)
	case id != "" && r.Method == http.MethodGet:
		p.show(w, r, who, id, "")
	case id != "" && r.Method == http.MethodPost:
		p.decide(w, r, who, id)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// pageView is what the template shows.
type pageView struct {
	Approver string
	List     []approvalstore.Approval
	One      *approvalstore.Approval
	Token    string
	Said     string // what the last decision did
	Prefix   string
}

func (p *approvalPage) list(w http.ResponseWriter, r *http.Request, who Approver) {
	tenants := who.Tenants
	if tenants == nil {
		tenants = []string{""}
	}
	view := pageView{Approver: who.Name, List: []approvalstore.Approval{}, Prefix: p.prefix}
	for _, tenant := range tenants {
		waiting, err := p.a.Pending.Waiting(r.Context(), tenant, 4*maxListed)
		if err != nil {
			p.log.LogAttrs(r.Context(), slog.LevelError, "keel: the approval store could not list", slog.Any("error", err))
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		for _, a := range waiting {
			if a.Tenant == tenant && who.may(a) {
				view.List = append(view.List, a)
			}
		}
	}
	slices.SortFunc(view.List, func(a, b approvalstore.Approval) int { return a.Created.Compare(b.Created) })
	view.List = view.List[:min(len(view.List), maxListed)]
	p.render(w, http.StatusOK, view)
}

func (p *approvalPage) show(w http.ResponseWriter, r *http.Request, who Approver, id, said string) {
	a, err := p.a.Pending.Approval(r.Context(), id)
	if err != nil || !who.may(a) {
		http.NotFound(w, r) // another approver's, or none: the same answer
		return
	}
	p.render(w, http.StatusOK, pageView{Approver: who.Name, One: &a, Token: p.token(id, who.Name), Said: said, Prefix: p.prefix})
}

func (p *approvalPage) decide(w http.ResponseWriter, r *http.Request, who Approver, id string) {
	if !p.sameOrigin(r) {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil || !hmac.Equal([]byte(r.PostForm.Get("token")), []byte(p.token(id, who.Name))) {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	a, err := p.a.Pending.Approval(r.Context(), id)
	if err != nil || !who.may(a) {
		http.NotFound(w, r)
		return
	}
	var approve bool
	switch r.PostForm.Get("decision") {
	case "approve":
		approve = true
	case "deny":
	default:
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	decided, first, err := p.a.decide(r.Context(), id, approve, who.Name)
	if err != nil {
		p.log.LogAttrs(r.Context(), slog.LevelError, "keel: an approval could not be decided", slog.String("approval", id), slog.Any("error", err))
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if !first {
		w.WriteHeader(http.StatusConflict)
		p.render(w, -1, pageView{Approver: who.Name, One: &decided, Said: "This call was decided before; a decision is made once.", Prefix: p.prefix})
		return
	}
	p.log.LogAttrs(r.Context(), slog.LevelInfo, "keel: approval decided", slog.String("approval", id), slog.String("decision", decided.Decision),
		slog.String("approver", who.Name), slog.String("tenant", a.Tenant), slog.String("principal", a.Principal),
		slog.String("tool", a.Request.Tool), slog.String("call_id", a.Request.CallID), slog.String("arguments_digest", a.Request.ArgumentsDigest))
	said := "Denied. The call will not run."
	if approve {
		said = "Approved. The call runs once, when its client sends it again."
	}
	p.render(w, http.StatusOK, pageView{Approver: who.Name, One: &decided, Said: said, Prefix: p.prefix})
}

// sameOrigin reports whether a POST comes from the page's own origin, by
// what the browser says of it.
func (p *approvalPage) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	origin := r.Header.Get("Origin")
	return origin == "" || origin == p.origin
}

// token binds a decision's form to the approval and the approver: a page
// of another approver, or of another approval, cannot post it.
func (p *approvalPage) token(id, approver string) string {
	m := hmac.New(sha256.New, p.a.secret)
	m.Write([]byte("keel/approval-page/v1\x00"))
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write([]byte(approver))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (p *approvalPage) render(w http.ResponseWriter, status int, v pageView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status > 0 {
		w.WriteHeader(status)
	}
	pageTemplate.Execute(w, v)
}
